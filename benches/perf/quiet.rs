//! Benchmark 10, Memory of quiet tasks (issue 11): the resident set of one `a2a-watch --json`
//! process before and after the load agent reveals 10k (then 100k) live, quiet tasks with three
//! history messages each. The same process is its own baseline: only the tasks differ.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{
    LoadServer, Section, TaskLines, Verdict, Watcher, http_get_json, hwm_kib, mib, quick, rss_kib, say, table,
    thousands, watch_command,
};

struct Run {
    tasks: usize,
    /// VmRSS before the tasks appeared and after every one had its line (KiB); 0 = not read.
    idle: u64,
    full: u64,
    hwm: u64,
    /// Every task had its line before the timeout.
    done: bool,
    printed: usize,
    open_streams: u64,
}

impl Run {
    /// KiB above idle; None when a sample is missing or the run did not finish.
    fn above(&self) -> Option<u64> {
        (self.done && self.idle > 0 && self.full > 0).then(|| self.full.saturating_sub(self.idle))
    }
}

fn measure(tasks: usize, settle: Duration, timeout: Duration) -> Run {
    let s = LoadServer::with(&format!("--tasks {tasks} --events 0 --hold --history 3 --hidden"));
    let mut cmd = watch_command();
    cmd.arg("--agent")
        .arg(s.url())
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut w = Watcher::spawn(cmd);
    let pid = w.pid();
    let lines = TaskLines::spawn(w.take_stdout(), pid, tasks, start);
    // Idle: connected and listing (an empty list) for a while.
    let listed = s.wait_for(timeout, |st| st.list_calls >= 2);
    std::thread::sleep(settle);
    let idle = if listed { rss_kib(pid) } else { 0 };
    let _ = http_get_json(s.url(), "/_load/reveal");
    let done = lines.wait(timeout);
    std::thread::sleep(settle);
    let full = rss_kib(pid);
    let hwm = hwm_kib(pid);
    let open_streams = s.stats().open_streams;
    drop(w);
    Run {
        tasks,
        idle,
        full,
        hwm,
        done,
        printed: lines.get(|p| p.tasks.len()),
        open_streams,
    }
}

/// A run's row of the table, against its `target` in MiB above idle.
fn row(r: &Run, target: u64) -> Vec<String> {
    vec![
        thousands(r.tasks as f64),
        if r.idle > 0 { mib(r.idle) } else { "no data".into() },
        if r.done {
            mib(r.full)
        } else {
            format!(
                "not done: {} of {} printed",
                thousands(r.printed as f64),
                thousands(r.tasks as f64)
            )
        },
        r.above().map_or("no data".into(), mib),
        r.above()
            .map_or("no data".into(), |k| thousands(k as f64 * 1024.0 / r.tasks as f64)),
        format!("≤ {target} MiB"),
        mib(r.hwm),
        thousands(r.open_streams as f64),
    ]
}

pub fn run() -> Section {
    let settle = Duration::from_secs(if quick() { 2 } else { 5 });
    let timeout = Duration::from_secs(if quick() { 60 } else { 120 });
    // (tasks, target MiB above idle)
    let shapes = [(10_000, 12), (100_000, 100)];
    let mut runs = Vec::new();
    for (tasks, _) in shapes {
        say(format!("quiet memory: {tasks} tasks"));
        runs.push(measure(tasks, settle, timeout));
    }
    let rows: Vec<Vec<String>> = runs.iter().zip(shapes).map(|(r, (_, target))| row(r, target)).collect();
    let judged: Vec<Option<bool>> = runs
        .iter()
        .zip(shapes)
        .map(|(r, (_, target))| r.above().map(|k| k <= target * 1024))
        .collect();
    let verdict = if judged.iter().any(Option::is_none) {
        Verdict::NoData
    } else {
        Verdict::of(judged.iter().all(|j| *j == Some(true)))
    };
    let result = runs
        .iter()
        .map(|r| {
            format!(
                "{}: {}",
                thousands(r.tasks as f64),
                r.above().map_or("no data".into(), |k| format!("{} above idle", mib(k)))
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let body = format!(
        "`serve-load --tasks N --events 0 --hold --history 3 --hidden`: every task WORKING and quiet, three history \
messages each, its stream held open once subscribed; the listing shows no task until the harness calls \
`GET /_load/reveal`. One process of the real binary, `a2a-watch --agent URL --json`: *idle* is its VmRSS after two \
empty listings and {settle:?} of settling; then the tasks are revealed and *with tasks* is its VmRSS once every task \
has had an NDJSON line, plus {settle:?}. The listing asks for no history (historyLength 0), so history is held for \
the tasks a stream was opened on (256 per agent) and the rest are followed by listing.\n\n{}",
        table(
            &[
                "tasks",
                "idle",
                "with tasks",
                "above idle",
                "bytes / task",
                "target",
                "VmHWM (peak)",
                "open streams"
            ],
            &rows
        ),
    );
    Section {
        number: 10,
        title: "Memory of quiet tasks",
        target: "≤ 12 MiB above idle for 10k quiet tasks; ≤ 100 MiB for 100k".into(),
        result,
        verdict,
        body,
    }
}
