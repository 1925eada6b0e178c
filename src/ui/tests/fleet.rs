//! A fleet on one screen (issue 23): fifty agents in three groups, some unreachable, one
//! unauthorized, some waiting on a person. The strip says what matters of them, the title counts
//! each group, and the agents view (`A`) lists them all, sorted, filtered and grouped; ⏎ on one
//! narrows the table to its tasks. Snapshots at 80x24 and 160x45.

use super::*;
use crate::app::popup::agents::{AgentSort, AgentsView};
use crate::event::WatchMode;

const FLEET_SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

/// Each group and how many agents it has, in the order the config names them.
const GROUPS: [(&str, usize); 3] = [("payments", 20), ("search", 18), ("ops", 12)];

fn agent_id(s: &Store, name: &str) -> usize {
    (s.agents.iter().position(|a| a.name == name)).unwrap_or_else(|| panic!("no agent {name}"))
}

/// Fifty agents: `payments-01` .. `payments-20`, `search-01` .. `search-18`, `ops-01` ..
/// `ops-12`; every one streaming a working task or two, except these.
fn fleet() -> Store {
    let names: Vec<(String, &str)> = (GROUPS.iter())
        .flat_map(|(group, n)| (1..=*n).map(move |i| (format!("{group}-{i:02}"), *group)))
        .collect();
    let mut s = Store::new(
        (names.iter().enumerate())
            .map(|(i, (name, _))| (Some(name.clone()), format!("http://127.0.0.1:{}", 42000 + i))),
    );
    for (agent, (_, group)) in names.iter().enumerate() {
        s.agents[agent].group = Some(group.to_string());
        let version = if agent % 9 == 4 {
            ProtocolVersion::V0_3
        } else {
            ProtocolVersion::V1_0
        };
        let binding = if agent % 3 == 1 {
            Binding::Rest
        } else {
            Binding::JsonRpc
        };
        s.apply(card_read(agent, names[agent].0.clone(), version, binding));
        s.apply(Event::Health {
            agent,
            health: Health::Streaming,
        });
        let id = format!("{}-t1", names[agent].0);
        let at = NOW - 5 - (agent as i64 * 7) % 300;
        add(&mut s, agent, &id, CTX, "TASK_STATE_WORKING", "working", at);
        s.apply(Event::Watching {
            agent,
            task: id,
            mode: if agent % 5 == 3 {
                WatchMode::Polling
            } else {
                WatchMode::Streaming
            },
        });
        if agent % 4 == 0 {
            let done = format!("{}-t0", names[agent].0);
            add(&mut s, agent, &done, CTX, "TASK_STATE_COMPLETED", "done", at - 60);
        }
    }
    let trouble = [
        (
            "payments-07",
            Health::Unreachable {
                reason: "payments-07: cannot connect to http://127.0.0.1:42006: connection refused".into(),
            },
        ),
        (
            "search-12",
            Health::Unreachable {
                reason: "no answer within 30 s".into(),
            },
        ),
        (
            "ops-03",
            Health::Unauthorized {
                message: "401 unauthorized: the card asks for a Bearer token; set A2A_TOKEN_OPS_03".into(),
            },
        ),
        (
            "search-04",
            Health::Reconnecting {
                attempt: 2,
                reason: "stream closed".into(),
            },
        ),
        (
            "ops-09",
            Health::Polling {
                reason: "the card offers no streaming".into(),
            },
        ),
    ];
    for (name, health) in trouble {
        let agent = agent_id(&s, name);
        if let Health::Reconnecting { reason, .. } = &health {
            s.apply(Event::Health {
                agent,
                health: Health::Reconnecting {
                    attempt: 1,
                    reason: reason.clone(),
                },
            });
        }
        s.apply(Event::Health { agent, health });
    }
    for (name, id, state, text) in [
        (
            "payments-02",
            "refund-q",
            "TASK_STATE_INPUT_REQUIRED",
            "Refund 1,200 EUR to order 8812?",
        ),
        (
            "search-15",
            "reindex-ok",
            "TASK_STATE_AUTH_REQUIRED",
            "Approve reindexing prod?",
        ),
        (
            "ops-05",
            "rollout-q",
            "TASK_STATE_INPUT_REQUIRED",
            "Which region first?",
        ),
        ("ops-05", "drain-q", "TASK_STATE_INPUT_REQUIRED", "Drain node 4 now?"),
        ("ops-11", "backup", "TASK_STATE_FAILED", "disk full"),
    ] {
        let agent = agent_id(&s, name);
        add(&mut s, agent, id, CTX, state, text, NOW - 30);
    }
    s
}

fn fleet_app() -> App {
    let mut a = app(fleet());
    // Laid out once, as the loop does before keys arrive, so paging knows the screen.
    render(&mut a, 80, 24);
    a
}

fn snapshot_fleet(name: &str, app: &mut App) {
    for (w, h) in FLEET_SIZES {
        let terminal = render(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), terminal.backend());
    }
}

fn view(app: &App) -> &AgentsView {
    app.top_popup::<AgentsView>().expect("the agents view is open")
}

/// The agents view's rows, by name.
fn row_names(app: &App) -> Vec<String> {
    let store = app.store();
    let rows = app.popup::<AgentsView>().expect("the agents view is open").rows(store);
    rows.iter().map(|a| store.agent_name(*a).to_string()).collect()
}

#[test]
fn fifty_agents_strip_and_title() {
    let mut app = fleet_app();
    snapshot_fleet("fleet_main", &mut app);
    for (w, h) in FLEET_SIZES {
        let terminal = render(&mut app, w, h);
        let text = screen_text(terminal.backend().buffer());
        let strip = text.lines().nth(1).unwrap();
        assert!(
            strip.ends_with("50 agents · 2 unreachable · 1 reconnecting · 1 unauthorized · A all "),
            "{strip}"
        );
        // The troubled are named first, whole, where there is room; no name is cut at the edge.
        let named = if w < 100 {
            "            "
        } else {
            " ✖ payments-07 unreachable  ◌ search-04 reconnecting  ✖ search-12 unreachable   "
        };
        assert!(strip.starts_with(named), "{strip}");
    }
    let wide = screen_text(render(&mut app, 160, 45).backend().buffer());
    let title = wide.lines().next().unwrap();
    assert!(
        title.contains("payments 20 ✖1 ◆1  search 18 ✖2 ◆1  ops 12 ⊘1 ◆2"),
        "{title}"
    );
}

#[test]
fn fifty_agents_view() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    assert_eq!(view(&app).sort, AgentSort::Attention);
    snapshot_fleet("fleet_agents", &mut app);
    // Another order, and a filter typed after `/`, over the same view.
    press(&mut app, KeyCode::Char('s'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "group:ops");
    press(&mut app, KeyCode::Enter);
    snapshot_fleet("fleet_agents_ops_by_name", &mut app);
}

#[test]
fn needs_attention_puts_the_unreachable_then_the_unauthorized_then_the_waiting_first_in_each_group() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    let rows = row_names(&app);
    assert_eq!(rows.len(), 50);
    assert_eq!(&rows[..3], ["payments-07", "payments-02", "payments-01"]);
    // After payments' 20 rows; reconnecting is not reachable either.
    assert_eq!(&rows[20..24], ["search-04", "search-12", "search-15", "search-01"]);
    let ops = rows.iter().position(|n| n.starts_with("ops-")).unwrap();
    assert_eq!(&rows[ops..ops + 3], ["ops-03", "ops-05", "ops-01"]);
    // Without groups, the whole fleet is one list in that order.
    for a in &mut app.store_mut().agents {
        a.group = None;
    }
    assert_eq!(
        &row_names(&app)[..7],
        [
            "payments-07",
            "search-04",
            "search-12",
            "ops-03",
            "ops-05",
            "payments-02",
            "search-15"
        ]
    );
}

#[test]
fn s_goes_through_the_orders_and_back() {
    let mut app = fleet_app();
    for a in &mut app.store_mut().agents {
        a.group = None;
    }
    press(&mut app, KeyCode::Char('A'));
    let mut seen = Vec::new();
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('s'));
        seen.push((view(&app).sort, row_names(&app)[0].clone()));
    }
    assert_eq!(
        seen,
        [
            (AgentSort::Name, "ops-01".to_string()),
            (AgentSort::Waiting, "ops-05".to_string()),
            // Its one task was seen the longest ago (ops-05's questions came since).
            (AgentSort::LastEvent, "ops-04".to_string()),
            (AgentSort::Attention, "payments-07".to_string()),
        ]
    );
    press(&mut app, KeyCode::Char('s'));
    press(&mut app, KeyCode::Char('s'));
    press(&mut app, KeyCode::Char('s'));
    let store = app.store();
    let last: Vec<_> = (view(&app).rows(store).iter())
        .map(|a| store.agents[*a].last_event)
        .collect();
    assert!(last.is_sorted(), "quietest first: {last:?}");
}

#[test]
fn the_filter_narrows_the_view_not_the_table_and_esc_drops_it() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "unreachable");
    assert_eq!(row_names(&app), ["payments-07", "search-12"]);
    assert!(app.spec().filter.is_empty(), "the table's filter is left alone");
    press(&mut app, KeyCode::Esc);
    assert_eq!(row_names(&app).len(), 50);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "g:search !reconnecting");
    press(&mut app, KeyCode::Enter);
    let rows = row_names(&app);
    assert_eq!(rows.len(), 17);
    assert!(
        rows.iter().all(|n| n.starts_with("search-") && n != "search-04"),
        "{rows:?}"
    );
    // Opened again, the filter box starts from what the view holds.
    press(&mut app, KeyCode::Char('/'));
    assert_eq!(app.top_popup::<Filter>().unwrap().input, "g:search !reconnecting");
}

#[test]
fn enter_on_an_agent_goes_back_to_the_table_of_its_tasks_and_esc_closes_the_view() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    press(&mut app, KeyCode::Esc);
    assert!(app.popups().is_empty());
    // `payments-01` is a part of no other name, `ops-05` waits twice.
    press(&mut app, KeyCode::Char('A'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "ops");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Down);
    assert_eq!(view(&app).selected.map(|a| app.store().agent_name(a)), Some("ops-05"));
    press(&mut app, KeyCode::Enter);
    assert!(app.popups().is_empty());
    assert_eq!(app.spec().filter.text(), "agent:ops-05");
    let ops_05 = agent_id(app.store(), "ops-05");
    let rows = app.rows();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().all(|k| k.agent == ops_05));
    assert_eq!(app.selected().map(|k| k.agent), Some(ops_05));
}

#[test]
fn enter_picks_one_agent_even_when_its_name_is_part_of_others() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "agent:payments-01");
    press(&mut app, KeyCode::Enter);
    assert_eq!(row_names(&app), ["payments-01"], "not payments-010 and the like");
    press(&mut app, KeyCode::Enter);
    let rows = app.rows();
    assert_eq!(rows.len(), 2, "its working and its completed task: {rows:?}");
}

#[test]
fn the_view_and_its_keys_are_remappable_and_in_help() {
    let keys = KeyMap::with_overrides([(None, "F", "agents"), (Some("agents"), "x", "back")]).unwrap();
    let mut app = fleet_app();
    app.set_keys(keys);
    press(&mut app, KeyCode::Char('F'));
    assert!(app.top_popup::<AgentsView>().is_some());
    press(&mut app, KeyCode::Char('x'));
    assert!(app.popups().is_empty());
    let main: Vec<_> = Mode::Main.help().iter().map(|(a, _)| *a).collect();
    assert!(main.contains(&crate::app::keys::Action::Agents));
    assert_eq!(Mode::Agents.name(), "agents");
}

#[test]
fn the_selected_row_stays_on_screen_with_its_group_header() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    for _ in 0..4 {
        press(&mut app, KeyCode::PageDown);
    }
    let last_row = view(&app).rows(app.store()).last().copied();
    assert_eq!(view(&app).selected, last_row, "paged to the last row, no further");
    let terminal = render(&mut app, 80, 24);
    let buffer = terminal.backend().buffer();
    let text = screen_text(buffer);
    let last = row_of(buffer, "▶ ops-12");
    assert_eq!(last, 21, "the last row of the view, just above its border:\n{text}");
    assert!(row_of(buffer, "▸ ops 12") < last, "{text}");
    // The scroll follows the selection (nothing else is kept): one up, one row back.
    press(&mut app, KeyCode::Up);
    let terminal = render(&mut app, 80, 24);
    assert_eq!(row_of(terminal.backend().buffer(), "▶ ops-11"), 21);
    assert_eq!(row_of(terminal.backend().buffer(), "search-18"), 9);
}

#[test]
fn the_selection_follows_the_agent_when_the_rows_move() {
    let mut app = fleet_app();
    press(&mut app, KeyCode::Char('A'));
    for _ in 0..2 {
        press(&mut app, KeyCode::Down);
    }
    let chosen = view(&app).selected.expect("an agent is selected");
    assert_eq!(app.store().agent_name(chosen), "payments-01");
    // Another agent of its group goes down and moves above it; then another order.
    let down = agent_id(app.store(), "payments-09");
    app.store_mut().apply(Event::Health {
        agent: down,
        health: Health::Unreachable {
            reason: "connection refused".into(),
        },
    });
    let rows = view(&app).rows(app.store());
    assert_eq!(view(&app).selected_row(&rows), 3, "one row lower, still payments-01");
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(view(&app).selected, Some(chosen));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.spec().filter.text(), "agent:payments-01");
}

#[test]
fn a_click_on_the_strip_opens_the_agents_view() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let mut app = fleet_app();
    let click = |row| {
        TermEvent::Mouse(MouseEvent {
            kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
            column: 40,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    on_terminal_event(&mut app, click(0));
    assert!(app.popups().is_empty(), "the title is not the strip");
    on_terminal_event(&mut app, click(1));
    assert!(app.top_popup::<AgentsView>().is_some());
}
