//! A quiet stream says so in the STATUS column; a task waiting on a person is quiet by nature
//! (issue 20), and its FOR column already says how long it has waited.

use super::*;

#[test]
fn a_task_waiting_on_a_person_is_not_marked_quiet() {
    let mut s = demo_store();
    for (agent, task) in [(RUNNER, WORKING), (REVIEWER, QUESTION), (DEPLOYER, APPROVAL)] {
        s.apply(Event::Quiet {
            agent,
            task: task.into(),
            since: ts(NOW - 42),
        });
    }
    let mut app = app(s);
    let terminal = render(&mut app, 160, 48);
    let buffer = terminal.backend().buffer();
    let row = |text: &str| {
        let y = row_of(buffer, text);
        screen_text(buffer)
            .lines()
            .nth(y as usize)
            .unwrap_or_default()
            .to_string()
    };
    assert!(row(PROGRESS).contains("quiet 0:42 · "), "{}", row(PROGRESS));
    let question = row("Which base branch");
    assert!(!question.contains("quiet"), "{question}");
    let approval = row("An operator must");
    assert!(!approval.contains("quiet"), "{approval}");
    snapshot_sizes("quiet_and_waiting", &mut app);
}
