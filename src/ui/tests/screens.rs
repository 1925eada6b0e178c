//! Each screen and pane as a person sees it, at 80x24 and 160x48.

use super::*;
use crate::event::{LocalServer, SignedCardAtTap};
use crate::traces::ExportStatus;

#[test]
fn main_screen() {
    let mut app = app(demo_store());
    snapshot_sizes("main", &mut app);
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
    let Some(&Detail { scroll: end, .. }) = app.top_popup::<Detail>() else {
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
        app.top_popup::<Detail>()
            .is_some_and(|d| d.key == key(RUNNER, COMPLETED) && d.scroll == end - 1)
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
    assert!(app.popups().len() == 1 && app.top_popup::<Help>().is_some_and(|h| h.page == 0));
    snapshot_sizes("help", &mut app);
    // The whole key map is readable even on 80x24: every action's keys, and the last line.
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let buffer = terminal.backend().buffer();
        for (action, _) in Mode::Main.help() {
            let keys: Vec<String> = (app.keys().keys_for(Mode::Main, *action).iter())
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
    app.set_keys(KeyMap::with_overrides([(Some("confirm"), "o", "yes")]).unwrap());
    press(&mut app, KeyCode::Tab);
    assert!(app.popups().len() == 1 && app.top_popup::<Help>().is_some_and(|h| h.page == 1));
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
    assert!(app.popups().is_empty());
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
        assert_eq!(buffer[(x, y)].fg, app.theme().broken, "{w}x{h}");
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
    let huge = app.store().task(&key(DEPLOYER, "hostile-3")).unwrap();
    let page: Vec<String> = crate::ui::popups::detail::lines(&app, huge, 78)
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

#[test]
fn refused_push_deliveries_are_counted_on_the_agent_row() {
    let mut s = store();
    for _ in 0..2 {
        s.apply(Event::PushRefused { agent: REVIEWER });
    }
    let mut app = app(s);
    let terminal = render(&mut app, 160, 48);
    let buffer = terminal.backend().buffer();
    let shown = "2 push deliveries refused";
    let (x, y) = find(buffer, shown).unwrap_or_else(|| panic!("{}", terminal.backend()));
    assert_eq!(buffer[(x, y)].fg, app.theme().broken);
    let row = screen_text(buffer)
        .lines()
        .nth(usize::from(y))
        .unwrap_or_default()
        .to_string();
    assert!(row.contains("code-reviewer"), "on the agent's own row: {row}");
}

#[test]
fn busy_local_servers_and_a_signed_card_around_the_tap_are_said_on_the_agent_row() {
    let mut s = store();
    s.apply(Event::Busy {
        agent: REVIEWER,
        server: LocalServer::Tap,
    });
    for _ in 0..3 {
        s.apply(Event::Busy {
            agent: REVIEWER,
            server: LocalServer::Push,
        });
    }
    s.apply(Event::TapSignedCard {
        agent: REVIEWER,
        card: SignedCardAtTap::PassedThrough,
    });
    let mut app = app(s);
    let terminal = render(&mut app, 240, 48);
    let text = screen_text(terminal.backend().buffer());
    let row = text.lines().find(|l| l.contains("code-reviewer")).unwrap_or_default();
    for said in [
        "1 refused by the tap (too many connections)",
        "3 refused by the push receiver (too many connections)",
        "signed card kept whole: the planner goes around the tap",
    ] {
        assert!(text.contains(said), "{said}: {}", terminal.backend());
    }
    assert!(row.contains("1 refused by the tap"), "on the agent's own row: {row}");
}

#[test]
fn a_failing_trace_export_is_warned_on_the_title_and_its_drops_counted_on_the_footer() {
    let mut app = app(demo_store());
    let quiet = render(&mut app, 160, 48).backend().buffer().clone();
    app.set_export(Some(ExportStatus::default()));
    let healthy = render(&mut app, 160, 48);
    assert_eq!(
        healthy.backend().buffer(),
        &quiet,
        "an export that goes well says nothing"
    );

    app.set_export(Some(ExportStatus {
        failing: true,
        dropped: 12,
    }));
    snapshot_sizes("export_failing", &mut app);
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let buffer = terminal.backend().buffer();
        for said in ["⚠ traces", "12 spans dropped"] {
            let (x, y) = find(buffer, said).unwrap_or_else(|| panic!("{said}: {}", terminal.backend()));
            assert_eq!(buffer[(x, y)].fg, app.theme().broken, "{said}");
        }
    }
}
