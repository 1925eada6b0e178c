//! Benchmark 3, Render: one frame of the main screen to TestBackend 200x50, with 100 / 10,000 / 100,000
//! tasks, in several views; a frame with the store unchanged since the last one, and a frame
//! right after one event changed a task (what happens while work is going on).

use std::time::Instant;

use jiff::{SignedDuration, Timestamp};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use a2a_watch::a2a::{
    Binding, Message, Part, ProtocolVersion, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_watch::app::App;
use a2a_watch::app::keys::KeyMap;
use a2a_watch::event::{AgentInfo, Event, Health};
use a2a_watch::store::Store;
use a2a_watch::store::query::{Filter, SortBy, ViewSpec};
use a2a_watch::theme::Theme;
use a2a_watch::ui::view;

use crate::util::{Section, Verdict, median, ms, quick, say, table};

pub const AGENTS: [&str; 4] = ["test-runner", "code-reviewer", "deployer", "assistant"];
const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;

/// The state of task `i`: mostly working, some finished, a few waiting on a person.
fn state_of(i: usize, waiting: bool) -> TaskState {
    match i % 100 {
        0 | 1 if !waiting => TaskState::Working,
        0 => TaskState::InputRequired,
        1 => TaskState::AuthRequired,
        2..=13 => TaskState::Completed,
        14..=17 => TaskState::Failed,
        _ => TaskState::Working,
    }
}

pub fn base_time() -> Timestamp {
    Timestamp::from_second(1_800_000_000).expect("valid")
}

fn text_of(i: usize, state: &TaskState) -> String {
    match state {
        TaskState::InputRequired => format!("Which environment should build {i} go to?"),
        TaskState::AuthRequired => {
            format!("Deploying build {i} needs operator approval: POST http://127.0.0.1:41243/approve/{i:08x}")
        }
        TaskState::Completed => format!("All {} tests passed", i % 300),
        TaskState::Failed => format!("{} of {} tests failed", i % 7 + 1, i % 300 + 10),
        _ => format!("step {} of 40: running tests/test_{}.py", i % 40, i % 97),
    }
}

fn task(i: usize, at: Timestamp, waiting: bool) -> Task {
    let state = state_of(i, waiting);
    let mut message = Message::agent(vec![Part::text(text_of(i, &state))]);
    message.message_id = format!("m-{i}");
    Task {
        id: format!("{:08x}-5465-460e-9c72-{:012x}", i as u32, i),
        context_id: format!("ctx-{}", i % 50),
        status: TaskStatus {
            state,
            message: Some(message),
            timestamp: Some(at),
        },
        ..Task::default()
    }
}

/// A store as the engine leaves it: four agents streaming, `n` tasks over the last hours.
pub fn store(n: usize, waiting: bool) -> Store {
    let mut store = Store::new(
        AGENTS
            .iter()
            .map(|a| (Some(a.to_string()), format!("http://127.0.0.1/{a}"))),
    );
    for (agent, name) in AGENTS.iter().enumerate() {
        store.apply(Event::Info {
            agent,
            info: AgentInfo {
                name: name.to_string(),
                version: ProtocolVersion::V1_0,
                binding: Binding::JsonRpc,
                streaming: true,
                lists_tasks: true,
                push_off: None,
                card_signature: None,
            },
        });
        store.apply(Event::Health {
            agent,
            health: Health::Streaming,
        });
    }
    let t0 = base_time();
    for i in 0..n {
        let at = t0 - SignedDuration::from_millis((n - i) as i64 * 37);
        store.apply(Event::Snapshot {
            agent: i % AGENTS.len(),
            task: task(i, at, waiting),
            seen: at,
        });
    }
    store
}

pub fn app(n: usize) -> App {
    app_with(n, true)
}

/// `waiting`: 2% of the tasks wait on a person (input- or auth-required); none otherwise.
pub fn app_with(n: usize, waiting: bool) -> App {
    let mut app = App::new(store(n, waiting), KeyMap::default(), Theme::default());
    app.set_now(base_time() + SignedDuration::from_secs(5));
    app.set_tz(jiff::tz::TimeZone::UTC);
    app
}

pub fn views() -> Vec<(&'static str, ViewSpec)> {
    vec![
        ("waiting first (default)", ViewSpec::default()),
        (
            "sorted by updated",
            ViewSpec {
                sort: SortBy::Updated,
                ..ViewSpec::default()
            },
        ),
        (
            "filter `state:working`",
            ViewSpec {
                filter: Filter::parse("state:working"),
                ..ViewSpec::default()
            },
        ),
        (
            "filter text `test_4`",
            ViewSpec {
                filter: Filter::parse("test_4"),
                ..ViewSpec::default()
            },
        ),
        (
            "terminal hidden, by agent",
            ViewSpec {
                sort: SortBy::Agent,
                hide_terminal: true,
                ..ViewSpec::default()
            },
        ),
    ]
}

pub fn frame(terminal: &mut Terminal<TestBackend>, app: &mut App) {
    app.prepare(view::layout(Rect::new(0, 0, WIDTH, HEIGHT), app));
    terminal.draw(|f| view::draw(f, app)).expect("draws");
}

/// One event that changes a task's text (and so the store's version).
pub fn touch(app: &mut App, n: usize, k: usize) {
    let i = (k * 7919) % n.max(1);
    let t = task(i, base_time() + SignedDuration::from_millis(k as i64 + 1), true);
    let mut status = t.status;
    if let Some(m) = status.message.as_mut() {
        m.parts = vec![Part::text(format!("step {k} of 40: running tests/test_{}.py", k % 97))];
    }
    status.state = TaskState::Working;
    app.store_mut().apply(Event::Update {
        agent: i % AGENTS.len(),
        event: StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: t.id,
            context_id: t.context_id,
            status,
            metadata: None,
            generation: 0,
        }),
        seen: base_time(),
    });
}

static TOUCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test backend")
}

/// Median seconds per frame, steady (store unchanged) and after one change.
fn measure(app: &mut App, n: usize, spec: &ViewSpec, frames: usize) -> (f64, f64) {
    let mut term = terminal();
    app.set_spec(spec.clone());
    frame(&mut term, app);
    frame(&mut term, app);
    let mut steady: Vec<f64> = (0..frames)
        .map(|_| {
            let t = Instant::now();
            frame(&mut term, app);
            t.elapsed().as_secs_f64()
        })
        .collect();
    let mut changed: Vec<f64> = (0..frames)
        .map(|_| {
            // Never the same event twice: a repeat changes nothing in the store.
            let k = TOUCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            touch(app, n, k);
            let t = Instant::now();
            frame(&mut term, app);
            t.elapsed().as_secs_f64()
        })
        .collect();
    (median(&mut steady), median(&mut changed))
}

pub fn sizes() -> [usize; 3] {
    [100, 10_000, 100_000]
}

/// The median (unchanged, after one event) frame times, by size (`sizes()`) then view: `views`,
/// then the default view with nothing waiting.
type Results = Vec<Vec<(f64, f64)>>;

/// Every view at every size, on a fresh app a size.
fn measure_all(views: &[(&'static str, ViewSpec)], frames: usize) -> Results {
    let mut results = Vec::new();
    for n in sizes() {
        say(format!("render: {n} tasks"));
        let mut app = app(n);
        let mut per_view: Vec<(f64, f64)> = views
            .iter()
            .map(|(_, spec)| measure(&mut app, n, spec, frames))
            .collect();
        drop(app);
        let mut calm = app_with(n, false);
        per_view.push(measure(&mut calm, n, &ViewSpec::default(), frames));
        results.push(per_view);
    }
    results
}

/// The table's rows, a view a row, and the worst 100k/100 ratios (unchanged, after an event).
fn rows(views: &[(&'static str, ViewSpec)], results: &Results) -> (Vec<Vec<String>>, f64, f64) {
    let mut rows = Vec::new();
    let mut worst_steady: f64 = 0.0;
    let mut worst_changed: f64 = 0.0;
    for (v, (name, _)) in views.iter().enumerate() {
        let s = |i: usize| results[i][v].0;
        let c = |i: usize| results[i][v].1;
        worst_steady = worst_steady.max(s(2) / s(0));
        worst_changed = worst_changed.max(c(2) / c(0));
        rows.push(vec![
            name.to_string(),
            ms(s(0) * 1e3),
            ms(s(1) * 1e3),
            ms(s(2) * 1e3),
            format!("**{:.1}x**", s(2) / s(0)),
            ms(c(0) * 1e3),
            ms(c(1) * 1e3),
            ms(c(2) * 1e3),
            format!("**{:.1}x**", c(2) / c(0)),
        ]);
    }
    (rows, worst_steady, worst_changed)
}

/// The paragraph that picks out the views with nothing waiting, the approvals pane and the filter.
fn where_the_time_goes(views: &[(&'static str, ViewSpec)], results: &Results) -> String {
    let calm = views.len() - 1;
    let filter = views
        .iter()
        .position(|(n, _)| n.starts_with("filter text"))
        .unwrap_or(0);
    let r = |v: usize, mode: usize| {
        let pick = |i: usize| if mode == 0 { results[i][v].0 } else { results[i][v].1 };
        (pick(2) / pick(0), pick(2) * 1e3)
    };
    format!(
        "\n**Where the time goes.** With nothing waiting: 100k/100 = {:.1}x unchanged, {:.1}x after an event ({:.1} ms \
at 100k). With 1% of the tasks auth-required (the approvals pane): {:.1}x unchanged. Text filter after an event: \
{:.1} ms at 100k ({:.1}x). Hot functions: see Profiles.\n",
        r(calm, 0).0,
        r(calm, 1).0,
        r(calm, 1).1,
        r(0, 0).0,
        r(filter, 1).1,
        r(filter, 1).0,
    )
}

pub fn run() -> Section {
    let frames = if quick() { 5 } else { 15 };
    let mut views = views();
    let results = measure_all(&views, frames);
    views.push(("default, nothing waiting (no approvals pane)", ViewSpec::default()));
    let (rows, worst_steady, worst_changed) = rows(&views, &results);
    let verdict = Verdict::of(worst_steady <= 2.0 && worst_changed <= 2.0);
    let body = format!(
        "`App::prepare` (layout, `App::refresh`: the rows of the view) + `Terminal::draw(view::draw)` on a \
`TestBackend` of {WIDTH}x{HEIGHT}, the main screen, four agents, tasks 80% working, 12% completed, 4% failed, 1% \
input-required, 1% auth-required (so the approvals pane scales with them). *Unchanged*: the store has not changed since \
the last frame (what a 1 s age tick redraws). *After one event*: one status update applied just before the frame \
(what every redraw costs while agents work; the loop redraws at most every 33 ms). Median of {frames} frames each.\n\n{}\n\
Target: 100,000-task frame ≤ 2x the 100-task frame. Worst ratio: **{worst_steady:.1}x** unchanged, \
**{worst_changed:.1}x** after an event.\n{why}",
        table(
            &[
                "view",
                "unchanged 100",
                "10k",
                "100k",
                "100k/100",
                "after event 100",
                "10k",
                "100k",
                "100k/100"
            ],
            &rows
        ),
        why = where_the_time_goes(&views, &results),
    );
    Section {
        number: 3,
        title: "Render",
        target: "100k-task frame ≤ 2x the 100-task frame".into(),
        result: format!("100k/100: {worst_steady:.1}x unchanged, {worst_changed:.1}x after an event (worst view)"),
        verdict,
        body,
    }
}
