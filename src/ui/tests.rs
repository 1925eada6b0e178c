//! The screen as a person sees it: a store built from hand-made watch events, drawn into a
//! `TestBackend` at 80x24 and 160x48 and compared with insta snapshots; plus the colours of the
//! state cells, the selection, freeze and the filter driven through real key events.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use serde_json::{Value, json};

use super::view;
use crate::a2a::{Binding, ProtocolVersion};
use crate::app::keys::KeyMap;
use crate::app::keys::Mode;
use crate::app::on_terminal_event;
use crate::app::popup::answer::AnswerBox;
use crate::app::popup::confirm::Confirm;
use crate::app::popup::detail::Detail;
use crate::app::popup::filter::Filter;
use crate::app::popup::help::Help;
use crate::app::popup::inbox::Inbox;
use crate::app::popup::new_task::NewTask;
use crate::app::steer::Prefs;
use crate::app::{App, Pane};
use crate::event::{AgentInfo, Event, Health};
use crate::store::{Store, TaskKey};
use crate::theme::Theme;

mod sizes;

pub(super) const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];
/// The time every screen is drawn at; tasks are stamped relative to it.
pub(super) const NOW: i64 = 600;

pub(super) fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

pub(super) const RUNNER: usize = 0;
pub(super) const REVIEWER: usize = 1;
pub(super) const DEPLOYER: usize = 2;
pub(super) const ASSISTANT: usize = 3;

pub(super) const APPROVE_URL: &str = "http://127.0.0.1:41243/approve/ecf2dcb6-79c8-48f8-8868-24a0541781f4?operator=on-call&ticket=CHG-2026-10-06-0042&return=http%3A%2F%2F127.0.0.1%3A41243%2Fdone";

pub(super) fn store() -> Store {
    let mut s = Store::new(
        ["test-runner", "code-reviewer", "deployer", "assistant"]
            .iter()
            .enumerate()
            .map(|(i, name)| (Some(name.to_string()), format!("http://127.0.0.1:{}", 41241 + i))),
    );
    for (agent, binding) in [
        (RUNNER, Binding::JsonRpc),
        (REVIEWER, Binding::Rest),
        (DEPLOYER, Binding::JsonRpc),
    ] {
        let name = s.agent_name(agent).to_string();
        s.apply(card_read(agent, name, ProtocolVersion::V1_0, binding));
        s.apply(Event::Health {
            agent,
            health: Health::Streaming,
        });
    }
    s
}

/// The card of an agent that streams and lists its tasks, as read.
pub(super) fn card_read(agent: usize, name: String, version: ProtocolVersion, binding: Binding) -> Event {
    Event::Info {
        agent,
        info: AgentInfo {
            name,
            version,
            binding,
            streaming: true,
            lists_tasks: true,
            push_off: None,
            card_signature: None,
        },
    }
}

pub(super) fn status(state: &str, text: &str, at: i64) -> Value {
    let mut v = json!({"state": state, "timestamp": ts(at).to_string()});
    if !text.is_empty() {
        v["message"] = json!({"messageId": format!("s-{at}-{state}"), "role": "ROLE_AGENT", "parts": [{"text": text}]});
    }
    v
}

pub(super) fn task_json(id: &str, context: &str, state: &str, text: &str, at: i64) -> Value {
    json!({"id": id, "contextId": context, "status": status(state, text, at)})
}

pub(super) fn snapshot(agent: usize, task: Value, at: i64) -> Event {
    Event::Snapshot {
        agent,
        task: serde_json::from_value(task).unwrap(),
        seen: ts(at),
    }
}

pub(super) fn update(agent: usize, v: Value, at: i64) -> Event {
    Event::Update {
        agent,
        event: serde_json::from_value(v).unwrap(),
        seen: ts(at),
    }
}

pub(super) fn status_update(agent: usize, id: &str, context: &str, state: &str, text: &str, at: i64) -> Event {
    update(
        agent,
        json!({"statusUpdate": {"taskId": id, "contextId": context, "status": status(state, text, at)}}),
        at,
    )
}

pub(super) fn add(s: &mut Store, agent: usize, id: &str, context: &str, state: &str, text: &str, at: i64) {
    s.apply(snapshot(agent, task_json(id, context, state, text, at), at));
}

/// What the running test run last said.
pub(super) const PROGRESS: &str = "collected 12 items · 7/12";
pub(super) const CTX: &str = "ac3830af-5b2d-4f0e-a1c9-3e7d2f6b8a90";
pub(super) const WORKING: &str = "3d8f7801-2c4b-4e5a-9f1d-0b6c7a8e9d21";
pub(super) const COMPLETED: &str = "a31361b3-77d0-4c1e-8b2a-5f9e6d4c3b10";
pub(super) const QUESTION: &str = "e5c95b09-1f3a-4c2e-9d1b-7a5e3f0c2b11";
pub(super) const APPROVAL: &str = "ecf2dcb6-79c8-48f8-8868-24a0541781f4";

/// A realistic mix: every state class, an unknown state name, an agent that is reconnecting.
pub(super) fn demo_store() -> Store {
    let mut s = store();
    s.apply(Event::Health {
        agent: ASSISTANT,
        health: Health::Reconnecting {
            attempt: 3,
            reason: "connection refused".into(),
        },
    });
    // A test run watched from submission, with chunked artifacts.
    add(&mut s, RUNNER, WORKING, CTX, "TASK_STATE_SUBMITTED", "", NOW - 30);
    s.apply(status_update(
        RUNNER,
        WORKING,
        CTX,
        "TASK_STATE_WORKING",
        "collecting",
        NOW - 20,
    ));
    s.apply(update(
        RUNNER,
        json!({"artifactUpdate": {"taskId": WORKING, "contextId": CTX,
            "artifact": {"artifactId": "log", "name": "pytest.log", "parts": [{"text": "collected 12 items\n"}]}}}),
        NOW - 10,
    ));
    s.apply(status_update(
        RUNNER,
        WORKING,
        CTX,
        "TASK_STATE_WORKING",
        PROGRESS,
        NOW - 3,
    ));
    completed_task(&mut s);
    add(
        &mut s,
        RUNNER,
        "b7e4a920-0d1c-4b8e-a2f3-6c5d4e3f2a19",
        CTX,
        "TASK_STATE_FAILED",
        "2 failed, 10 passed: test_refund_rounding, test_refund_currency",
        NOW - 200,
    );
    add(
        &mut s,
        RUNNER,
        "c0ffee12-3456-4789-abcd-ef0123456789",
        CTX,
        "TASK_STATE_CANCELED",
        "canceled by the planner",
        NOW - 250,
    );
    add(
        &mut s,
        REVIEWER,
        QUESTION,
        "49c5a238-6e1f-4d2c-b3a4-5f6e7d8c9b0a",
        "TASK_STATE_INPUT_REQUIRED",
        "Which base branch should I compare this diff against?",
        NOW - 42,
    );
    add(
        &mut s,
        REVIEWER,
        "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
        "49c5a238-6e1f-4d2c-b3a4-5f6e7d8c9b0a",
        "TASK_STATE_PAUSED",
        "a state this watcher does not know",
        NOW - 90,
    );
    add(
        &mut s,
        DEPLOYER,
        APPROVAL,
        "9e8e6bcf-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
        "TASK_STATE_AUTH_REQUIRED",
        &format!("An operator must approve this deploy to staging at {APPROVE_URL}"),
        NOW - 75,
    );
    add(
        &mut s,
        DEPLOYER,
        "77c1e0aa-4b3c-4d2e-9f1a-0b2c3d4e5f6a",
        "9e8e6bcf-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
        "TASK_STATE_REJECTED",
        "production deploys are not allowed",
        NOW - 300,
    );
    add(
        &mut s,
        ASSISTANT,
        "5a5b5c5d-6e6f-4a7b-8c9d-0e1f2a3b4c5d",
        "0d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a",
        "TASK_STATE_SUBMITTED",
        "",
        NOW - 8,
    );
    s
}

/// A finished run with a timeline, history, a text and a JSON artifact: the detail pane's task.
pub(super) fn completed_task(s: &mut Store) {
    add(s, RUNNER, COMPLETED, CTX, "TASK_STATE_SUBMITTED", "", NOW - 180);
    s.apply(status_update(
        RUNNER,
        COMPLETED,
        CTX,
        "TASK_STATE_WORKING",
        "collecting",
        NOW - 175,
    ));
    s.apply(status_update(
        RUNNER,
        COMPLETED,
        CTX,
        "TASK_STATE_WORKING",
        PROGRESS,
        NOW - 150,
    ));
    let mut done = task_json(COMPLETED, CTX, "TASK_STATE_COMPLETED", "1 failed, 11 passed", NOW - 120);
    done["history"] = json!([
        {"messageId": "u1", "role": "ROLE_USER", "parts": [{"text": "run the tests of payments-api at 3f2c9e1"}]},
        {"messageId": "a1", "role": "ROLE_AGENT", "parts": [{"text": "collecting"}]},
    ]);
    done["artifacts"] = json!([
        {"artifactId": "log", "name": "pytest.log", "parts": [
            {"text": "collected 12 items\n"},
            {"text": "tests/test_charge.py ........ [66%]\ntests/test_refund.py ...F [100%]\n"}]},
        {"artifactId": "summary", "name": "summary.json", "parts": [
            {"data": {"passed": 11, "failed": 1, "failures": ["test_refund_rounding"]}}]},
    ]);
    s.apply(snapshot(RUNNER, done, NOW - 120));
}

pub(super) fn app(store: Store) -> App {
    let mut app = App::new(store, KeyMap::default(), Theme::default());
    app.set_now(ts(NOW));
    app.set_tz(TimeZone::UTC);
    app
}

/// Lays out, refreshes and draws the app the way the event loop does.
pub(super) fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.prepare(view::layout(Rect::new(0, 0, width, height), app));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::draw(frame, app)).unwrap();
    assert_clean(terminal.backend().buffer());
    terminal
}

/// Snapshots the screen at both sizes, as `<name>_<w>x<h>`.
pub(super) fn snapshot_sizes(name: &str, app: &mut App) {
    for (w, h) in SIZES {
        let terminal = render(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), terminal.backend());
    }
}

/// No control character or bidi override reaches a cell.
pub(super) fn assert_clean(buffer: &Buffer) {
    for cell in &buffer.content {
        let sym = cell.symbol();
        assert!(
            !sym.chars().any(|c| c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')),
            "a control character reached the screen: {sym:?}"
        );
    }
}

/// What is left of an escape sequence when only its ESC is dropped: none of it is shown. (The
/// raw JSON in the detail pane may show `\u001b[2J`, escaped: that is text, not a sequence.)
pub(super) fn assert_no_debris(text: &str) {
    for debris in ["[2J", "]0;", "pwned", "]52;", "aGVsbG8", "[31m"] {
        assert!(!text.contains(debris), "escape debris {debris:?} on screen:\n{text}");
    }
}

pub(super) fn screen_text(buffer: &Buffer) -> String {
    let w = usize::from(buffer.area.width);
    buffer
        .content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `text` starts on screen, one character a cell (ASCII text).
pub(super) fn find(buffer: &Buffer, text: &str) -> Option<(u16, u16)> {
    let chars: Vec<char> = text.chars().collect();
    let area = buffer.area;
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right().saturating_sub(chars.len() as u16 - 1) {
            if chars
                .iter()
                .enumerate()
                .all(|(i, c)| buffer[(x + i as u16, y)].symbol().chars().eq(std::iter::once(*c)))
            {
                return Some((x, y));
            }
        }
    }
    None
}

pub(super) fn row_of(buffer: &Buffer, text: &str) -> u16 {
    find(buffer, text)
        .unwrap_or_else(|| panic!("{text:?} not on screen:\n{}", screen_text(buffer)))
        .1
}

pub(super) fn press(app: &mut App, code: KeyCode) -> bool {
    on_terminal_event(app, TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

pub(super) fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// Moves the focus to the approvals pane the way a person does (the key map's Tab), so its
/// snapshot shows that pane focused, not the main screen again.
pub(super) fn focus_approvals(app: &mut App) {
    press(app, KeyCode::Tab);
    assert_eq!(app.focus(), Pane::Approvals);
}

pub(super) fn key(agent: usize, id: &str) -> TaskKey {
    TaskKey { agent, id: id.into() }
}

/// Opens the detail pane of a task with Enter, as a person does.
pub(super) fn open_detail(app: &mut App, task: TaskKey) {
    while app.pop().is_some() {}
    app.select(task.clone());
    press(app, KeyCode::Enter);
    assert_eq!(app.popups().len(), 1);
    assert!(
        app.top_popup::<Detail>()
            .is_some_and(|d| d.key == task && d.scroll == 0)
    );
}

/// An interactions/v1 approval waiting on the assistant.
pub(super) fn with_extension_approval(s: &mut Store) -> TaskKey {
    let ext = crate::a2a::INTERACTIONS_EXTENSION;
    let mut task = task_json(
        "0a1b2c3d-aaaa-4bbb-8ccc-0d1e2f3a4b5c",
        CTX,
        "TASK_STATE_AUTH_REQUIRED",
        "",
        NOW - 20,
    );
    task["status"]["message"] = json!({
        "messageId": "m-approve", "role": "ROLE_AGENT", "extensions": [ext],
        "parts": [{"text": "Approve github / create_pull_request?"}],
        "metadata": {ext: {"interactionId": "eff_01J", "kind": "approval", "prompt": "Approve github / create_pull_request?",
                           "detail": {"server": "github", "tool": "create_pull_request"}}}});
    s.apply(snapshot(ASSISTANT, task, NOW - 20));
    key(ASSISTANT, "0a1b2c3d-aaaa-4bbb-8ccc-0d1e2f3a4b5c")
}

/// The screens, pinned by snapshots at both sizes.
mod screens;

/// Keys driving the table, the filter, freeze, the input box and the confirmations.
mod keys;

/// Answers, confirmations and links: what is sent is what the person saw.
mod answers;

/// Bell, notifications, title, Esc "later", the inbox, paste and Ctrl-C in a dialog.
mod steering;

/// The delegation tree: nesting, counts, collapse, keys.
mod tree;

/// Task ids told apart, the detail pane's keys and pages, the compact approvals strip.
mod audience;

/// Fifty agents: the strip's summary, groups, the agents view.
mod fleet;
/// What a quiet stream shows, and what a task waiting on a person does not.
mod quiet;
/// Secrets on the agents panel: why push is off, URLs without their query.
mod secrets;
/// A signed card's verdict on its agent's row (A2A 1.0 §8.4).
mod signed;
