//! What the audience sees (issue 13): task ids alike for 8 characters told apart, the detail
//! pane's keys in the footer and its pages, the compact approvals strip following the table.

use super::*;

/// Ids a flood of tasks gives, and UUIDs (v7-like) that share their first 15 characters.
const FLOOD: [&str; 3] = ["t-flood-99", "t-flood-990", "t-flood-991"];
const UUID_A: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const UUID_B: &str = "0190a1b2-c3d4-7f00-8a9b-0c1d2e3f4a5b";

fn alike_store() -> Store {
    let mut s = store();
    for (i, id) in FLOOD.iter().enumerate() {
        add(
            &mut s,
            RUNNER,
            id,
            CTX,
            "TASK_STATE_WORKING",
            "flooding",
            NOW - 10 - i as i64,
        );
    }
    add(
        &mut s,
        DEPLOYER,
        UUID_A,
        CTX,
        "TASK_STATE_AUTH_REQUIRED",
        "approve a",
        NOW - 30,
    );
    add(
        &mut s,
        DEPLOYER,
        UUID_B,
        CTX,
        "TASK_STATE_COMPLETED",
        "done b",
        NOW - 40,
    );
    add(
        &mut s,
        REVIEWER,
        "e5c95b09-1f3a-4c2e-9d1b-7a5e3f0c2b11",
        CTX,
        "TASK_STATE_WORKING",
        "",
        NOW - 50,
    );
    s
}

#[test]
fn ids_alike_show_what_tells_them_apart() {
    let s = alike_store();
    let shown = |id: &str| super::super::format::task_id(&s, id);
    // An id that is the start of another is shown whole; the others as far as they differ.
    assert_eq!(shown("t-flood-99"), "t-flood-99");
    assert_eq!(shown("t-flood-990"), "t-flood-990");
    assert_eq!(shown("t-flood-991"), "t-flood-991");
    assert_eq!(shown(UUID_A), "0190a1b2-c3d4-7e…");
    assert_eq!(shown(UUID_B), "0190a1b2-c3d4-7f…");
    // An id no other starts like keeps the 8 characters people quote.
    assert_eq!(shown("e5c95b09-1f3a-4c2e-9d1b-7a5e3f0c2b11"), "e5c95b09");
    let mut app = app(s);
    snapshot_sizes("ids_alike", &mut app);
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let text = screen_text(terminal.backend().buffer());
        for id in [
            "t-flood-99 ",
            "t-flood-990",
            "t-flood-991",
            "0190a1b2-c3d4-7e…",
            "0190a1b2-c3d4-7f…",
        ] {
            assert!(text.contains(id), "{w}x{h}: {id:?} is not on screen:\n{text}");
        }
    }
}

#[test]
fn ids_alike_are_told_apart_in_the_tree_the_inbox_and_the_approvals() {
    let mut s = alike_store();
    add(
        &mut s,
        RUNNER,
        "t-flood-9",
        CTX,
        "TASK_STATE_INPUT_REQUIRED",
        "which?",
        NOW - 5,
    );
    let mut app = app(s);
    focus_approvals(&mut app);
    let terminal = render(&mut app, 160, 48);
    let approvals = screen_text(terminal.backend().buffer());
    assert!(approvals.contains("deployer  0190a1b2-c3d4-7e…  0:30"), "{approvals}");
    press(&mut app, KeyCode::Char('i'));
    let terminal = render(&mut app, 160, 48);
    let inbox = screen_text(terminal.backend().buffer());
    for id in ["0190a1b2-c3d4-7e… ", "t-flood-9         "] {
        assert!(inbox.contains(id), "the inbox aligns {id:?}:\n{inbox}");
    }
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('v'));
    let terminal = render(&mut app, 80, 24);
    let tree = screen_text(terminal.backend().buffer());
    for id in FLOOD.iter().chain([&"t-flood-9 ", &"0190a1b2-c3d4-7f…"]) {
        assert!(tree.contains(id), "{id:?} is not in the tree:\n{tree}");
    }
}

/// A task whose detail page is a few hundred lines long.
fn long_task_store() -> (Store, TaskKey) {
    let mut s = demo_store();
    let mut task = task_json("long-1", CTX, "TASK_STATE_COMPLETED", "done", NOW - 60);
    let log: String = (1..=300).map(|i| format!("log line {i}\n")).collect();
    task["artifacts"] = json!([{"artifactId": "log", "name": "run.log", "parts": [{"text": log}]}]);
    s.apply(snapshot(RUNNER, task, NOW - 60));
    (s, key(RUNNER, "long-1"))
}

fn footer(terminal: &Terminal<TestBackend>) -> String {
    let text = screen_text(terminal.backend().buffer());
    text.lines().last().unwrap_or_default().to_string()
}

#[test]
fn the_footer_shows_the_detail_panes_keys_as_mapped() {
    let (s, task) = long_task_store();
    let mut app = app(s);
    open_detail(&mut app, task.clone());
    let terminal = render(&mut app, 80, 24);
    insta::assert_snapshot!("detail_footer_80x24", footer(&terminal));
    // Page down and back on other keys: the footer names them, and they work.
    app.set_keys(
        KeyMap::with_overrides([
            (None, "pgdn", "none"),
            (None, "ctrl-f", "none"),
            (None, "ctrl-d", "page_down"),
            (None, "esc", "none"),
            (None, "backspace", "back"),
        ])
        .unwrap(),
    );
    let terminal = render(&mut app, 80, 24);
    insta::assert_snapshot!("detail_footer_remapped_80x24", footer(&terminal));
    let ctrl_d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL);
    on_terminal_event(&mut app, TermEvent::Key(ctrl_d));
    assert!(app.top_popup::<Detail>().is_some_and(|d| d.scroll > 0));
    press(&mut app, KeyCode::Backspace);
    assert!(app.top().is_none(), "the remapped back key closes the pane");
    let terminal = render(&mut app, 80, 24);
    assert!(footer(&terminal).contains("⏎ details"), "the main keys again");
}

/// The text rows of the detail pane: inside its border, between the title and the footer.
fn detail_rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let text = screen_text(terminal.backend().buffer());
    let rows: Vec<&str> = text.lines().collect();
    rows[2..rows.len() - 2].iter().map(|r| r.to_string()).collect()
}

#[test]
fn page_down_in_the_detail_pane_moves_by_its_height() {
    for height in [24u16, 40] {
        let (s, task) = long_task_store();
        let mut app = app(s);
        open_detail(&mut app, task.clone());
        let before = detail_rows(&render(&mut app, 80, height));
        // Title, border, border, footer: the rest is text.
        let visible = usize::from(height) - 4;
        assert_eq!(before.len(), visible);
        press(&mut app, KeyCode::PageDown);
        let after = detail_rows(&render(&mut app, 80, height));
        assert!(
            app.top_popup::<Detail>().is_some_and(|d| d.scroll == visible - 1),
            "{height} rows: a page is {} lines",
            visible - 1
        );
        assert_eq!(
            after[0],
            before[visible - 1],
            "the last line stays on screen as the first"
        );
        press(&mut app, KeyCode::PageUp);
        assert_eq!(detail_rows(&render(&mut app, 80, height)), before, "and back");
    }
}

/// Three approvals waiting, the oldest first: the deployer's, then two on the assistant.
fn three_approvals() -> (Store, [TaskKey; 3]) {
    let mut s = demo_store();
    let link = |id: &str| format!("approve at http://127.0.0.1:41244/approve/{id}");
    for (id, at) in [("a2000000-second", NOW - 50), ("a3000000-third", NOW - 40)] {
        add(&mut s, ASSISTANT, id, CTX, "TASK_STATE_AUTH_REQUIRED", &link(id), at);
    }
    let keys = [
        key(DEPLOYER, APPROVAL),
        key(ASSISTANT, "a2000000-second"),
        key(ASSISTANT, "a3000000-third"),
    ];
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(s.approval_index(k), Some(i));
    }
    (s, keys)
}

fn line_at(buffer: &Buffer, row: u16) -> String {
    screen_text(buffer)
        .lines()
        .nth(usize::from(row))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_compact_approvals_strip_follows_the_tables_selection() {
    let (s, [first, second, _]) = three_approvals();
    let mut app = app(s);
    // A task that waits for nothing: the strip shows what the pane has selected, plainly.
    app.select(key(RUNNER, WORKING));
    let terminal = render(&mut app, 80, 24);
    let buffer = terminal.backend().buffer();
    let strip = row_of(buffer, "3 waiting for approval 1/3");
    assert!(line_at(buffer, strip).contains("deployer  ecf2dcb6"));
    assert_ne!(buffer[(0, strip)].bg, app.theme().selection);
    assert_eq!(app.target_approval(), Some(first));
    // The second of the three approvals selected in the table: the strip shows it.
    app.select(second.clone());
    let terminal = render(&mut app, 80, 24);
    insta::assert_snapshot!("compact_strip_follows_80x24", terminal.backend());
    let buffer = terminal.backend().buffer();
    let strip = row_of(buffer, "3 waiting for approval 2/3");
    assert!(line_at(buffer, strip).contains("assistant  a2000000"));
    assert!(
        find(buffer, "approve/a2000000-second").is_some(),
        "its link:\n{}",
        screen_text(buffer)
    );
    assert_eq!(buffer[(0, strip)].bg, app.theme().selection, "highlighted like the row");
    assert_eq!(
        app.target_approval(),
        Some(second.clone()),
        "what the keys act on is what is shown"
    );
    // Focusing the strip keeps that approval, now as the strip's own selection.
    focus_approvals(&mut app);
    let terminal = render(&mut app, 80, 24);
    let buffer = terminal.backend().buffer();
    assert!(line_at(buffer, row_of(buffer, "▶ 3 waiting for approval 2/3")).contains("a2000000"));
    assert_eq!(app.target_approval(), Some(second));
}
