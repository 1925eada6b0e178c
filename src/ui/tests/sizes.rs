//! No panic at any terminal size, down to 1x1, whatever is open: every popup and pane drawn at
//! every size from 1x1 to 30x12 and at lopsided ones, over tasks whose text is long, wide
//! (CJK, emoji), zero-width or combining, and hostile.

use super::*;

/// Text that stresses width arithmetic: a word longer than any screen, double-width characters,
/// zero-width ones, combining marks, emoji sequences, tabs, line breaks and escape sequences.
fn awkward_text() -> String {
    format!(
        "{}\u{200b}\u{200d}\u{feff}e\u{301}\u{301}\u{301} 日本語日本語 👩‍👩‍👧‍👦🇯🇵 \t\ttab\n\n\x1b[2J\u{9b}31m\u{202e}{} {}",
        "x".repeat(120),
        "長".repeat(80),
        "word ".repeat(40)
    )
}

/// Every screen a person can bring up, each as a ready app.
fn every_mode() -> Vec<(&'static str, App)> {
    let text = awkward_text();
    let with_awkward_tasks = || {
        let mut s = demo_store();
        add(
            &mut s,
            REVIEWER,
            "wide-q",
            &text,
            "TASK_STATE_INPUT_REQUIRED",
            &text,
            NOW - 3,
        );
        add(&mut s, DEPLOYER, &text, CTX, "TASK_STATE_AUTH_REQUIRED", &text, NOW - 2);
        add(
            &mut s,
            RUNNER,
            "odd",
            CTX,
            &format!("TASK_STATE_{text}"),
            &text,
            NOW - 1,
        );
        let approval = with_extension_approval(&mut s);
        (s, approval)
    };
    let mut modes = Vec::new();
    let mut mode = |name: &'static str, setup: &dyn Fn(&mut App, &TaskKey), open: fn(&App) -> bool| {
        let (s, approval) = with_awkward_tasks();
        let mut a = app(s);
        setup(&mut a, &approval);
        assert!(open(&a), "{name} is open");
        modes.push((name, a));
    };
    mode("main", &|_, _| {}, |a| a.popups().is_empty());
    mode(
        "filter",
        &|a, _| {
            press(a, KeyCode::Char('/'));
            type_text(a, &"日本".repeat(40));
        },
        |a| a.top_popup::<Filter>().is_some(),
    );
    mode(
        "help",
        &|a, _| {
            press(a, KeyCode::Char('?'));
        },
        |a| a.top_popup::<Help>().is_some(),
    );
    mode(
        "agents",
        &|a, _| {
            press(a, KeyCode::Char('A'));
            press(a, KeyCode::Char('/'));
            type_text(a, &"日本".repeat(40));
            press(a, KeyCode::Enter);
        },
        |a| a.top_popup::<crate::app::popup::agents::AgentsView>().is_some(),
    );
    mode("detail", &|a, _| open_detail(a, key(REVIEWER, "wide-q")), |a| {
        a.top_popup::<Detail>().is_some()
    });
    mode(
        "approvals",
        &|a, approval| {
            a.select(approval.clone());
            press(a, KeyCode::Tab);
        },
        |a| a.focus() == crate::app::Pane::Approvals,
    );
    mode(
        "answer",
        &|a, _| {
            a.open_answer(&key(REVIEWER, "wide-q"));
            type_text(a, &"長い答え ".repeat(60));
        },
        |a| a.popup::<AnswerBox>().is_some(),
    );
    mode(
        "answer to an endless question",
        &|a, _| {
            // More characters and lines than a u16 counts.
            let endless = format!("{}{}", "q".repeat(70_000), "\n".repeat(70_000));
            add(
                a.store_mut(),
                REVIEWER,
                "endless-q",
                CTX,
                "TASK_STATE_INPUT_REQUIRED",
                &endless,
                NOW - 4,
            );
            a.open_answer(&key(REVIEWER, "endless-q"));
        },
        |a| a.popup::<AnswerBox>().is_some(),
    );
    mode(
        "confirm approve",
        &|a, approval| {
            a.select(approval.clone());
            press(a, KeyCode::Char('a'));
        },
        |a| a.popup::<Confirm>().is_some(),
    );
    mode(
        "confirm cancel",
        &|a, _| {
            a.select(key(RUNNER, "odd"));
            press(a, KeyCode::Char('x'));
        },
        |a| a.popup::<Confirm>().is_some(),
    );
    mode(
        "inbox",
        &|a, _| {
            press(a, KeyCode::Char('i'));
        },
        |a| a.popup::<Inbox>().map(|i| i.selected).is_some(),
    );
    mode(
        "new task",
        &|a, _| {
            a.select(key(DEPLOYER, APPROVAL));
            press(a, KeyCode::Char('n'));
            type_text(a, &"🇯🇵".repeat(80));
        },
        |a| a.popup::<NewTask>().is_some(),
    );
    modes
}

#[test]
fn every_mode_draws_at_every_size_down_to_1x1() {
    let odd = [
        (1, 200),
        (200, 1),
        (2, 60),
        (300, 2),
        (3, 3),
        (31, 7),
        (45, 9),
        (80, 4),
        (120, 5),
        (13, 40),
        (400, 150),
    ];
    let small = (1..=30).flat_map(|w| (1..=12).map(move |h| (w, h)));
    let mut panicked = Vec::new();
    for (name, mut app) in every_mode() {
        for (w, h) in small.clone().chain(odd) {
            let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                render(&mut app, w, h);
            }));
            if drawn.is_err() {
                panicked.push(format!("{name} at {w}x{h}"));
            }
        }
    }
    assert!(panicked.is_empty(), "panicked: {panicked:?}");
}
