//! Real key events driving the table, the filter, freeze and the boxes that act on tasks.

use super::*;

/// New rows sorted above the selected one do not move the selection to another task.
#[test]
fn selection_follows_the_task_when_rows_arrive_above() {
    let mut app = app(demo_store());
    render(&mut app, 160, 48);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    let chosen = app.selected().cloned().expect("a selection");
    let before = app.selected_index().unwrap();
    for i in 0..3 {
        add(
            app.store_mut(),
            RUNNER,
            &format!("0000000{i}-new"),
            CTX,
            "TASK_STATE_INPUT_REQUIRED",
            "which flaky test should I skip?",
            NOW - 1,
        );
    }
    let terminal = render(&mut app, 160, 48);
    assert_eq!(app.selected(), Some(&chosen), "the selection stays on its task");
    assert_eq!(app.selected_index(), Some(before + 3), "and moves down with it");
    let buffer = terminal.backend().buffer();
    let y = row_of(buffer, &chosen.id[..8]);
    assert_eq!(
        buffer[(2, y)].bg,
        app.theme().selection,
        "its row is the highlighted one"
    );
    let others = (0..buffer.area.height)
        .filter(|&y| buffer[(2, y)].bg == app.theme().selection)
        .count();
    assert_eq!(others, 1, "one row is highlighted");
}

#[test]
fn freeze_counts_new_rows() {
    let mut app = app(demo_store());
    render(&mut app, 160, 48);
    let rows = app.rows().to_vec();
    press(&mut app, KeyCode::Char('f'));
    for i in 0..3 {
        add(
            app.store_mut(),
            DEPLOYER,
            &format!("f{i}000000-new"),
            CTX,
            "TASK_STATE_WORKING",
            "deploying",
            NOW,
        );
    }
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        assert_eq!(app.rows(), rows, "frozen rows stay as they were");
        let buffer = terminal.backend().buffer();
        assert!(find(buffer, "+3 new").is_some(), "{w}x{h}:\n{}", terminal.backend());
        assert!(find(buffer, "f0000000").is_none(), "{w}x{h}: new rows wait");
    }
    insta::assert_snapshot!("frozen_80x24", render(&mut app, 80, 24).backend());
    press(&mut app, KeyCode::Char('f'));
    let terminal = render(&mut app, 160, 48);
    assert_eq!(app.rows().len(), rows.len() + 3, "thawed: the new rows are in");
    assert!(find(terminal.backend().buffer(), "+3 new").is_none());
}

#[test]
fn typing_a_filter_narrows_the_rows() {
    let mut app = app(demo_store());
    render(&mut app, 160, 48);
    let all = app.rows().len();
    assert!(press(&mut app, KeyCode::Char('/')));
    type_text(&mut app, "agent:deployer");
    let terminal = render(&mut app, 160, 48);
    assert_eq!(app.rows().len(), 2, "the deployer's two tasks");
    let text = screen_text(terminal.backend().buffer());
    assert!(
        text.contains("/ agent:deployer"),
        "the filter is shown as typed:\n{text}"
    );
    assert!(!text.contains(&WORKING[..8]), "the test runs are filtered out:\n{text}");
    // `q` while typing is text, not quit.
    type_text(&mut app, " !q");
    assert!(!app.quitting());
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, " state:interrupted");
    render(&mut app, 160, 48);
    assert_eq!(app.rows(), [key(DEPLOYER, APPROVAL)]);
    // Enter keeps the filter and closes the box; Esc then clears it.
    press(&mut app, KeyCode::Enter);
    assert!(app.popups().is_empty());
    let terminal = render(&mut app, 80, 24);
    insta::assert_snapshot!("filtered_80x24", terminal.backend());
    assert_eq!(app.rows().len(), 1);
    press(&mut app, KeyCode::Esc);
    render(&mut app, 160, 48);
    assert_eq!(app.rows().len(), all);
}

#[test]
fn a_filter_that_matches_nothing_says_so() {
    let mut app = app(demo_store());
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "state:completed agent:assistant");
    let terminal = render(&mut app, 80, 24);
    assert!(app.rows().is_empty());
    assert!(find(terminal.backend().buffer(), "No task matches the filter").is_some());
}

#[test]
fn the_input_box_keeps_a_failed_answer_for_a_retry() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "release/2026.10");
    snapshot_sizes("input_box", &mut app);
    app.set_now(ts(NOW + 1));
    press(&mut app, KeyCode::Enter);
    let (agent, command) = app.take_outbox().pop().expect("the answer goes to the engine");
    let crate::event::Command::Send { action, request } = command else {
        panic!("a send")
    };
    assert_eq!(agent, REVIEWER);
    assert_eq!(request.message.task_id.as_deref(), Some(QUESTION));
    assert_eq!(
        request.message.context_id.as_deref(),
        Some("49c5a238-6e1f-4d2c-b3a4-5f6e7d8c9b0a")
    );
    let first_id = request.message.message_id.clone();
    let failed = crate::event::ActionOutcome::Failed {
        message: "code-reviewer: cannot connect".into(),
    };
    let change = app.store_mut().apply(Event::Action {
        agent,
        action,
        outcome: failed,
        call: None,
    });
    app.on_changes(&[change]);
    let boxed = app.popup::<AnswerBox>().expect("the box stays");
    assert_eq!(boxed.text(), "release/2026.10");
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(text.contains("cannot connect") && text.contains("retries"), "{text}");
    insta::assert_snapshot!("input_box_failed_80x24", terminal.backend());
    // The retry carries the same messageId: an agent that deduplicates answers once.
    press(&mut app, KeyCode::Enter);
    let (_, retry) = app.take_outbox().pop().expect("retried");
    let crate::event::Command::Send { request, .. } = retry else {
        panic!("a send")
    };
    assert_eq!(request.message.message_id, first_id);
}

#[test]
fn an_answer_to_a_question_someone_else_answered_is_not_sent() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "main");
    let change = app.store_mut().apply(status_update(
        REVIEWER,
        QUESTION,
        "49c5a238-6e1f-4d2c-b3a4-5f6e7d8c9b0a",
        "TASK_STATE_WORKING",
        "comparing",
        NOW - 1,
    ));
    app.on_changes(&[change]);
    press(&mut app, KeyCode::Enter);
    assert!(app.steer().outbox.is_empty(), "nothing sent");
    let notice = app
        .popup::<AnswerBox>()
        .and_then(|b| b.notice.clone())
        .unwrap_or_default();
    assert!(
        notice.contains("someone else answered") && notice.contains("WORKING"),
        "{notice}"
    );
}

#[test]
fn extension_approvals_show_the_held_call_and_confirm_before_sending() {
    let mut s = demo_store();
    let approval = with_extension_approval(&mut s);
    let mut app = app(s);
    app.select(approval.clone());
    focus_approvals(&mut app);
    snapshot_sizes("approvals_with_extension_focused", &mut app);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Pane::Tasks, "back to the tasks, where the selection is");
    let terminal = render(&mut app, 160, 48);
    assert!(screen_text(terminal.backend().buffer()).contains("github / create_pull_request  a approve · d deny"));
    press(&mut app, KeyCode::Char('a'));
    assert!(app.steer().outbox.is_empty(), "nothing before the confirmation");
    snapshot_sizes("confirm_approve", &mut app);
    press(&mut app, KeyCode::Char('y'));
    let (agent, crate::event::Command::Send { request, .. }) = app.take_outbox().pop().unwrap() else {
        panic!()
    };
    assert_eq!(agent, ASSISTANT);
    let v = serde_json::to_value(&request.message).unwrap();
    assert_eq!(v["parts"][0]["data"], json!({"approved": true}));
    assert_eq!(
        v["metadata"][crate::a2a::INTERACTIONS_EXTENSION]["interactionId"],
        "eff_01J"
    );
    assert_eq!(
        v["messageId"], "answer:eff_01J:approve",
        "the idempotency key names the interaction and the answer"
    );
}

#[test]
fn cancel_asks_first_naming_the_task() {
    let mut app = app(demo_store());
    app.select(key(RUNNER, WORKING));
    press(&mut app, KeyCode::Char('x'));
    let terminal = render(&mut app, 80, 24);
    assert!(screen_text(terminal.backend().buffer()).contains("Cancel task 3d8f7801 (WORKING) on test-runner?"));
    insta::assert_snapshot!("confirm_cancel_80x24", terminal.backend());
    press(&mut app, KeyCode::Char('n'));
    assert!(
        app.steer().outbox.is_empty() && app.popup::<Confirm>().is_none(),
        "no sends nothing"
    );
}

#[test]
fn inbox_and_new_task_forms() {
    let mut app = app(demo_store());
    press(&mut app, KeyCode::Char('i'));
    snapshot_sizes("inbox", &mut app);
    press(&mut app, KeyCode::Esc);
    app.select(key(DEPLOYER, APPROVAL));
    press(&mut app, KeyCode::Char('n'));
    type_text(&mut app, "deploy build 2026.10.07-2 to staging");
    snapshot_sizes("new_task", &mut app);
    press(&mut app, KeyCode::Enter);
    let (agent, crate::event::Command::Send { request, .. }) = app.take_outbox().pop().unwrap() else {
        panic!()
    };
    assert_eq!(agent, DEPLOYER, "on the selected task's agent");
    assert_eq!(
        request.message.context_id.as_deref(),
        Some("9e8e6bcf-1a2b-4c3d-8e4f-5a6b7c8d9e0f"),
        "and its context"
    );
    assert_eq!(request.message.task_id, None, "a new task");
}

/// A click goes to the pane under it, as drawn: a table row is selected, the approvals pane
/// takes the focus (and Tab moves it back).
#[test]
fn a_click_selects_the_row_or_focuses_the_pane_under_it() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut app = app(demo_store());
    let terminal = render(&mut app, 160, 48);
    let click = |app: &mut App, column: u16, row: u16| {
        let ev = MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        };
        on_terminal_event(app, TermEvent::Mouse(ev))
    };
    let third = app.row(2).cloned().expect("three rows");
    let tasks = view::areas(app.screen(), &app).of(Pane::Tasks);
    // Below the border and the header row: the third body row.
    assert!(click(&mut app, tasks.x + 5, tasks.y + 4));
    assert_eq!(app.selected(), Some(&third), "{}", terminal.backend());
    let approvals = view::areas(app.screen(), &app).of(Pane::Approvals);
    assert!(approvals.height > 0, "the demo has approvals waiting");
    assert!(click(&mut app, approvals.x + 3, approvals.y + 1));
    assert_eq!(app.focus(), Pane::Approvals);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Pane::Tasks);
    // The title is no pane to act on.
    assert!(!click(&mut app, 3, 0));
    assert_eq!(app.selected(), Some(&third));
}

/// In the new-task form the agent keys choose the agent in its agent field and move the cursor
/// in its text fields; remapped, the new key does both, and the old one types.
#[test]
fn the_agent_keys_choose_the_agent_or_move_the_cursor_by_field() {
    let mut app = app(demo_store());
    app.set_keys(KeyMap::with_overrides([(Some("new_task"), "ctrl-n", "next_agent")]).unwrap());
    app.select(key(RUNNER, COMPLETED));
    press(&mut app, KeyCode::Char('n'));
    type_text(&mut app, "ab");
    on_terminal_event(
        &mut app,
        TermEvent::Key(KeyEvent::new(KeyCode::Left, KeyModifiers::NONE)),
    );
    type_text(&mut app, "X");
    let ctrl_n = TermEvent::Key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::CONTROL));
    on_terminal_event(&mut app, ctrl_n.clone());
    let form = app.popup::<NewTask>().expect("the form");
    assert_eq!(form.message.lines(), ["aXb"], "← moved the cursor in the message");
    assert_eq!(form.agent, RUNNER, "the agent stays while the message has the focus");
    // Message → context → agent.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    on_terminal_event(&mut app, ctrl_n);
    assert_eq!(
        app.popup::<NewTask>().unwrap().agent,
        RUNNER + 1,
        "ctrl-n chose the next agent"
    );
    press(&mut app, KeyCode::Right);
    assert_eq!(app.popup::<NewTask>().unwrap().agent, RUNNER + 2, "→ still does");
    press(&mut app, KeyCode::Left);
    assert_eq!(app.popup::<NewTask>().unwrap().agent, RUNNER + 1);
}
