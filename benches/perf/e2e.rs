//! Benchmark 9, the binary end to end (issue 11): `a2a-watch --json` as a separate process
//! following 50 streams × N status updates of the load agent, next to `curl -sN` frame counters
//! and the official Python SDK client on the same streams, in the same run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::discovery::ratio;
use crate::ingest::spawn_sdk;
use crate::load::task_id;
use crate::util::{
    LoadServer, Section, Verdict, median, quick, say, scratch, table, thousands, wait_measured, watch_command,
};

const STREAMS: usize = 50;

/// One client's run: status updates it took in, its wall time and its CPU.
pub struct Run {
    pub updates: u64,
    pub wall: f64,
    pub cpu: f64,
}

impl Run {
    pub fn rate(&self) -> f64 {
        self.updates as f64 / self.wall
    }
}

fn server(events: usize) -> LoadServer {
    LoadServer::with(&format!("--tasks {STREAMS} --events {events}"))
}

fn count_lines(path: &Path, needle: &str) -> u64 {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().filter(|l| l.contains(needle)).count() as u64)
}

fn output_file(name: &str) -> Option<(PathBuf, std::fs::File)> {
    let path = scratch().join(name);
    let file = std::fs::File::create(&path).ok()?;
    Some((path, file))
}

/// `a2a-watch --agent URL --json --until all-terminal` with `extra` arguments, its NDJSON written
/// to a file (so the harness takes no CPU from it while it runs); the status lines counted afterwards.
pub fn binary(events: usize, timeout: Duration, extra: &[String]) -> Option<Run> {
    let s = server(events);
    let (path, file) = output_file("e2e.ndjson")?;
    let mut cmd = watch_command();
    cmd.arg("--agent")
        .arg(s.url())
        .args(["--json", "--until", "all-terminal"])
        .args(extra)
        .stdout(file)
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn().ok()?;
    let exited = wait_measured(&mut child, start, timeout).filter(|e| e.success)?;
    Some(Run {
        updates: count_lines(&path, r#""event":"status""#),
        wall: exited.wall,
        cpu: exited.cpu,
    })
}

/// One `curl -sN --parallel` process holding every stream at once (so 50 start-ups do not count
/// against it), each body written to a file; the `data:` lines counted afterwards, less each
/// stream's first frame (the task snapshot).
fn curl(events: usize, timeout: Duration) -> Option<Run> {
    let s = server(events);
    let mut cmd = Command::new("curl");
    cmd.args(["--parallel", "--parallel-max", &STREAMS.to_string()]);
    let mut files = Vec::new();
    for i in 0..STREAMS {
        let (path, _) = output_file(&format!("e2e.curl.{i}"))?;
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
            "params": {"id": task_id(0, i)}});
        if i > 0 {
            cmd.arg("--next");
        }
        cmd.args(["-sN", "-X", "POST"])
            .args(["-H", "Content-Type: application/json", "-H", "A2A-Version: 1.0"])
            .args(["-H", "Accept: text/event-stream", "-o"])
            .arg(&path)
            .arg("--data")
            .arg(body.to_string())
            .arg(format!("{}/", s.url()));
        files.push(path);
    }
    let start = Instant::now();
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().ok()?;
    let exited = wait_measured(&mut child, start, timeout).filter(|e| e.success)?;
    let frames: u64 = files.iter().map(|p| count_lines(p, "data:")).sum();
    Some(Run {
        updates: frames.saturating_sub(STREAMS as u64),
        wall: exited.wall,
        cpu: exited.cpu,
    })
}

/// `benches/perf/sdk_consume.py` (a2a-sdk 1.3.0's client, all streams on one asyncio loop), timed
/// by the script itself from its first subscription (its interpreter start-up is left out, in its
/// favour); its events less each stream's snapshot.
fn sdk(events: usize, timeout: Duration) -> Option<Run> {
    let s = server(events);
    let (path, file) = output_file("e2e.sdk.json")?;
    let start = Instant::now();
    let mut child = spawn_sdk(s.url(), STREAMS, file.into())?;
    let exited = wait_measured(&mut child, start, timeout).filter(|e| e.success)?;
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    Some(Run {
        updates: v["events"].as_u64()?.saturating_sub(STREAMS as u64),
        wall: v["seconds"].as_f64()?,
        cpu: exited.cpu,
    })
}

fn median_of(runs: &[Run], f: impl Fn(&Run) -> f64) -> Option<f64> {
    (!runs.is_empty()).then(|| median(&mut runs.iter().map(f).collect::<Vec<_>>()))
}

/// Every client's runs, and the clients whose runs failed.
struct Runs {
    ours: Vec<Run>,
    curls: Vec<Run>,
    pys: Vec<Run>,
    failed: Vec<&'static str>,
}

/// `trials` interleaved trials of the binary and curl, then one of the Python SDK client.
fn measure(events: usize, trials: usize, timeout: Duration) -> Runs {
    let (mut ours, mut curls, mut pys) = (Vec::new(), Vec::new(), Vec::new());
    let mut failed = Vec::new();
    for t in 0..trials {
        say(format!("e2e: trial {}/{trials}: a2a-watch --json", t + 1));
        match binary(events, timeout, &[]) {
            Some(r) => ours.push(r),
            None => failed.push("a2a-watch"),
        }
        say(format!("e2e: trial {}/{trials}: curl -sN", t + 1));
        match curl(events, timeout) {
            Some(r) => curls.push(r),
            None => failed.push("curl"),
        }
    }
    say("e2e: Python SDK client");
    match sdk(events, timeout) {
        Some(r) => pys.push(r),
        None => failed.push("Python SDK client"),
    }
    Runs {
        ours,
        curls,
        pys,
        failed,
    }
}

/// A client's row: its updates per trial, medians, and `vs`, how ours compares.
fn row(name: &str, runs: &[Run], vs: &str) -> Vec<String> {
    match median_of(runs, Run::rate) {
        Some(rate) => vec![
            name.to_string(),
            runs.iter()
                .map(|r| thousands(r.updates as f64))
                .collect::<Vec<_>>()
                .join(", "),
            format!("{:.2} s", median_of(runs, |r| r.wall).unwrap_or(f64::NAN)),
            thousands(rate),
            format!(
                "{:.2} µs",
                median_of(runs, |r| r.cpu / r.updates as f64 * 1e6).unwrap_or(f64::NAN)
            ),
            vs.to_string(),
        ],
        None => vec![
            name.to_string(),
            "no data".into(),
            String::new(),
            String::new(),
            String::new(),
            vs.into(),
        ],
    }
}

/// The table's rows, ours first.
fn rows(r: &Runs, vs_curl: Option<f64>, vs_py: Option<f64>) -> Vec<Vec<String>> {
    vec![
        row("`a2a-watch --json --until all-terminal`", &r.ours, "1.00"),
        row(
            "`curl -sN --parallel`, 50 streams, frames counted",
            &r.curls,
            &vs_curl.map_or("no data".into(), |r| format!("ours = {}", ratio(r))),
        ),
        row(
            "a2a-sdk 1.3.0 Python client (`sdk_consume.py`)",
            &r.pys,
            &vs_py.map_or("no data".into(), |r| format!("ours = {}", ratio(r))),
        ),
    ]
}

pub fn run() -> Section {
    let events = if quick() { 400 } else { 2_000 };
    let trials = if quick() { 1 } else { 3 };
    let timeout = Duration::from_secs(if quick() { 60 } else { 180 });
    let runs = measure(events, trials, timeout);
    let (ours, curls, pys, failed) = (&runs.ours, &runs.curls, &runs.pys, &runs.failed);
    let expected = (STREAMS * events) as u64;
    let ours_rate = median_of(ours, Run::rate);
    // Side by side, trial by trial, then the median: robust to the machine's drift.
    let mut per_trial: Vec<f64> = ours.iter().zip(curls).map(|(o, c)| o.rate() / c.rate()).collect();
    let vs_curl = (!per_trial.is_empty()).then(|| median(&mut per_trial));
    let vs_py = match (ours_rate, median_of(pys, Run::rate)) {
        (Some(o), Some(p)) if p > 0.0 => Some(o / p),
        _ => None,
    };
    let complete = ours.iter().all(|r| r.updates == expected);
    let verdict = match (vs_curl, vs_py) {
        (Some(c), Some(p)) if complete => Verdict::of(c >= 0.3 && p >= 30.0),
        (Some(_), Some(_)) => Verdict::Missed,
        _ => Verdict::NoData,
    };
    let result = match ours_rate {
        Some(rate) => format!(
            "{} events/s; {} the curl counter; {} the Python SDK",
            thousands(rate),
            vs_curl.map_or("no data vs".into(), ratio),
            vs_py.map_or("no data vs".into(), ratio),
        ),
        None => "no data (the binary did not finish)".into(),
    };
    let failures = if failed.is_empty() {
        String::new()
    } else {
        format!(
            "\nRuns that failed or timed out ({timeout:?}), left out: {}.\n",
            failed.join(", ")
        )
    };
    let body = format!(
        "`serve-load --tasks {STREAMS} --events {events}` (a fresh load agent per client, streaming as fast as the \
client reads), {} status updates in all. *a2a-watch*: the real binary, a separate process, `--agent URL --json \
--until all-terminal`, its NDJSON to a file; timed from spawn to exit (start-up, card, listing included), CPU from \
wait4(2); updates = its `status` lines. *curl*: one `curl --parallel` process with {STREAMS} `-sN` SubscribeToTask \
transfers at once, each body to a file, `data:` frames counted afterwards less the snapshot; timed and measured like \
the binary. *Python SDK*: \
`benches/perf/sdk_consume.py`, timed by itself from its first subscription. {trials} interleaved trial(s) of the \
binary and curl (the ratio is the median of per-trial ratios), one of the SDK.\n\n{}{failures}\n\
Updates each client took in are listed per trial (expected {}); the binary prints one line per update it applies, \
so fewer lines means a listing showed a task's end before its stream was read out.\n",
        thousands(expected as f64),
        table(
            &["client", "updates", "wall", "updates/s", "CPU / update", "ratio"],
            &rows(&runs, vs_curl, vs_py)
        ),
        thousands(expected as f64),
    );
    Section {
        number: 9,
        title: "The binary end to end",
        target: "≥ 0.3x the curl counter; ≥ 30x the Python SDK client".into(),
        result,
        verdict,
        body,
    }
}
