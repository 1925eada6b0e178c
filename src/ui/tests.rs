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

use super::theme::Theme;
use super::view;
use crate::a2a::{Binding, ProtocolVersion};
use crate::app::keys::KeyMap;
use crate::app::keys::Mode;
use crate::app::on_terminal_event;
use crate::app::popup::Popup;
use crate::app::{App, Focus};
use crate::event::{AgentInfo, Event, Health};
use crate::store::{Store, TaskKey};

mod sizes;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];
/// The time every screen is drawn at; tasks are stamped relative to it.
const NOW: i64 = 600;

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

const RUNNER: usize = 0;
const REVIEWER: usize = 1;
const DEPLOYER: usize = 2;
const ASSISTANT: usize = 3;

const APPROVE_URL: &str = "http://127.0.0.1:41243/approve/ecf2dcb6-79c8-48f8-8868-24a0541781f4?operator=on-call&ticket=CHG-2026-10-06-0042&return=http%3A%2F%2F127.0.0.1%3A41243%2Fdone";

fn store() -> Store {
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
        s.apply(Event::Info {
            agent,
            info: AgentInfo {
                name: s.agent_name(agent).to_string(),
                version: ProtocolVersion::V1_0,
                binding,
                streaming: true,
                lists_tasks: true,
            },
        });
        s.apply(Event::Health {
            agent,
            health: Health::Streaming,
        });
    }
    s
}

fn status(state: &str, text: &str, at: i64) -> Value {
    let mut v = json!({"state": state, "timestamp": ts(at).to_string()});
    if !text.is_empty() {
        v["message"] = json!({"messageId": format!("s-{at}-{state}"), "role": "ROLE_AGENT", "parts": [{"text": text}]});
    }
    v
}

fn task_json(id: &str, context: &str, state: &str, text: &str, at: i64) -> Value {
    json!({"id": id, "contextId": context, "status": status(state, text, at)})
}

fn snapshot(agent: usize, task: Value, at: i64) -> Event {
    Event::Snapshot {
        agent,
        task: serde_json::from_value(task).unwrap(),
        seen: ts(at),
    }
}

fn update(agent: usize, v: Value, at: i64) -> Event {
    Event::Update {
        agent,
        event: serde_json::from_value(v).unwrap(),
        seen: ts(at),
    }
}

fn status_update(agent: usize, id: &str, context: &str, state: &str, text: &str, at: i64) -> Event {
    update(
        agent,
        json!({"statusUpdate": {"taskId": id, "contextId": context, "status": status(state, text, at)}}),
        at,
    )
}

fn add(s: &mut Store, agent: usize, id: &str, context: &str, state: &str, text: &str, at: i64) {
    s.apply(snapshot(agent, task_json(id, context, state, text, at), at));
}

/// What the running test run last said.
const PROGRESS: &str = "collected 12 items · 7/12";
const CTX: &str = "ac3830af-5b2d-4f0e-a1c9-3e7d2f6b8a90";
const WORKING: &str = "3d8f7801-2c4b-4e5a-9f1d-0b6c7a8e9d21";
const COMPLETED: &str = "a31361b3-77d0-4c1e-8b2a-5f9e6d4c3b10";
const QUESTION: &str = "e5c95b09-1f3a-4c2e-9d1b-7a5e3f0c2b11";
const APPROVAL: &str = "ecf2dcb6-79c8-48f8-8868-24a0541781f4";

/// A realistic mix: every state class, an unknown state name, an agent that is reconnecting.
fn demo_store() -> Store {
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
fn completed_task(s: &mut Store) {
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

fn app(store: Store) -> App {
    let mut app = App::new(store, KeyMap::default(), Theme::default());
    app.now = ts(NOW);
    app.tz = TimeZone::UTC;
    app
}

/// Lays out, refreshes and draws the app the way the event loop does.
fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.prepare(Rect::new(0, 0, width, height));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::draw(frame, app)).unwrap();
    assert_clean(terminal.backend().buffer());
    terminal
}

/// Snapshots the screen at both sizes, as `<name>_<w>x<h>`.
fn snapshot_sizes(name: &str, app: &mut App) {
    for (w, h) in SIZES {
        let terminal = render(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), terminal.backend());
    }
}

/// No control character or bidi override reaches a cell.
fn assert_clean(buffer: &Buffer) {
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
fn assert_no_debris(text: &str) {
    for debris in ["[2J", "]0;", "pwned", "]52;", "aGVsbG8", "[31m"] {
        assert!(!text.contains(debris), "escape debris {debris:?} on screen:\n{text}");
    }
}

fn screen_text(buffer: &Buffer) -> String {
    let w = usize::from(buffer.area.width);
    buffer
        .content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `text` starts on screen, one character a cell (ASCII text).
fn find(buffer: &Buffer, text: &str) -> Option<(u16, u16)> {
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

fn row_of(buffer: &Buffer, text: &str) -> u16 {
    find(buffer, text)
        .unwrap_or_else(|| panic!("{text:?} not on screen:\n{}", screen_text(buffer)))
        .1
}

fn press(app: &mut App, code: KeyCode) -> bool {
    on_terminal_event(app, TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// Moves the focus to the approvals pane the way a person does (the key map's Tab), so its
/// snapshot shows that pane focused, not the main screen again.
fn focus_approvals(app: &mut App) {
    press(app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Approvals);
}

fn key(agent: usize, id: &str) -> TaskKey {
    TaskKey { agent, id: id.into() }
}

#[test]
fn main_screen() {
    let mut app = app(demo_store());
    snapshot_sizes("main", &mut app);
}

/// Opens the detail pane of a task with Enter, as a person does.
fn open_detail(app: &mut App, task: TaskKey) {
    app.popups.clear();
    app.selected = Some(task.clone());
    press(app, KeyCode::Enter);
    assert!(matches!(&app.popups[..], [Popup::Detail { key, scroll: 0 }] if *key == task));
}

#[test]
fn detail_pane() {
    let mut app = app(demo_store());
    open_detail(&mut app, key(RUNNER, COMPLETED));
    snapshot_sizes("detail", &mut app);
}

#[test]
fn detail_pane_scrolls_to_the_raw_json() {
    let mut app = app(demo_store());
    open_detail(&mut app, key(RUNNER, COMPLETED));
    press(&mut app, KeyCode::End);
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(
        text.contains("\"timestamp\": \"2027-01-15T08:08:00Z\""),
        "the end of the page is the raw JSON:\n{text}"
    );
    let Some(&Popup::Detail { scroll: end, .. }) = app.top() else {
        panic!("the detail pane is open");
    };
    let position = format!("lines {}–{} of {}", end + 1, end + 20, end + 20);
    assert!(
        text.contains(&position),
        "the pane says where it is ({position}):\n{text}"
    );
    // One step up from the end is one line up, not a jump back from a huge offset.
    press(&mut app, KeyCode::Up);
    render(&mut app, 80, 24);
    assert!(
        matches!(app.top(), Some(Popup::Detail { key: k, scroll }) if *k == key(RUNNER, COMPLETED) && *scroll == end - 1)
    );
}

/// The approvals pane with a link longer than the screen: shown whole, wrapped, never cut.
#[test]
fn approvals_pane_shows_links_whole() {
    let mut app = app(demo_store());
    focus_approvals(&mut app);
    snapshot_sizes("approvals_focused", &mut app);
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let text: String = screen_text(terminal.backend().buffer())
            .lines()
            .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
            .collect();
        assert!(
            text.contains(APPROVE_URL),
            "{w}x{h}: the approval link is not shown whole:\n{}",
            terminal.backend()
        );
    }
}

#[test]
fn help_overlay() {
    let mut app = app(demo_store());
    press(&mut app, KeyCode::Char('?'));
    assert!(matches!(&app.popups[..], [Popup::Help { page: 0 }]));
    snapshot_sizes("help", &mut app);
    // The whole key map is readable even on 80x24: every action's keys, and the last line.
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let buffer = terminal.backend().buffer();
        for (action, _) in Mode::Main.help() {
            let keys: Vec<String> = (app.keys.keys_for(Mode::Main, *action).iter())
                .map(ToString::to_string)
                .collect();
            let keys = keys.join(" ");
            assert!(
                find(buffer, &keys).is_some(),
                "{w}x{h}: {keys:?} for {action:?}:\n{}",
                terminal.backend()
            );
        }
        assert!(find(buffer, "any other key closes this help.").is_some(), "{w}x{h}");
    }
    // Page 2: every popup's keys, from their own maps, with a key remapped in one of them.
    app.keys = KeyMap::with_overrides([(Some("confirm"), "o", "yes")]).unwrap();
    press(&mut app, KeyCode::Tab);
    assert!(matches!(&app.popups[..], [Popup::Help { page: 1 }]));
    snapshot_sizes("help_popups", &mut app);
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let text: String = screen_text(terminal.backend().buffer())
            .lines()
            .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
            .collect::<Vec<_>>()
            .join(" ");
        for mode in Mode::ALL.into_iter().filter(|m| *m != Mode::Main) {
            assert!(text.contains(mode.title()), "{w}x{h}: {mode:?}:\n{text}");
        }
        for shown in ["y Y o yes", "alt-⏎ shift-⏎ new line", "1 link 1", "esc q i close"] {
            assert!(text.contains(shown), "{w}x{h}: {shown:?}:\n{}", terminal.backend());
        }
    }
    // Any other key closes it.
    press(&mut app, KeyCode::Char('z'));
    assert!(app.popups.is_empty());
}

#[test]
fn unauthorized_agent() {
    let mut s = store();
    s.apply(Event::Health {
        agent: DEPLOYER,
        health: Health::Unauthorized {
            message: "deployer: HTTP 401 unauthorized: the card asks for HTTP Bearer; no credential was sent; \
                      set A2A_TOKEN_DEPLOYER (or A2A_TOKEN)"
                .into(),
        },
    });
    add(&mut s, RUNNER, WORKING, CTX, "TASK_STATE_WORKING", PROGRESS, NOW - 3);
    let mut app = app(s);
    snapshot_sizes("unauthorized", &mut app);
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let buffer = terminal.backend().buffer();
        let (x, y) = find(buffer, "unauthorized").unwrap_or_else(|| panic!("{w}x{h}:\n{}", terminal.backend()));
        assert_eq!(buffer[(x, y)].fg, app.theme.broken, "{w}x{h}");
        if w >= 100 {
            assert!(
                find(buffer, "A2A_TOKEN_DEPLOYER").is_some(),
                "{w}x{h}:\n{}",
                terminal.backend()
            );
        }
    }
}

#[test]
fn empty_state() {
    let mut app = app(store());
    snapshot_sizes("empty", &mut app);
    let terminal = render(&mut app, 80, 24);
    assert!(find(terminal.backend().buffer(), "No tasks yet").is_some());
}

#[test]
fn hostile_status_text() {
    let mut s = store();
    let nasty =
        "ok\x1b[2J\x1b]0;pwned\x07 then \u{202e}evil\u{202c} text \x1b]52;c;aGVsbG8=\x1b\\ and \u{9b}31m red\r\n";
    add(&mut s, RUNNER, "hostile-1", CTX, "TASK_STATE_WORKING", nasty, NOW - 5);
    // An unknown state name is shown verbatim, so it must be cleaned too.
    add(
        &mut s,
        RUNNER,
        "hostile-2",
        CTX,
        "TASK_STATE_\x1b[2J\x1b]0;pwned\x07ODD",
        "odd state",
        NOW - 6,
    );
    // Ten megabytes of status text, full of escape sequences, waiting for approval.
    let huge = format!(
        "approve at http://127.0.0.1:1/approve/x {}",
        "lorem \x1b[31mipsum\x1b[0m dolor ".repeat(10_000_000 / 27 + 1)
    );
    assert!(huge.len() >= 10_000_000);
    add(
        &mut s,
        DEPLOYER,
        "hostile-3",
        CTX,
        "TASK_STATE_AUTH_REQUIRED",
        &huge,
        NOW - 7,
    );
    let mut app = app(s);
    snapshot_sizes("hostile", &mut app);
    for (w, h) in SIZES {
        assert_no_debris(&screen_text(render(&mut app, w, h).backend().buffer()));
    }
    // The detail panes render too, cleaned; the huge one cut with a note, and quickly enough
    // that scrolling through it is no chore.
    for id in ["hostile-1", "hostile-2", "hostile-3"] {
        open_detail(&mut app, key(if id == "hostile-3" { DEPLOYER } else { RUNNER }, id));
        for (w, h) in SIZES {
            let terminal = render(&mut app, w, h);
            let text = screen_text(terminal.backend().buffer());
            let shown = text.split("── Raw JSON").next().unwrap_or_default();
            assert_no_debris(shown);
        }
        for _ in 0..3 {
            press(&mut app, KeyCode::PageDown);
            render(&mut app, 80, 24);
        }
    }
    let huge = app.store.task(&key(DEPLOYER, "hostile-3")).unwrap();
    let page: Vec<String> = super::detail::lines(&app, huge, 78)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert!(
        page.iter().any(|l| l.contains("cut at 64.0 KiB (9.5 MiB in all)")),
        "the huge text is cut with a note: {:?}",
        page.iter().filter(|l| l.contains('…')).collect::<Vec<_>>()
    );
    assert!(page.len() < 2000, "{} lines", page.len());
    open_detail(&mut app, key(RUNNER, "hostile-1"));
    snapshot_sizes("hostile_detail", &mut app);
}

/// Each state class gets the theme's style; interrupted is bold, unknown reversed.
#[test]
fn state_cells_are_coloured_by_class() {
    let mut app = app(demo_store());
    let t = Theme::default();
    let cases: [(&str, Color, Modifier); 8] = [
        ("SUBMITTED", t.active, Modifier::empty()),
        ("WORKING", t.active, Modifier::empty()),
        ("INPUT_REQUIRED", t.interrupted, Modifier::BOLD),
        ("AUTH_REQUIRED", t.interrupted, Modifier::BOLD),
        ("COMPLETED", t.success, Modifier::empty()),
        ("FAILED", t.failure, Modifier::empty()),
        ("REJECTED", t.failure, Modifier::empty()),
        ("CANCELED", t.canceled, Modifier::empty()),
    ];
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let buffer = terminal.backend().buffer();
        // The table starts below the title and the agents; the first STATE header marks it.
        let table_top = row_of(buffer, "STATE");
        let find_state = |name: &str| {
            let (x, y) = find(buffer, &format!(" {name}")).unwrap_or_else(|| panic!("{name}:\n{}", terminal.backend()));
            assert!(y > table_top, "{name} is in the table");
            (x + 1, y)
        };
        for (name, fg, modifier) in cases {
            let (x, y) = find_state(name);
            let style = buffer[(x, y)].style();
            assert_eq!(style.fg, Some(fg), "{w}x{h} {name}");
            assert!(style.add_modifier.contains(modifier), "{w}x{h} {name}: {style:?}");
            if modifier.is_empty() {
                assert!(
                    !style.add_modifier.contains(Modifier::BOLD),
                    "{w}x{h} {name}: {style:?}"
                );
            }
            assert!(!style.add_modifier.contains(Modifier::REVERSED), "{w}x{h} {name}");
        }
        let (x, y) = find_state("PAUSED");
        let style = buffer[(x, y)].style();
        assert_eq!(style.fg, Some(t.unknown), "{w}x{h} unknown");
        assert!(
            style.add_modifier.contains(Modifier::REVERSED),
            "{w}x{h} unknown: {style:?}"
        );
        assert_eq!(
            find(buffer, "TASK_STATE_PAUSED"),
            None,
            "unknown states are shown short"
        );
    }
}

/// New rows sorted above the selected one do not move the selection to another task.
#[test]
fn selection_follows_the_task_when_rows_arrive_above() {
    let mut app = app(demo_store());
    render(&mut app, 160, 48);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    let chosen = app.selected.clone().expect("a selection");
    let before = app.selected_index().unwrap();
    for i in 0..3 {
        add(
            &mut app.store,
            RUNNER,
            &format!("0000000{i}-new"),
            CTX,
            "TASK_STATE_INPUT_REQUIRED",
            "which flaky test should I skip?",
            NOW - 1,
        );
    }
    let terminal = render(&mut app, 160, 48);
    assert_eq!(app.selected.as_ref(), Some(&chosen), "the selection stays on its task");
    assert_eq!(app.selected_index(), Some(before + 3), "and moves down with it");
    let buffer = terminal.backend().buffer();
    let y = row_of(buffer, &chosen.id[..8]);
    assert_eq!(buffer[(2, y)].bg, app.theme.selection, "its row is the highlighted one");
    let others = (0..buffer.area.height)
        .filter(|&y| buffer[(2, y)].bg == app.theme.selection)
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
            &mut app.store,
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
    assert!(!app.quit);
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, " state:interrupted");
    render(&mut app, 160, 48);
    assert_eq!(app.rows(), [key(DEPLOYER, APPROVAL)]);
    // Enter keeps the filter and closes the box; Esc then clears it.
    press(&mut app, KeyCode::Enter);
    assert!(app.popups.is_empty());
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

/// An interactions/v1 approval waiting on the assistant.
fn with_extension_approval(s: &mut Store) -> TaskKey {
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

#[test]
fn the_input_box_keeps_a_failed_answer_for_a_retry() {
    let mut app = app(demo_store());
    app.open_answer(&key(REVIEWER, QUESTION));
    type_text(&mut app, "release/2026.10");
    snapshot_sizes("input_box", &mut app);
    app.now = ts(NOW + 1);
    press(&mut app, KeyCode::Enter);
    let (agent, command) = app.steer.outbox.pop().expect("the answer goes to the engine");
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
    let change = app.store.apply(Event::Action {
        agent,
        action,
        outcome: failed,
    });
    app.on_changes(&[change]);
    let boxed = app.answer().expect("the box stays");
    assert_eq!(boxed.text(), "release/2026.10");
    let terminal = render(&mut app, 80, 24);
    let text = screen_text(terminal.backend().buffer());
    assert!(text.contains("cannot connect") && text.contains("retries"), "{text}");
    insta::assert_snapshot!("input_box_failed_80x24", terminal.backend());
    // The retry carries the same messageId: an agent that deduplicates answers once.
    press(&mut app, KeyCode::Enter);
    let (_, retry) = app.steer.outbox.pop().expect("retried");
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
    let change = app.store.apply(status_update(
        REVIEWER,
        QUESTION,
        "49c5a238-6e1f-4d2c-b3a4-5f6e7d8c9b0a",
        "TASK_STATE_WORKING",
        "comparing",
        NOW - 1,
    ));
    app.on_changes(&[change]);
    press(&mut app, KeyCode::Enter);
    assert!(app.steer.outbox.is_empty(), "nothing sent");
    let notice = app.answer().and_then(|b| b.notice.clone()).unwrap_or_default();
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
    app.selected = Some(approval.clone());
    focus_approvals(&mut app);
    snapshot_sizes("approvals_with_extension_focused", &mut app);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Tasks, "back to the tasks, where the selection is");
    let terminal = render(&mut app, 160, 48);
    assert!(screen_text(terminal.backend().buffer()).contains("github / create_pull_request  a approve · d deny"));
    press(&mut app, KeyCode::Char('a'));
    assert!(app.steer.outbox.is_empty(), "nothing before the confirmation");
    snapshot_sizes("confirm_approve", &mut app);
    press(&mut app, KeyCode::Char('y'));
    let (agent, crate::event::Command::Send { request, .. }) = app.steer.outbox.pop().unwrap() else {
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
    app.selected = Some(key(RUNNER, WORKING));
    press(&mut app, KeyCode::Char('x'));
    let terminal = render(&mut app, 80, 24);
    assert!(screen_text(terminal.backend().buffer()).contains("Cancel task 3d8f7801 (WORKING) on test-runner?"));
    insta::assert_snapshot!("confirm_cancel_80x24", terminal.backend());
    press(&mut app, KeyCode::Char('n'));
    assert!(
        app.steer.outbox.is_empty() && app.confirm().is_none(),
        "no sends nothing"
    );
}

#[test]
fn inbox_and_new_task_forms() {
    let mut app = app(demo_store());
    press(&mut app, KeyCode::Char('i'));
    snapshot_sizes("inbox", &mut app);
    press(&mut app, KeyCode::Esc);
    app.selected = Some(key(DEPLOYER, APPROVAL));
    press(&mut app, KeyCode::Char('n'));
    type_text(&mut app, "deploy build 2026.10.07-2 to staging");
    snapshot_sizes("new_task", &mut app);
    press(&mut app, KeyCode::Enter);
    let (agent, crate::event::Command::Send { request, .. }) = app.steer.outbox.pop().unwrap() else {
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

/// Answers, confirmations and links: what is sent is what the person saw.
mod answers;

/// Bell, notifications, title, Esc "later", the inbox, paste and Ctrl-C in a dialog.
mod steering;
