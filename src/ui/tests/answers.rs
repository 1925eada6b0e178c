//! The answer box and the confirmations answer only what they showed; links that are opened or
//! copied are web links. Drawn into a `TestBackend`, driven through real key events, with the
//! engine's outcomes fed in as store events.

use crossterm::event::KeyCode;
use serde_json::json;

use super::*;
use crate::app::effects::Effect;
use crate::event::{ActionId, ActionOutcome, Command};

const REVIEW_CTX: &str = "49c5a238-6e1f-4d2c-b3a4-5f6e7d8c9b0a";

fn sent(app: &mut App) -> Vec<(ActionId, crate::a2a::Message)> {
    app.take_outbox()
        .into_iter()
        .filter_map(|(_, c)| match c {
            Command::Send { action, request } => Some((action, request.message)),
            _ => None,
        })
        .collect()
}

fn outcome(app: &mut App, action: ActionId, outcome: ActionOutcome) {
    let change = app.store_mut().apply(Event::Action {
        agent: REVIEWER,
        action,
        outcome,
        call: None,
    });
    app.on_changes(&[change]);
}

fn at(app: &mut App, millis: i64) {
    app.set_now(ts(NOW) + jiff::SignedDuration::from_millis(millis));
}

fn ask_again(app: &mut App, text: &str, secs_ago: i64) {
    let change = app.store_mut().apply(status_update(
        REVIEWER,
        QUESTION,
        REVIEW_CTX,
        "TASK_STATE_INPUT_REQUIRED",
        text,
        NOW - secs_ago,
    ));
    app.on_changes(&[change]);
}

fn notice(app: &App) -> String {
    app.popup::<AnswerBox>()
        .and_then(|b| b.notice.clone())
        .unwrap_or_default()
}

#[test]
fn a_question_that_changes_under_the_box_is_shown_and_the_next_enter_only_takes_note() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "main");
    at(&mut app, 5_000);
    // Same state, another question (INPUT_REQUIRED to INPUT_REQUIRED).
    ask_again(&mut app, "Which release branch should I compare against?", 1);
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(
        text.contains("Which release branch") && !text.contains("Which base branch"),
        "{text}"
    );
    insta::assert_snapshot!("input_box_changed_80x24", terminal.backend());
    at(&mut app, 6_000);
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut app).is_empty(), "the Enter after a change only takes note");
    assert!(notice(&app).contains("again"), "{}", notice(&app));
    assert_eq!(app.popup::<AnswerBox>().unwrap().text(), "main", "the draft is kept");
    press(&mut app, KeyCode::Enter);
    let [(_, message)] = sent(&mut app).try_into().unwrap();
    assert_eq!(message.text(), "main");
    assert!(
        message
            .message_id
            .starts_with(&format!("reply:{QUESTION}:s-{}-", NOW - 1)),
        "the id names the question now on screen: {}",
        message.message_id
    );
}

#[test]
fn a_question_asked_again_with_the_same_text_is_another_question() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "main");
    at(&mut app, 5_000);
    // A WORKING in between that polling missed: same state and text, a new status.
    ask_again(&mut app, "Which base branch should I compare this diff against?", 2);
    assert!(app.popup::<AnswerBox>().unwrap().changed);
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut app).is_empty());
}

#[test]
fn enter_right_after_a_box_opens_does_not_send() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "main");
    at(&mut app, 300);
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut app).is_empty(), "typed for something else");
    assert!(notice(&app).contains("press ⏎ again"), "{}", notice(&app));
    let terminal = render(&mut app, 80, 24);
    assert!(screen_text(terminal.backend().buffer()).contains("press ⏎ again"));
    at(&mut app, 600);
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut app).len(), 1, "a deliberate Enter sends");
}

#[test]
fn esc_keeps_the_draft_for_the_same_question_only_and_its_retry_is_answered_once() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "release/2026.10");
    at(&mut app, 1_000);
    press(&mut app, KeyCode::Enter);
    let [(action, first)] = sent(&mut app).try_into().unwrap();
    outcome(
        &mut app,
        action,
        ActionOutcome::Failed {
            message: "HTTP 503".into(),
        },
    );
    press(&mut app, KeyCode::Esc);
    assert!(app.popup::<AnswerBox>().is_none());
    app.open_answer(&key(REVIEWER, QUESTION));
    let boxed = app.popup::<AnswerBox>().unwrap();
    assert_eq!(boxed.text(), "release/2026.10");
    at(&mut app, 2_000);
    press(&mut app, KeyCode::Enter);
    let [(_, retry)] = sent(&mut app).try_into().unwrap();
    assert_eq!(retry.message_id, first.message_id, "answered once");
    // Another question does not get the old draft.
    press(&mut app, KeyCode::Esc);
    ask_again(&mut app, "Which release branch?", 1);
    app.take::<AnswerBox>();
    app.open_answer(&key(REVIEWER, QUESTION));
    assert_eq!(app.popup::<AnswerBox>().unwrap().text(), "");
}

#[test]
fn a_send_without_outcome_times_out_and_a_late_outcome_does_not_confuse_the_box() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "main");
    at(&mut app, 1_000);
    press(&mut app, KeyCode::Enter);
    let [(first, message)] = sent(&mut app).try_into().unwrap();
    at(&mut app, 20_000);
    app.on_tick();
    assert!(app.popup::<AnswerBox>().unwrap().error.is_none(), "still waiting");
    at(&mut app, 31_000);
    app.on_tick();
    let error = app.popup::<AnswerBox>().unwrap().error.clone().unwrap_or_default();
    assert!(error.contains("No reply") && error.contains("retries"), "{error}");
    press(&mut app, KeyCode::Enter);
    let [(second, retry)] = sent(&mut app).try_into().unwrap();
    assert_eq!(retry.message_id, message.message_id);
    // The first attempt's failure, late: the retry in flight is what the box shows.
    outcome(
        &mut app,
        first,
        ActionOutcome::Failed {
            message: "timed out".into(),
        },
    );
    let boxed = app.popup::<AnswerBox>().expect("the box stays");
    assert!(boxed.error.is_none() && boxed.sending.current() == Some(second));
    outcome(&mut app, second, ActionOutcome::Done { task: None });
    assert!(app.popup::<AnswerBox>().is_none(), "answered");
}

/// The assistant's approval, holding `tool` under interaction `id`, stamped `at`.
fn hold(app: &mut App, id: &str, tool: &str, at: i64) -> TaskKey {
    let ext = crate::a2a::INTERACTIONS_EXTENSION;
    let task_id = "0a1b2c3d-aaaa-4bbb-8ccc-0d1e2f3a4b5c";
    let mut task = task_json(task_id, CTX, "TASK_STATE_AUTH_REQUIRED", "", at);
    task["status"]["message"] = json!({
        "messageId": format!("m-{id}"), "role": "ROLE_AGENT", "extensions": [ext],
        "parts": [{"text": format!("Approve github / {tool}?")}],
        "metadata": {ext: {"interactionId": id, "kind": "approval", "prompt": format!("Approve github / {tool}?"),
                           "detail": {"server": "github", "tool": tool, "reason": format!("the plan needs {tool}")}}}});
    let change = app.store_mut().apply(snapshot(ASSISTANT, task, at));
    app.on_changes(&[change]);
    key(ASSISTANT, task_id)
}

#[test]
fn a_held_call_swapped_before_y_is_not_approved_and_the_new_one_is_shown() {
    let mut app = app(demo_store());
    app.set_prefs(Prefs {
        auto_popup: false,
        ..app.steer().prefs
    });
    let approval = hold(&mut app, "eff_1", "read_file", NOW - 20);
    app.select(approval);
    press(&mut app, KeyCode::Char('a'));
    // The agent swaps the held call (same interaction id, even) before the person says yes.
    hold(&mut app, "eff_1", "delete_repo", NOW - 5);
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(
        text.contains("github / read_file for assistant?"),
        "the confirmation shows what it asks about:\n{text}"
    );
    press(&mut app, KeyCode::Char('y'));
    assert!(sent(&mut app).is_empty(), "nothing approved that was not seen");
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(text.contains("delete_repo") && text.contains("It changed"), "{text}");
    insta::assert_snapshot!("confirm_changed_80x24", terminal.backend());
    // `y` now approves what is on screen.
    press(&mut app, KeyCode::Char('y'));
    let [(action, message)] = sent(&mut app).try_into().unwrap();
    assert_eq!(message.message_id, "answer:eff_1:approve");
    // A refusal keeps the confirmation, with the error; `y` retries with the same id.
    outcome(
        &mut app,
        action,
        ActionOutcome::Failed {
            message: "the agent refused: interaction closed".into(),
        },
    );
    let confirm = app.popup::<Confirm>().expect("still shown");
    assert!(
        confirm
            .note
            .as_ref()
            .is_some_and(|(n, error)| *error && n.contains("refused"))
    );
    press(&mut app, KeyCode::Char('y'));
    let [(action, retry)] = sent(&mut app).try_into().unwrap();
    assert_eq!(retry.message_id, message.message_id);
    assert!(app.popup::<Confirm>().is_none(), "closed while the answer travels");
    // No outcome in time: shown again, saying so; the late outcome still counts.
    at(&mut app, 31_000);
    app.on_tick();
    let note = app.popup::<Confirm>().and_then(|c| c.note.clone()).unwrap_or_default();
    assert!(note.0.contains("No reply") && note.0.contains("y retries"), "{note:?}");
    outcome(&mut app, action, ActionOutcome::Done { task: None });
    assert!(app.popup::<Confirm>().is_none());
    assert!(
        app.steer()
            .flash
            .as_ref()
            .is_some_and(|f| f.text.contains("delete_repo: done"))
    );
}

#[test]
fn a_cancel_confirmed_after_the_task_moved_on_asks_again() {
    let mut app = app(demo_store());
    app.select(key(RUNNER, WORKING));
    press(&mut app, KeyCode::Char('x'));
    let change = app.store_mut().apply(status_update(
        RUNNER,
        WORKING,
        CTX,
        "TASK_STATE_INPUT_REQUIRED",
        "which test?",
        NOW - 1,
    ));
    app.on_changes(&[change]);
    press(&mut app, KeyCode::Char('y'));
    assert!(app.steer().outbox.is_empty());
    let terminal = render(&mut app, 80, 24);
    assert!(screen_text(terminal.backend().buffer()).contains("(INPUT_REQUIRED)"));
}

/// An approval on the deployer whose status message carries these links.
fn approval_with_links(app: &mut App, links: &[&str]) -> TaskKey {
    let mut task = task_json(APPROVAL, CTX, "TASK_STATE_AUTH_REQUIRED", "", NOW - 3);
    let parts: Vec<_> = links.iter().map(|l| json!({"url": l})).collect();
    task["status"]["message"] = json!({"messageId": "links", "role": "ROLE_AGENT", "parts": parts});
    app.store_mut().apply(snapshot(DEPLOYER, task, NOW - 3));
    app.select(key(DEPLOYER, APPROVAL));
    key(DEPLOYER, APPROVAL)
}

#[test]
fn links_that_are_not_web_links_are_never_opened_or_copied() {
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "slack://open",
        "/approve/1",
    ] {
        let mut app = app(demo_store());
        let approval = approval_with_links(&mut app, &[bad]);
        press(&mut app, KeyCode::Char('o'));
        press(&mut app, KeyCode::Char('y'));
        assert!(app.steer().effects.is_empty(), "{bad}: {:?}", app.steer().effects);
        let flash = app.steer().flash.clone().map(|f| f.text).unwrap_or_default();
        assert!(flash.contains("not a web link"), "{flash}");
        let terminal = render(&mut app, 160, 48);
        assert!(
            screen_text(terminal.backend().buffer()).contains(&format!("not a web link: {bad}")),
            "marked in the approvals pane"
        );
        open_detail(&mut app, approval);
        let terminal = render(&mut app, 160, 48);
        assert!(screen_text(terminal.backend().buffer()).contains("not a web link:"));
    }
}

#[test]
fn several_links_open_a_picker_of_the_web_ones() {
    let mut app = app(demo_store());
    let first = "https://ops.example/approve?id=1";
    let second = "http://127.0.0.1:41243/approve/2";
    approval_with_links(&mut app, &["javascript:alert(1)", first, second]);
    press(&mut app, KeyCode::Char('o'));
    assert!(app.steer().effects.is_empty(), "nothing opened before the choice");
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    let picker: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" 1 http") || l.contains(" 2 http"))
        .collect();
    assert!(text.contains("Which link?"), "{text}");
    assert!(
        picker.len() == 2 && picker[0].contains(first) && picker[1].contains(second),
        "only the web links, whole: {picker:?}"
    );
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.steer().effects, [Effect::Open(second.into())]);
    app.take_effects();
    press(&mut app, KeyCode::Char('y'));
    press(&mut app, KeyCode::Char('1'));
    assert_eq!(app.steer().effects, [Effect::Copy(first.into())]);
}
