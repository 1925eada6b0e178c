//! The steering side actions: bell, desktop notification and terminal title as tasks move,
//! Esc "later", the inbox's moves, pasting into the boxes, and Ctrl-C inside a dialog. Driven
//! the way the event loop drives the app: store events in, `on_changes`, real key events.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::app::effects::Effect;
use crate::app::steer::HOLD;

/// Applies an event the way the event loop does and returns the effects it asked for.
fn feed(app: &mut App, event: Event) -> Vec<Effect> {
    let change = app.store_mut().apply(event);
    app.on_changes(&[change]);
    app.take_effects()
}

fn alarms(effects: &[Effect]) -> Vec<&Effect> {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::Bell | Effect::Notify(_)))
        .collect()
}

const LIVE: &str = "5a1e0000-0000-4000-8000-000000000001";
const SECOND_QUESTION: &str = "5a1e0000-0000-4000-8000-000000000002";

/// Another question from the reviewer, as a snapshot the first listing could bring.
fn second_question(at: i64) -> Event {
    snapshot(
        REVIEWER,
        task_json(
            SECOND_QUESTION,
            CTX,
            "TASK_STATE_INPUT_REQUIRED",
            "Which reviewers should I add?",
            at,
        ),
        at,
    )
}

/// A test run under way, as a listing brings it.
fn running(id: &str) -> Event {
    snapshot(
        RUNNER,
        task_json(id, CTX, "TASK_STATE_WORKING", "running", NOW - 5),
        NOW - 5,
    )
}

#[test]
fn bell_and_notification_when_a_task_fails_or_asks_but_not_for_old_tasks() {
    let mut app = app(store());
    let old = feed(
        &mut app,
        snapshot(
            RUNNER,
            task_json(COMPLETED, CTX, "TASK_STATE_FAILED", "it failed an hour ago", NOW - 3600),
            NOW - 3600,
        ),
    );
    assert_eq!(
        alarms(&old),
        Vec::<&Effect>::new(),
        "the first listing's old failures are quiet"
    );
    let old = feed(&mut app, second_question(NOW - 3600));
    assert_eq!(alarms(&old), Vec::<&Effect>::new(), "and so are its old questions");

    feed(&mut app, running(LIVE));
    let failed = feed(
        &mut app,
        status_update(RUNNER, LIVE, CTX, "TASK_STATE_FAILED", "3 failed", NOW - 1),
    );
    let [Effect::Bell, Effect::Notify(text)] = alarms(&failed)[..] else {
        panic!("a bell and a notification: {failed:?}")
    };
    assert!(text.contains("test-runner"), "names the agent: {text}");

    feed(&mut app, running(WORKING));
    let asks = feed(
        &mut app,
        status_update(RUNNER, WORKING, CTX, "TASK_STATE_INPUT_REQUIRED", "Which suite?", NOW),
    );
    assert!(
        matches!(alarms(&asks)[..], [Effect::Bell, Effect::Notify(_)]),
        "a task that becomes interrupted rings too: {asks:?}"
    );

    app.set_prefs(Prefs {
        bell: false,
        desktop: false,
        ..app.steer().prefs
    });
    let quiet = feed(
        &mut app,
        status_update(RUNNER, WORKING, CTX, "TASK_STATE_FAILED", "gave up", NOW),
    );
    assert_eq!(alarms(&quiet), Vec::<&Effect>::new(), "both can be turned off");
}

#[test]
fn the_terminal_title_counts_the_waiting_tasks() {
    let mut app = app(store());
    feed(&mut app, running(WORKING));
    let titles = |effects: Vec<Effect>| -> Vec<String> {
        effects
            .into_iter()
            .filter_map(|e| match e {
                Effect::Title(t) => Some(t),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        titles(feed(&mut app, second_question(NOW - 2))),
        ["a2a-watch (1 waiting)"]
    );
    assert_eq!(
        titles(feed(
            &mut app,
            status_update(RUNNER, WORKING, CTX, "TASK_STATE_WORKING", "still running", NOW - 1)
        )),
        Vec::<String>::new(),
        "set again only when the count changes"
    );
    assert_eq!(
        titles(feed(
            &mut app,
            status_update(RUNNER, WORKING, CTX, "TASK_STATE_INPUT_REQUIRED", "Which suite?", NOW)
        )),
        ["a2a-watch (2 waiting)"]
    );
    feed(
        &mut app,
        status_update(REVIEWER, SECOND_QUESTION, CTX, "TASK_STATE_COMPLETED", "done", NOW),
    );
    assert_eq!(
        titles(feed(
            &mut app,
            status_update(RUNNER, WORKING, CTX, "TASK_STATE_CANCELED", "canceled", NOW)
        )),
        ["a2a-watch"],
        "none waiting: the plain name"
    );
}

#[test]
fn esc_is_later_the_waiting_questions_stay_down_and_a_new_one_pops_up() {
    let mut app = app(demo_store());
    app.on_changes(&[]);
    let boxed = |app: &App| app.popup::<AnswerBox>().map(|b| b.key.clone());
    assert_eq!(boxed(&app), Some(key(REVIEWER, QUESTION)), "the question pops up");
    press(&mut app, KeyCode::Esc);
    assert_eq!(boxed(&app), None);
    feed(
        &mut app,
        status_update(RUNNER, WORKING, CTX, "TASK_STATE_WORKING", "8/12", NOW),
    );
    assert_eq!(boxed(&app), None, "the question put off does not pop up again");
    // Esc was a key: the next question waits until the keyboard has rested.
    app.set_now(ts(NOW) + HOLD);
    feed(&mut app, second_question(NOW));
    assert_eq!(boxed(&app), Some(key(REVIEWER, SECOND_QUESTION)), "a new question does");
}

#[test]
fn the_inbox_moves_with_j_and_k_and_enter_answers_the_task_under_the_cursor() {
    let mut s = demo_store();
    s.apply(second_question(NOW - 1));
    let mut app = app(s);
    let waiting: Vec<TaskKey> = app.store().interrupts().iter().map(|t| t.key.clone()).collect();
    let target = key(REVIEWER, SECOND_QUESTION);
    let at = waiting.iter().position(|k| *k == target).unwrap();
    assert!(waiting.len() >= 3 && at > 0, "{waiting:?}");
    press(&mut app, KeyCode::Char('i'));
    assert_eq!(app.popup::<Inbox>().map(|i| i.selected), Some(0));
    press(&mut app, KeyCode::Char('k'));
    assert_eq!(app.popup::<Inbox>().map(|i| i.selected), Some(0), "stays at the top");
    for _ in 0..waiting.len() + 2 {
        press(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(
        app.popup::<Inbox>().map(|i| i.selected),
        Some(waiting.len() - 1),
        "stops at the bottom"
    );
    for _ in at..waiting.len() - 1 {
        press(&mut app, KeyCode::Char('k'));
    }
    assert_eq!(app.popup::<Inbox>().map(|i| i.selected), Some(at));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.popup::<Inbox>().map(|i| i.selected), None);
    assert_eq!(app.selected().cloned(), Some(target.clone()));
    assert_eq!(app.popup::<AnswerBox>().map(|b| b.key.clone()), Some(target));
}

#[test]
fn a_paste_goes_into_the_open_box_or_form() {
    let mut app = app(demo_store());
    app.on_changes(&[]);
    assert!(app.popup::<AnswerBox>().is_some());
    on_terminal_event(&mut app, TermEvent::Paste("release/2026.10".into()));
    assert_eq!(app.popup::<AnswerBox>().unwrap().text(), "release/2026.10");
    assert!(app.spec().filter.is_empty(), "not into the filter");

    press(&mut app, KeyCode::Esc);
    app.select(key(DEPLOYER, APPROVAL));
    press(&mut app, KeyCode::Char('n'));
    on_terminal_event(&mut app, TermEvent::Paste("deploy build 7\nto staging".into()));
    let form = app.popup::<NewTask>().expect("the new-task form");
    assert_eq!(form.message.lines().join("\n"), "deploy build 7\nto staging");
}

#[test]
fn ctrl_c_in_a_dialog_quits_without_sending() {
    let mut app = app(demo_store());
    app.select(key(RUNNER, WORKING));
    press(&mut app, KeyCode::Char('x'));
    assert!(app.popup::<Confirm>().is_some(), "the cancel confirmation");
    on_terminal_event(
        &mut app,
        TermEvent::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
    );
    assert!(app.quitting());
    assert!(app.steer().outbox.is_empty(), "quitting answers nothing");
}

fn at_millis(app: &mut App, millis: i64) {
    app.set_now(ts(NOW) + jiff::SignedDuration::from_millis(millis));
}

fn boxed(app: &App) -> Option<TaskKey> {
    app.popup::<AnswerBox>().map(|b| b.key.clone())
}

/// The person pressed a key at `at_ms`; a question arrives a second later.
fn question_while_typing(at_ms: i64) -> App {
    let mut app = app(demo_store());
    app.select(key(RUNNER, WORKING));
    at_millis(&mut app, at_ms);
    press(&mut app, KeyCode::Char('j'));
    at_millis(&mut app, at_ms + 1_000);
    app.on_changes(&[]);
    app
}

#[test]
fn a_question_waits_while_the_person_types_and_opens_once_the_keyboard_rests() {
    let mut app = question_while_typing(0);
    assert_eq!(boxed(&app), None, "a key pressed 1 s ago keeps the box closed");
    assert_eq!(app.held_question(), Some(&key(REVIEWER, QUESTION)));
    assert_eq!(
        app.held_until(),
        Some(ts(NOW) + HOLD),
        "the loop wakes when it may open"
    );
    // Keys typed meanwhile go to the table, not into a box.
    let before = app.selected_index();
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.selected_index(), before.map(|i| i + 1), "j moved the table");
    assert_eq!(boxed(&app), None);
    at_millis(&mut app, 2_400);
    app.on_tick();
    assert_eq!(boxed(&app), None, "1.4 s after the last key it still waits");
    at_millis(&mut app, 2_500);
    app.on_tick();
    assert_eq!(boxed(&app), Some(key(REVIEWER, QUESTION)), "1.5 s idle: it opens");
    assert_eq!(app.held_question(), None);
    assert_eq!(app.held_until(), None, "nothing left to wake for");
}

#[test]
fn r_opens_a_held_question_at_once() {
    let mut app = question_while_typing(0);
    assert!(app.selected_task().is_some_and(|t| !t.state().is_interrupted()));
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(boxed(&app), Some(key(REVIEWER, QUESTION)), "the held question's box");
    assert_eq!(app.held_question(), None);
    type_text(&mut app, "main");
    assert_eq!(
        app.popup::<AnswerBox>().unwrap().text(),
        "main",
        "now keys go to the box"
    );
}

#[test]
fn the_footer_says_a_question_waits() {
    let mut app = question_while_typing(0);
    snapshot_sizes("held_question", &mut app);
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(text.contains("code-reviewer has a question · r answers now"), "{text}");
    // Once open, the footer has its keys back.
    at_millis(&mut app, 2_500);
    app.on_tick();
    let terminal = render(&mut app, 80, 24);
    assert!(!screen_text(terminal.backend().buffer()).contains("has a question"));
}

#[test]
fn the_held_question_names_its_agent_cleaned_and_cut_to_fit() {
    let long = format!("\u{1b}[31mrogue\u{202e}{}", "-agent".repeat(30));
    let mut s = Store::new([(Some(long), "http://127.0.0.1:41241".to_string())]);
    add(
        &mut s,
        0,
        QUESTION,
        CTX,
        "TASK_STATE_INPUT_REQUIRED",
        "Which branch?",
        NOW - 5,
    );
    let mut app = app(s);
    press(&mut app, KeyCode::Char('j'));
    app.on_changes(&[]);
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let buffer = terminal.backend().buffer();
        let footer = screen_text(buffer).lines().last().unwrap_or_default().to_string();
        assert!(footer.contains("rogue-agent") && footer.contains("…"), "{footer}");
        assert!(
            footer.contains("has a question · r answers now"),
            "cut from the name: {footer}"
        );
        assert!(!footer.contains("[31m"), "{footer}");
    }
}
