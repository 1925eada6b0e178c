//! Benchmark 12, the fleet (issue 23): many agents, many tasks, each stream one status update
//! every few seconds, so that every event arrives alone in its own read: the opposite of the
//! firehose of benchmarks 2 and 9. One fleet of load agents (`serve-load --agents A --tasks T
//! --rate 0.2 --spread --hold`) serves, one after another, a bare reqwest reader, `a2a-watch
//! --headless`, `--json`, the dashboard at 160x45 in tmux and the official Python SDK client,
//! each following every task. Per reader, over a window after every stream is open: CPU per
//! event, context switches per event, RSS, and RSS per open stream (against `--max-streams 1`).
//!
//! ```text
//! cargo bench --bench perf -- fleet [--seconds 60] [--agents 50] [--tasks-per-agent 40]
//!                                   [--large-tasks-per-agent 200]   (0: no 10,000-task row)
//! ```

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::idle::{Session, start_in_tmux, tmux};
use crate::ingest::{Layer, python, read_stream, subscribe};
use crate::load::task_id;
use crate::util::{
    LoadServer, Section, Verdict, Watcher, context_switches, cpu_seconds, process_cpu_seconds, quick, rss_kib, say,
    table, thousands, watch_command,
};

/// Seconds between two status updates on one stream (issue 23: "one status update per stream every 5 s").
const EVERY: f64 = 5.0;
/// After the last stream opens: the snapshots and the first listings are read before the window.
const SETTLE: Duration = Duration::from_secs(5);
/// The dashboard's terminal, as the issue measured it.
const WIDTH: u16 = 160;
const HEIGHT: u16 = 45;

/// The fleet's size and the window, from the bench's command line.
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub agents: usize,
    pub tasks_per_agent: usize,
    pub seconds: u64,
    /// Tasks per agent of the dashboard's large row (10,000 tasks on 50 agents); 0 leaves it out.
    pub large_tasks_per_agent: usize,
}

impl Knobs {
    /// Takes the fleet's flags (each followed by a whole number) out of the bench's arguments.
    pub fn take(args: &mut Vec<String>) -> Knobs {
        let mut knob = |flag: &str, default: u64| -> u64 {
            let Some(i) = args.iter().position(|a| a == flag) else {
                return default;
            };
            let value = args.get(i + 1).and_then(|v| v.parse().ok());
            let value = value.unwrap_or_else(|| panic!("{flag} takes a whole number"));
            args.drain(i..i + 2);
            value
        };
        Knobs {
            agents: knob("--agents", 50) as usize,
            tasks_per_agent: knob("--tasks-per-agent", 40) as usize,
            seconds: knob("--seconds", if quick() { 20 } else { 60 }),
            large_tasks_per_agent: knob("--large-tasks-per-agent", 200) as usize,
        }
    }

    fn streams(&self) -> usize {
        self.agents * self.tasks_per_agent
    }

    fn window(&self) -> Duration {
        Duration::from_secs(self.seconds)
    }
}

/// `fleet-read --tasks N URL...`: the bare reader, a process of its own like the others: the
/// engine's HTTP client, SubscribeToTask by hand for tasks 0..N of every agent, frames counted
/// (eventsource-stream, benchmark 2's baseline) and dropped; runs until killed.
#[derive(clap::Parser)]
#[command(name = "fleet-read")]
pub struct ReadArgs {
    /// Tasks per agent.
    #[arg(long)]
    tasks: usize,
    /// The agents, in the load agents' order (their index is in the task ids).
    urls: Vec<String>,
}

pub fn bare_reader(args: &[String]) {
    use clap::Parser as _;
    let a = ReadArgs::parse_from(args);
    a2a_watch::cli::raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new().expect("the async runtime starts");
    runtime.block_on(async {
        let http = a2a_watch::a2a::client::http_client(Duration::from_secs(10)).expect("http client");
        // The counting layer sends nothing; the channel is only what `read_stream` takes.
        let (tx, _rx) = a2a_watch::event::channel(1);
        let mut set = tokio::task::JoinSet::new();
        for (agent, url) in a.urls.iter().enumerate() {
            for i in 0..a.tasks {
                let (http, url, tx) = (http.clone(), format!("{url}/"), tx.clone());
                set.spawn(async move {
                    let resp = subscribe(&http, url, &task_id(agent, i)).await;
                    read_stream(resp.bytes_stream(), Layer::Count, tx).await
                });
            }
        }
        while set.join_next().await.is_some() {}
    });
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    Bare,
    Headless,
    Json,
    Dashboard,
    Python,
}

impl Reader {
    fn label(self) -> &'static str {
        match self {
            Reader::Bare => "bare reader (reqwest, eventsource-stream, frames counted)",
            Reader::Headless => "`a2a-watch --headless`",
            Reader::Json => "`a2a-watch --json >/dev/null`",
            Reader::Dashboard => "dashboard, 160x45 in tmux",
            Reader::Python => "a2a-sdk 1.3.0 Python client (`sdk_consume.py --fleet`)",
        }
    }
}

/// A reader while it runs; dropping it ends it.
enum Running {
    Process(Watcher),
    /// The dashboard: its pane's process, and the tmux server that holds it.
    Pane(u32, Session),
}

impl Running {
    fn pid(&self) -> u32 {
        match self {
            Running::Process(w) => w.pid(),
            Running::Pane(pid, _) => *pid,
        }
    }
}

/// `a2a-watch` following every agent of `fleet`, at most `max_streams` streams each.
fn watch(fleet: &LoadServer, max_streams: usize) -> Command {
    let mut cmd = watch_command();
    for url in &fleet.urls {
        cmd.arg("--agent").arg(url);
    }
    cmd.arg("--max-streams").arg(max_streams.to_string());
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd
}

fn start(reader: Reader, fleet: &LoadServer, tasks: usize, max_streams: usize) -> Option<Running> {
    let process = |cmd: Command| Some(Running::Process(Watcher::spawn(cmd)));
    match reader {
        Reader::Bare => {
            let mut cmd = Command::new(std::env::current_exe().ok()?);
            cmd.arg("fleet-read")
                .arg("--tasks")
                .arg(tasks.to_string())
                .args(&fleet.urls);
            process(cmd)
        }
        Reader::Headless => {
            let mut cmd = watch(fleet, max_streams);
            cmd.arg("--headless");
            process(cmd)
        }
        Reader::Json => {
            let mut cmd = watch(fleet, max_streams);
            cmd.arg("--json");
            process(cmd)
        }
        Reader::Dashboard => {
            let cmd = watch(fleet, max_streams);
            let line = std::iter::once(cmd.get_program())
                .chain(cmd.get_args())
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ");
            let _ = tmux(&["kill-server"]);
            let session = Session;
            let pid = start_in_tmux(&format!("exec {line}"), WIDTH, HEIGHT)?;
            Some(Running::Pane(pid, session))
        }
        Reader::Python => {
            let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/perf/sdk_consume.py");
            let mut cmd = Command::new(python()?);
            cmd.arg(script)
                .arg("--fleet")
                .stdin(Stdio::piped())
                .stdout(Stdio::null());
            let mut child = Watcher::spawn(cmd);
            let mut stdin = child.child.stdin.take()?;
            for (agent, url) in fleet.urls.iter().enumerate() {
                for i in 0..tasks {
                    writeln!(stdin, "{url} {}", task_id(agent, i)).ok()?;
                }
            }
            Some(Running::Process(child))
        }
    }
}

/// The fleet's open streams, summed over its agents.
fn open_streams(fleet: &LoadServer) -> u64 {
    fleet.stats().open_streams
}

/// Waits (polling twice a second: 50 agents answer each poll) until `done` holds of the open
/// streams; false on timeout, or at once when `alive` says the reader is gone.
fn wait_open(fleet: &LoadServer, timeout: Duration, alive: impl Fn() -> bool, done: impl Fn(u64) -> bool) -> bool {
    let until = Instant::now() + timeout;
    while Instant::now() < until && alive() {
        if done(open_streams(fleet)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// One reader's window.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Streams the fleet held open for it, and seconds from its start until they were.
    open: u64,
    to_open: f64,
    /// Status updates the fleet sent in the window: every one went to this reader.
    events: u64,
    wall: f64,
    cpu: f64,
    switches: u64,
    rss_kib: u64,
    /// ListTasks calls the fleet answered in the window.
    lists: u64,
    fleet_cpu: f64,
}

impl Sample {
    fn cpu_per_event(&self) -> f64 {
        self.cpu / self.events.max(1) as f64 * 1e6
    }

    fn share(&self) -> f64 {
        self.cpu / self.wall
    }

    fn switches_per_event(&self) -> f64 {
        self.switches as f64 / self.events.max(1) as f64
    }
}

/// Starts `reader` on the fleet, waits until `want_open` streams are open and `SETTLE` more,
/// measures it over `window`, ends it and waits until the fleet has let go of its streams.
fn sample(
    fleet: &LoadServer,
    reader: Reader,
    tasks: usize,
    max_streams: usize,
    want_open: u64,
    window: Duration,
) -> Option<Sample> {
    say(format!(
        "fleet: {} ({max_streams} streams an agent at most)",
        reader.label()
    ));
    let started = Instant::now();
    let running = start(reader, fleet, tasks, max_streams)?;
    // An exited reader is a zombie until it is waited for: it has no RSS left.
    let opened = wait_open(
        fleet,
        Duration::from_secs(180),
        || rss_kib(running.pid()) > 0,
        |open| open >= want_open,
    );
    let to_open = started.elapsed().as_secs_f64();
    let measured = opened.then(|| {
        std::thread::sleep(SETTLE);
        let pid = running.pid();
        let (cpu0, switches0, stats0) = (process_cpu_seconds(pid), context_switches(pid), fleet.stats());
        let fleet_cpu0 = cpu_seconds(fleet.pid());
        let t0 = Instant::now();
        std::thread::sleep(window);
        let (cpu1, switches1, wall) = (
            process_cpu_seconds(pid),
            context_switches(pid),
            t0.elapsed().as_secs_f64(),
        );
        let stats1 = fleet.stats();
        Sample {
            open: stats1.open_streams,
            to_open,
            events: stats1.events.saturating_sub(stats0.events),
            wall,
            cpu: cpu1 - cpu0,
            switches: switches1.saturating_sub(switches0),
            rss_kib: rss_kib(pid),
            lists: stats1.list_calls.saturating_sub(stats0.list_calls),
            fleet_cpu: cpu_seconds(fleet.pid()) - fleet_cpu0,
        }
    });
    if !opened {
        say(format!(
            "fleet: {} opened {} of {want_open} streams",
            reader.label(),
            open_streams(fleet)
        ));
    }
    drop(running);
    if !wait_open(fleet, Duration::from_secs(30), || true, |open| open == 0) {
        say("fleet: streams still open 30 s after the reader ended");
    }
    // A reader that died in the window has no RSS left to read.
    measured.filter(|s| s.rss_kib > 0)
}

/// What the fleet benchmark measured.
struct Fleet {
    knobs: Knobs,
    readers: Vec<(Reader, Option<Sample>)>,
    /// `--json` and the dashboard with `--max-streams 1`: RSS with the tasks but (almost) no streams.
    baselines: Vec<(Reader, Option<Sample>)>,
    /// The dashboard on `agents` × `large_tasks_per_agent` tasks.
    large: Option<Sample>,
}

impl Fleet {
    fn of(&self, reader: Reader) -> Option<&Sample> {
        self.readers.iter().find(|(r, _)| *r == reader)?.1.as_ref()
    }

    /// KiB of RSS per open stream: (every stream open − `--max-streams 1`) / the streams between.
    fn rss_per_stream(&self, reader: Reader) -> Option<f64> {
        let all = self.of(reader)?;
        let base = self.baselines.iter().find(|(r, _)| *r == reader)?.1.as_ref()?;
        let streams = all.open.checked_sub(base.open).filter(|n| *n > 0)?;
        Some((all.rss_kib as f64 - base.rss_kib as f64) / streams as f64)
    }

    /// CPU per event of `a` over that of `b`.
    fn cpu_ratio(&self, a: Reader, b: Reader) -> Option<f64> {
        Some(self.of(a)?.cpu_per_event() / self.of(b)?.cpu_per_event())
    }
}

fn fleet_server(agents: usize, tasks: usize) -> LoadServer {
    LoadServer::with(&format!(
        "--agents {agents} --tasks {tasks} --events 1000000000 --hold --rate {} --spread",
        1.0 / EVERY
    ))
}

fn measure(knobs: Knobs) -> Fleet {
    let (agents, tasks) = (knobs.agents, knobs.tasks_per_agent);
    let streams = knobs.streams() as u64;
    let fleet = fleet_server(agents, tasks);
    let window = knobs.window();
    let readers = [
        Reader::Bare,
        Reader::Headless,
        Reader::Json,
        Reader::Dashboard,
        Reader::Python,
    ]
    .into_iter()
    .map(|r| (r, sample(&fleet, r, tasks, tasks, streams, window)))
    .collect();
    // One stream an agent is as few as a2a-watch opens (`--max-streams 0` is taken as 1).
    let base_window = window.min(Duration::from_secs(20));
    let baselines = [Reader::Json, Reader::Dashboard]
        .into_iter()
        .map(|r| (r, sample(&fleet, r, tasks, 1, agents as u64, base_window)))
        .collect();
    drop(fleet);
    let large = (knobs.large_tasks_per_agent > 0).then(|| {
        let many = knobs.large_tasks_per_agent;
        let fleet = fleet_server(agents, many);
        sample(&fleet, Reader::Dashboard, many, many, (agents * many) as u64, window)
    });
    Fleet {
        knobs,
        readers,
        baselines,
        large: large.flatten(),
    }
}

fn x(ratio: Option<f64>) -> String {
    ratio.map_or("no data".into(), |r| format!("{r:.2}x"))
}

fn reader_row(label: &str, s: Option<&Sample>, vs_bare: Option<f64>, rss_per_stream: Option<f64>) -> Vec<String> {
    let Some(s) = s else {
        return vec![label.to_string(), "no data".into()]
            .into_iter()
            .chain(std::iter::repeat_n(String::new(), 9))
            .collect();
    };
    vec![
        label.to_string(),
        format!("{} ({:.0} s)", thousands(s.open as f64), s.to_open),
        thousands(s.events as f64),
        format!("**{:.0} µs**", s.cpu_per_event()),
        format!("{:.1}%", s.share() * 100.0),
        format!("{:.2}", s.switches_per_event()),
        crate::util::mib(s.rss_kib),
        rss_per_stream.map_or("—".into(), |k| format!("{k:.1} KiB")),
        vs_bare.map_or("—".into(), |r| format!("{r:.2}x")),
        format!("{:.1}", s.lists as f64 / s.wall),
        format!("{:.0} µs", s.fleet_cpu / s.events.max(1) as f64 * 1e6),
    ]
}

/// (target, figure, verdict) rows, and whether every target had data and was met.
fn verdicts(f: &Fleet) -> (Vec<Vec<String>>, Verdict) {
    let mut rows = Vec::new();
    let mut all = Verdict::Met;
    let mut judge = |target: &str, figure: Option<f64>, shown: String, ok: fn(f64) -> bool| {
        let v = figure.map_or(Verdict::NoData, |v| Verdict::of(ok(v)));
        all = match (all, v) {
            (Verdict::NoData, _) | (_, Verdict::NoData) => Verdict::NoData,
            (Verdict::Missed, _) | (_, Verdict::Missed) => Verdict::Missed,
            _ => Verdict::Met,
        };
        rows.push(vec![target.to_string(), shown, v.label().to_string()]);
    };
    for (reader, name) in [(Reader::Json, "--json"), (Reader::Headless, "--headless")] {
        let r = f.cpu_ratio(reader, Reader::Bare);
        judge(
            &format!("`{name}` ≤ 2x the bare reader's CPU per event"),
            r,
            x(r),
            |r| r <= 2.0,
        );
        let r = f.cpu_ratio(Reader::Python, reader);
        judge(
            &format!("`{name}` ≥ 10x cheaper per event than the Python SDK client"),
            r,
            x(r),
            |r| r >= 10.0,
        );
    }
    let r = f.cpu_ratio(Reader::Dashboard, Reader::Json);
    judge("dashboard ≤ 1.5x `--json` per event", r, x(r), |r| r <= 1.5);
    for reader in [Reader::Json, Reader::Dashboard] {
        let k = f.rss_per_stream(reader);
        judge(
            &format!("RSS per open stream ≤ 16 KiB ({})", reader.label()),
            k,
            k.map_or("no data".into(), |k| format!("{k:.1} KiB")),
            |k| k <= 16.0,
        );
    }
    if f.knobs.large_tasks_per_agent > 0 {
        let share = f.large.map(|s| s.share() * 100.0);
        judge(
            &format!(
                "dashboard < 15% of a core at {} tasks, one update each per 5 s",
                thousands((f.knobs.agents * f.knobs.large_tasks_per_agent) as f64)
            ),
            share,
            share.map_or("no data".into(), |s| format!("{s:.1}%")),
            |s| s < 15.0,
        );
    }
    (rows, all)
}

fn body(f: &Fleet, checks: &[Vec<String>]) -> String {
    let k = f.knobs;
    let bare = f.of(Reader::Bare);
    let vs_bare = |r: Reader| f.cpu_ratio(r, Reader::Bare);
    let mut rows: Vec<Vec<String>> = f
        .readers
        .iter()
        .map(|(r, s)| reader_row(r.label(), s.as_ref(), bare.and(vs_bare(*r)), f.rss_per_stream(*r)))
        .collect();
    for (r, s) in &f.baselines {
        rows.push(reader_row(
            &format!("{}, `--max-streams 1`", r.label()),
            s.as_ref(),
            None,
            None,
        ));
    }
    if k.large_tasks_per_agent > 0 {
        let label = format!("dashboard, {} × {} tasks", k.agents, k.large_tasks_per_agent);
        rows.push(reader_row(&label, f.large.as_ref(), None, None));
    }
    format!(
        "`serve-load --agents {agents} --tasks {tasks} --hold --rate 0.2 --spread`: {agents} load agents on loopback (one \
process, one port each), {tasks} WORKING tasks each, every stream one status update every {EVERY} s, each stream's first \
at its own point of the period (`--spread`), so the fleet sends {rate:.0} events/s in all and each arrives alone. The \
readers follow every task of the same fleet one after another, each a process of its own: the *bare reader* (this \
binary's `fleet-read`: the engine's reqwest client, SubscribeToTask by hand per task, frames counted with \
eventsource-stream and dropped), the real binary with `--agent URL` × {agents} `--max-streams {tasks}` as `--headless`, \
as `--json` (stdout to /dev/null) and as the dashboard in a detached tmux session of {WIDTH}x{HEIGHT}, and \
`benches/perf/sdk_consume.py --fleet` (a2a-sdk 1.3.0, one client per agent on one httpx client and one asyncio loop). \
Once the fleet holds every stream open and {settle} s more: CPU (utime + stime, or the threads' schedstat where finer) \
and context switches (voluntary + involuntary, summed over /proc/PID/task/*/status: threads that exit in the window \
are not counted) over {window} s; events = the status updates the fleet sent in the window, all to that reader; RSS \
at the window's end. RSS per stream = (RSS with every stream open − RSS with `--max-streams 1`, where the tasks are \
in the store but {agents} streams are open: `--max-streams 0` is taken as 1) / the streams between. The last columns: \
the agents' listings answered a second (a2a-watch lists each agent every few seconds; issue 23 counts it in), and the \
load agents' own CPU per event.\n\n{}\n{}",
        table(
            &[
                "reader",
                "streams open (s to open)",
                "events in window",
                "CPU / event",
                "of a core",
                "switches / event",
                "RSS",
                "RSS / stream",
                "vs bare",
                "ListTasks/s",
                "load agents' CPU / event"
            ],
            &rows
        ),
        table(&["target (issue 23)", "this run", "verdict"], checks),
        agents = k.agents,
        tasks = k.tasks_per_agent,
        rate = k.streams() as f64 / EVERY,
        settle = SETTLE.as_secs(),
        window = k.seconds,
    )
}

pub fn run(knobs: Knobs) -> Section {
    let f = measure(knobs);
    let (checks, verdict) = verdicts(&f);
    let per_event = |r: Reader| {
        f.of(r)
            .map_or("no data".into(), |s| format!("{:.0} µs", s.cpu_per_event()))
    };
    let result = format!(
        "CPU per event: bare {}, `--headless` {}, `--json` {}, dashboard {}, Python SDK {}; `--json` {} the bare reader, \
dashboard {} `--json`; RSS per stream {}; dashboard at {} tasks {}",
        per_event(Reader::Bare),
        per_event(Reader::Headless),
        per_event(Reader::Json),
        per_event(Reader::Dashboard),
        per_event(Reader::Python),
        x(f.cpu_ratio(Reader::Json, Reader::Bare)),
        x(f.cpu_ratio(Reader::Dashboard, Reader::Json)),
        f.rss_per_stream(Reader::Json)
            .map_or("no data".into(), |k| format!("{k:.1} KiB")),
        thousands((knobs.agents * knobs.large_tasks_per_agent) as f64),
        f.large
            .map_or("no data".into(), |s| format!("{:.1}% of a core", s.share() * 100.0)),
    );
    Section {
        number: 12,
        title: "Fleet",
        target: "`--json`, `--headless` ≤ 2x the bare reader and ≥ 10x cheaper than the Python SDK per event; \
dashboard ≤ 1.5x `--json`; ≤ 16 KiB RSS per open stream; dashboard < 15% of a core at 10,000 tasks"
            .into(),
        result,
        verdict,
        body: body(&f, &checks),
    }
}
