//! The delegation tree: contexts per agent, tasks nested by `referenceTaskIds`, counts on every
//! branch, collapse and expand, driven through the real key path and pinned by snapshots.

use super::*;
use crate::store::tree::{Node, TaskTree};

const PLAN: &str = "plan-ctx-0001";
const PLANNER: &str = "p0000001-plan";
const ASKS: &str = "a0000002-asks";
const DONE: &str = "d0000003-done";
const DEEP: &str = "e0000004-deep";
const ORPHAN: &str = "f0000005-orph";
const LOOP_A: &str = "c0000006-loop";
const LOOP_B: &str = "c0000007-loop";
const RUN_CTX: &str = "run-ctx-0002";
const ODD: &str = "90000008-odd0";
const FAILED: &str = "90000009-fail";
const HOSTILE: &str = "h0000010-host";

/// A task whose first user message says `asked` and names `refers` in `referenceTaskIds`; its
/// status message says what it is on.
fn task(agent: usize, id: &str, context: &str, state: &str, asked: &str, refers: &[&str], at: i64) -> Event {
    let mut t = task_json(id, context, state, &format!("on it: {asked}"), at);
    t["history"] = json!([{"messageId": format!("u-{id}"), "role": "ROLE_USER",
        "parts": [{"text": asked}], "referenceTaskIds": refers}]);
    snapshot(agent, t, at)
}

/// A planner's context on the assistant with delegations two deep, a reference to a task nobody
/// knows and two tasks that name each other; a context on the test runner with an unknown state;
/// the same context id on the deployer with a hostile first message.
fn tree_store() -> Store {
    let mut s = store();
    let events = [
        task(
            ASSISTANT,
            PLANNER,
            PLAN,
            "TASK_STATE_WORKING",
            "Ship the payments release",
            &[],
            NOW - 500,
        ),
        task(
            ASSISTANT,
            ASKS,
            PLAN,
            "TASK_STATE_INPUT_REQUIRED",
            "which branch?",
            &[PLANNER],
            NOW - 400,
        ),
        task(
            ASSISTANT,
            DONE,
            PLAN,
            "TASK_STATE_COMPLETED",
            "run the tests",
            &[PLANNER],
            NOW - 390,
        ),
        // Seen before the task it names: nested all the same.
        task(
            ASSISTANT,
            DEEP,
            PLAN,
            "TASK_STATE_SUBMITTED",
            "and then",
            &[ASKS],
            NOW - 450,
        ),
        task(
            ASSISTANT,
            ORPHAN,
            PLAN,
            "TASK_STATE_WORKING",
            "orphan",
            &["no-such-task"],
            NOW - 300,
        ),
        task(
            ASSISTANT,
            LOOP_A,
            PLAN,
            "TASK_STATE_WORKING",
            "loop a",
            &[LOOP_B],
            NOW - 200,
        ),
        task(
            ASSISTANT,
            LOOP_B,
            PLAN,
            "TASK_STATE_FAILED",
            "loop b",
            &[LOOP_A],
            NOW - 190,
        ),
        task(
            RUNNER,
            ODD,
            RUN_CTX,
            "TASK_STATE_PAUSED",
            "run the odd suite",
            &[],
            NOW - 100,
        ),
        task(RUNNER, FAILED, RUN_CTX, "TASK_STATE_FAILED", "run again", &[], NOW - 90),
        task(
            DEPLOYER,
            HOSTILE,
            // The same id as the runner's context: another agent, another context.
            RUN_CTX,
            "TASK_STATE_AUTH_REQUIRED",
            "\u{1b}[2J\u{1b}]0;pwned\u{7}deploy \u{1b}[31mnow\u{202e}",
            &[],
            NOW - 50,
        ),
    ];
    for e in events {
        s.apply(e);
    }
    s
}

/// Where `text` starts on screen row `y`.
fn column_on_row(buffer: &Buffer, y: u16, text: &str) -> Option<u16> {
    let row: Vec<&str> = (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect();
    let chars: Vec<String> = text.chars().map(String::from).collect();
    (0..row.len().saturating_sub(chars.len()))
        .find(|&x| chars.iter().enumerate().all(|(i, c)| row[x + i] == c))
        .map(|x| x as u16)
}

/// The rows as (depth, node) pairs, for structure checks.
fn layout(app: &App) -> Vec<(usize, Node)> {
    app.tree()
        .rows_from(0)
        .iter()
        .map(|r| (r.depth, r.node.clone()))
        .collect()
}

fn task_node(agent: usize, id: &str) -> Node {
    Node::Task(key(agent, id))
}

fn context(agent: usize, id: &str) -> Node {
    Node::Context {
        agent: Some(agent),
        id: id.into(),
    }
}

/// The tree app as a person opens it: `v` on the main screen.
fn tree_app() -> App {
    let mut app = app(tree_store());
    render(&mut app, 160, 48);
    assert!(press(&mut app, KeyCode::Char('v')));
    assert!(app.tree().shown);
    app
}

#[test]
fn contexts_are_roots_and_references_nest_tasks() {
    let mut app = tree_app();
    render(&mut app, 160, 48);
    let expected = vec![
        (0, context(DEPLOYER, RUN_CTX)),
        (1, task_node(DEPLOYER, HOSTILE)),
        (0, context(RUNNER, RUN_CTX)),
        (1, task_node(RUNNER, ODD)),
        (1, task_node(RUNNER, FAILED)),
        (0, context(ASSISTANT, PLAN)),
        (1, task_node(ASSISTANT, PLANNER)),
        (2, task_node(ASSISTANT, ASKS)),
        (3, task_node(ASSISTANT, DEEP)),
        (2, task_node(ASSISTANT, DONE)),
        // A missing referent and a cycle: under the context, once each.
        (1, task_node(ASSISTANT, ORPHAN)),
        (1, task_node(ASSISTANT, LOOP_A)),
        (1, task_node(ASSISTANT, LOOP_B)),
    ];
    assert_eq!(layout(&app), expected);
    let planner = app.tree().tree().below(&task_node(ASSISTANT, PLANNER));
    assert_eq!((planner.interrupted, planner.completed, planner.active), (1, 1, 1));
    let plan = app.tree().tree().below(&context(ASSISTANT, PLAN));
    assert_eq!(plan.total(), 7, "a context counts every task on its branches");
    snapshot_sizes("tree", &mut app);
}

#[test]
fn waiting_tasks_are_bold_and_unknown_states_in_the_error_colour() {
    let mut app = tree_app();
    let terminal = render(&mut app, 160, 48);
    let buffer = terminal.backend().buffer();
    let theme = app.theme();
    let (x, y) = find(buffer, &ASKS[..8]).expect("the waiting task is on screen");
    assert!(buffer[(x, y)].modifier.contains(Modifier::BOLD), "its id is bold");
    let (sx, sy) = find(buffer, "INPUT_REQUIRED").unwrap();
    assert_eq!(sy, y);
    assert_eq!(buffer[(sx, sy)].fg, theme.interrupted);
    assert!(buffer[(sx, sy)].modifier.contains(Modifier::BOLD), "its state is bold");
    let (dx, dy) = find(buffer, &DONE[..8]).unwrap();
    assert!(
        !buffer[(dx, dy)].modifier.contains(Modifier::BOLD),
        "a finished task is not"
    );
    // The planner's branch counts the waiting one, bold.
    let wy = row_of(buffer, &PLANNER[..8]);
    let wx = column_on_row(buffer, wy, "◆ 1 waiting").expect("the waiting count on the planner's row");
    assert!(buffer[(wx, wy)].modifier.contains(Modifier::BOLD));
    assert_eq!(buffer[(wx, wy)].fg, theme.interrupted);
    // An unknown state: the table's colour for the error class.
    let (ux, uy) = find(buffer, "PAUSED").expect("the unknown state");
    assert_eq!(uy, row_of(buffer, &ODD[..8]));
    assert_eq!(buffer[(ux, uy)].fg, theme.unknown);
    assert!(buffer[(ux, uy)].modifier.contains(Modifier::REVERSED));
    assert_eq!(
        theme.state(&crate::a2a::TaskState::Unknown("X".into())).fg,
        Some(theme.unknown)
    );
}

#[test]
fn a_hostile_first_message_is_a_clean_label() {
    let mut app = tree_app();
    for (w, h) in SIZES {
        let terminal = render(&mut app, w, h);
        let text = screen_text(terminal.backend().buffer());
        assert_no_debris(&text);
        assert!(text.contains("deployer · deploy now"), "{w}x{h}:\n{text}");
        // The other labels: the first user message of the first task.
        assert!(text.contains("Ship the payments release"), "{w}x{h}:\n{text}");
        assert!(text.contains("run the odd suite"), "{w}x{h}:\n{text}");
    }
}

#[test]
fn collapse_and_expand_through_the_keys_and_survive_updates() {
    let mut app = tree_app();
    render(&mut app, 80, 24);
    // Home goes to the first row, j moves down, as in the table.
    press(&mut app, KeyCode::Home);
    assert_eq!(app.tree().selected, Some(context(DEPLOYER, RUN_CTX)));
    assert_eq!(app.selected().cloned(), None, "a context is no task");
    // Down to the planner (rows: deployer ctx, hostile, runner ctx, odd, failed, plan ctx, planner).
    for _ in 0..6 {
        press(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(
        app.selected().cloned(),
        Some(key(ASSISTANT, PLANNER)),
        "a task row selects its task"
    );
    press(&mut app, KeyCode::Left);
    assert!(app.tree().is_collapsed(&task_node(ASSISTANT, PLANNER)));
    let rows = layout(&app);
    assert!(
        !rows.iter().any(|(_, n)| *n == task_node(ASSISTANT, ASKS)),
        "its children are hidden"
    );
    let terminal = render(&mut app, 80, 24);
    insta::assert_snapshot!("tree_collapsed_80x24", terminal.backend());
    // The planner's counts stay on its closed branch.
    let buffer = terminal.backend().buffer();
    let planner_y = row_of(buffer, &PLANNER[..8]);
    assert!(column_on_row(buffer, planner_y, "◆ 1 waiting").is_some());
    // A new task and a state move: the tree is built again, the branch stays closed.
    add(
        app.store_mut(),
        ASSISTANT,
        "n0000011-new0",
        PLAN,
        "TASK_STATE_WORKING",
        "new",
        NOW - 1,
    );
    app.store_mut().apply(status_update(
        ASSISTANT,
        DONE,
        PLAN,
        "TASK_STATE_COMPLETED",
        "done again",
        NOW,
    ));
    render(&mut app, 80, 24);
    assert!(app.tree().is_collapsed(&task_node(ASSISTANT, PLANNER)));
    assert!(
        layout(&app)
            .iter()
            .any(|(_, n)| *n == task_node(ASSISTANT, "n0000011-new0"))
    );
    assert_eq!(
        app.selected().cloned(),
        Some(key(ASSISTANT, PLANNER)),
        "the selection stays on its task"
    );
    // Right opens it; Left on a leaf goes to its parent; space closes and opens.
    press(&mut app, KeyCode::Right);
    assert!(!app.tree().is_collapsed(&task_node(ASSISTANT, PLANNER)));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.selected().cloned(), Some(key(ASSISTANT, DEEP)));
    press(&mut app, KeyCode::Char('h'));
    assert_eq!(
        app.selected().cloned(),
        Some(key(ASSISTANT, ASKS)),
        "left on a leaf: its parent"
    );
    press(&mut app, KeyCode::Char(' '));
    assert!(app.tree().is_collapsed(&task_node(ASSISTANT, ASKS)));
    press(&mut app, KeyCode::Char(' '));
    assert!(!app.tree().is_collapsed(&task_node(ASSISTANT, ASKS)));
    // ⏎ on a task opens its details, as in the table; on a context it closes the context.
    press(&mut app, KeyCode::Enter);
    assert!(app.top_popup::<Detail>().is_some_and(|d| d.key == key(ASSISTANT, ASKS)));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('g'));
    press(&mut app, KeyCode::Enter);
    assert!(app.popups().is_empty());
    assert!(app.tree().is_collapsed(&context(DEPLOYER, RUN_CTX)));
    // End is the last row; `v` brings the table back, on the same task.
    press(&mut app, KeyCode::End);
    let last = app.selected().cloned().expect("the last row is a task");
    press(&mut app, KeyCode::Char('v'));
    let terminal = render(&mut app, 160, 48);
    assert!(!app.tree().shown);
    assert_eq!(app.selected(), Some(&last));
    assert!(find(terminal.backend().buffer(), " Tasks ").is_some());
}

/// The counts kept as tasks move (without building the tree again) are the counts a fresh
/// build finds.
#[test]
fn counts_kept_through_state_moves_match_a_fresh_build() {
    let mut app = tree_app();
    render(&mut app, 160, 48);
    let moves = [
        (ASKS, "TASK_STATE_WORKING"),
        (DEEP, "TASK_STATE_INPUT_REQUIRED"),
        (PLANNER, "TASK_STATE_AUTH_REQUIRED"),
        (ASKS, "TASK_STATE_COMPLETED"),
    ];
    for (i, (id, state)) in moves.into_iter().enumerate() {
        app.store_mut()
            .apply(status_update(ASSISTANT, id, PLAN, state, "moved", NOW + i as i64));
        render(&mut app, 160, 48);
    }
    let fresh = TaskTree::build(app.store(), app.spec());
    for node in [
        context(ASSISTANT, PLAN),
        task_node(ASSISTANT, PLANNER),
        task_node(ASSISTANT, ASKS),
    ] {
        assert_eq!(app.tree().tree().below(&node), fresh.below(&node), "{node:?}");
    }
    let plan = app.tree().tree().below(&context(ASSISTANT, PLAN));
    assert_eq!((plan.interrupted, plan.completed), (2, 2));
}

#[test]
fn the_filter_applies_to_the_tree() {
    let mut app = tree_app();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "agent:test-runner");
    press(&mut app, KeyCode::Enter);
    let terminal = render(&mut app, 80, 24);
    assert_eq!(
        layout(&app),
        vec![
            (0, context(RUNNER, RUN_CTX)),
            (1, task_node(RUNNER, ODD)),
            (1, task_node(RUNNER, FAILED))
        ]
    );
    let text = screen_text(terminal.backend().buffer());
    assert!(text.contains("filter: agent:test-runner"), "{text}");
    // Nothing matches: the table's message.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, " nothing-at-all");
    let terminal = render(&mut app, 80, 24);
    assert!(find(terminal.backend().buffer(), "No task matches the filter").is_some());
}

#[test]
fn the_tree_keys_can_be_remapped() {
    let mut app = app(tree_store());
    app.set_keys(
        KeyMap::with_overrides([
            (None, "T", "toggle_tree"),
            (None, "v", "none"),
            (None, "z", "toggle_branch"),
        ])
        .unwrap(),
    );
    render(&mut app, 80, 24);
    press(&mut app, KeyCode::Char('v'));
    assert!(!app.tree().shown, "v is unbound");
    press(&mut app, KeyCode::Char('T'));
    assert!(app.tree().shown);
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Char('z'));
    assert!(app.tree().is_collapsed(&context(DEPLOYER, RUN_CTX)));
    // Help lists the remapped key.
    press(&mut app, KeyCode::Char('?'));
    let terminal = render(&mut app, 160, 48);
    let buffer = terminal.backend().buffer();
    assert!(find(buffer, "T  delegation tree or table").is_some());
    assert!(
        find(buffer, "z  tree: collapse or expand").is_some(),
        "{}",
        terminal.backend()
    );
}

/// A chain of references as long as a hostile agent likes: no recursion to overflow, and only
/// the rows on screen are drawn.
#[test]
fn a_long_chain_of_references_neither_loops_nor_overflows() {
    let mut s = store();
    let n = 20_000;
    for i in 0..n {
        let refers = if i == 0 {
            vec![]
        } else {
            vec![format!("chain-{}", i - 1)]
        };
        let refers: Vec<&str> = refers.iter().map(String::as_str).collect();
        s.apply(task(
            RUNNER,
            &format!("chain-{i}"),
            "chain",
            "TASK_STATE_WORKING",
            "go",
            &refers,
            i,
        ));
    }
    let mut app = app(s);
    press(&mut app, KeyCode::Char('v'));
    render(&mut app, 80, 24);
    assert_eq!(app.tree().row_count(), n as usize + 1);
    assert_eq!(app.tree().tree().below(&context(RUNNER, "chain")).active, n as usize);
    press(&mut app, KeyCode::End);
    let terminal = render(&mut app, 80, 24);
    assert!(
        find(terminal.backend().buffer(), "chain-19").is_some(),
        "{}",
        terminal.backend()
    );
}

/// What a planner delegated through taps is one root, its context across the agents it went to
/// (the planner's fan-out), labelled "planner"; the same context id seen only by a2a-watch's own
/// listing stays its agent's. A task first listed, then seen in the planner's traffic, moves.
#[test]
fn a_planners_tapped_delegations_are_one_root_across_agents() {
    let mut s = store();
    let fan = "fan-ctx-0003";
    for (agent, id, state, asked, at) in [
        (
            RUNNER,
            "r0000011-fan",
            "TASK_STATE_COMPLETED",
            "run the tests of the release",
            NOW - 60,
        ),
        (
            DEPLOYER,
            "d0000012-fan",
            "TASK_STATE_AUTH_REQUIRED",
            "deploy it",
            NOW - 50,
        ),
        (
            ASSISTANT,
            "a0000013-own",
            "TASK_STATE_WORKING",
            "not the planner's",
            NOW - 40,
        ),
    ] {
        if agent != ASSISTANT {
            s.apply(Event::Tapped {
                agent,
                task: id.into(),
                seen: ts(at),
                trace: None,
            });
        }
        s.apply(task(agent, id, fan, state, asked, &[], at));
    }
    let mut app = app(s);
    render(&mut app, 160, 48);
    assert!(press(&mut app, KeyCode::Char('v')));
    render(&mut app, 160, 48);
    let planner = Node::Context {
        agent: None,
        id: fan.into(),
    };
    assert_eq!(
        layout(&app),
        [
            (0, context(ASSISTANT, fan)),
            (1, task_node(ASSISTANT, "a0000013-own")),
            (0, planner.clone()),
            (1, task_node(RUNNER, "r0000011-fan")),
            (1, task_node(DEPLOYER, "d0000012-fan")),
        ]
    );
    let below = app.tree().tree().below(&planner);
    assert_eq!((below.completed, below.interrupted), (1, 1));
    let text = screen_text(&render(&mut app, 160, 48).backend().buffer().clone());
    assert!(text.contains("planner · run the tests of the release"), "{text}");
    // A planner's branch spans agents: each of its tasks names its agent.
    assert!(
        text.contains("test-runner r0000011") && text.contains("deployer d0000012"),
        "{text}"
    );
    assert!(
        !text.contains("assistant a0000013"),
        "not the planner's: its context names the agent\n{text}"
    );

    // The assistant's task turns up in the planner's traffic: it joins the planner's root.
    app.store_mut().apply(Event::Tapped {
        agent: ASSISTANT,
        task: "a0000013-own".into(),
        seen: ts(NOW),
        trace: None,
    });
    app.on_changes(&[]);
    render(&mut app, 160, 48);
    assert_eq!(
        layout(&app),
        [
            (0, planner),
            (1, task_node(RUNNER, "r0000011-fan")),
            (1, task_node(DEPLOYER, "d0000012-fan")),
            (1, task_node(ASSISTANT, "a0000013-own")),
        ]
    );
}
