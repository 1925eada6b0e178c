//! Benchmark 8, Discovery at scale (issue 11): the real binary, `a2a-watch --json --agent URL`, as
//! a separate process against the load agent holding 10k, 50k and 100k live tasks on one agent,
//! and 10 agents × 10k: wall time and CPU seconds until every task has its NDJSON line, and the
//! ratio to 10k. Linear discovery costs 10x at 100k; the target allows 12x.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{
    LoadServer, Section, TaskLines, Verdict, Watcher, mib, quick, rss_kib, say, table, thousands, watch_command,
};

/// 100k tasks cost at most this many times the CPU of 10k.
const TARGET_RATIO: f64 = 12.0;

pub struct Run {
    pub agents: usize,
    pub tasks: usize,
    /// (wall, CPU) seconds when every task had a line; None if that never happened.
    pub done: Option<(f64, f64)>,
    pub printed: usize,
    pub errors: u64,
    /// CPU seconds when given up (if not done).
    pub cpu_at_end: f64,
    pub rss_kib: u64,
}

impl Run {
    fn total(&self) -> usize {
        self.agents * self.tasks
    }

    fn label(&self) -> String {
        match self.agents {
            1 => format!("{} tasks, one agent", thousands(self.tasks as f64)),
            a => format!("{a} agents × {} tasks", thousands(self.tasks as f64)),
        }
    }
}

/// `serve-load --agents A --tasks N --events 0 --hold` (every task WORKING, quiet) and the binary
/// watching all its agents until every task has been printed once.
pub fn discover(agents: usize, tasks: usize, timeout: Duration) -> Run {
    let s = LoadServer::with(&format!("--agents {agents} --tasks {tasks} --events 0 --hold"));
    let mut cmd = watch_command();
    for url in &s.urls {
        cmd.arg("--agent").arg(url);
    }
    cmd.arg("--json").stdout(Stdio::piped()).stderr(Stdio::null());
    let start = Instant::now();
    let mut w = Watcher::spawn(cmd);
    let pid = w.pid();
    let lines = TaskLines::spawn(w.take_stdout(), pid, agents * tasks, start);
    lines.wait(timeout);
    let cpu_at_end = crate::util::process_cpu_seconds(pid);
    let rss_kib = rss_kib(pid);
    drop(w);
    let (done, printed, errors) = lines.get(|p| (p.reached, p.tasks.len(), p.errors));
    Run {
        agents,
        tasks,
        done,
        printed,
        errors,
        cpu_at_end,
        rss_kib,
    }
}

/// A ratio as the table and the summary both show it.
pub fn ratio(x: f64) -> String {
    format!("{x:.1}x")
}

/// A row of the table for each run: against the first run (10k tasks, one agent) where both
/// finished, how far it got where it did not.
fn rows(runs: &[Run], timeout: Duration) -> Vec<Vec<String>> {
    let base = runs[0].done;
    runs.iter()
        .map(|r| match (r.done, base) {
            (Some((wall, cpu)), base) => vec![
                r.label(),
                format!("{wall:.2} s"),
                format!("{cpu:.2} s"),
                base.map_or("no data".into(), |(_, c)| ratio(cpu / c)),
                base.map_or("no data".into(), |(w, _)| ratio(wall / w)),
                format!("{:.1}", cpu / r.total() as f64 * 1e6),
                mib(r.rss_kib),
                r.errors.to_string(),
            ],
            (None, _) => vec![
                r.label(),
                format!(
                    "**not done** after {timeout:?}: {} of {} printed",
                    thousands(r.printed as f64),
                    thousands(r.total() as f64)
                ),
                format!("{:.2} s so far", r.cpu_at_end),
                "no data".into(),
                "no data".into(),
                "—".into(),
                mib(r.rss_kib),
                r.errors.to_string(),
            ],
        })
        .collect()
}

pub fn run() -> Section {
    let timeout = Duration::from_secs(if quick() { 40 } else { 90 });
    let shapes = [(1, 10_000), (1, 50_000), (1, 100_000), (10, 10_000)];
    let mut runs = Vec::new();
    for (agents, tasks) in shapes {
        say(format!("discovery: {agents} agent(s) × {tasks} tasks"));
        runs.push(discover(agents, tasks, timeout));
    }
    let base = runs[0].done;
    let big = &runs[2];
    let cpu_ratio = match (base, big.done) {
        (Some((_, c10)), Some((_, c100))) if c10 > 0.0 => Some(c100 / c10),
        _ => None,
    };
    let verdict = match (base, big.done, cpu_ratio) {
        (None, _, _) => Verdict::NoData,
        (Some(_), None, _) => Verdict::Missed,
        (_, _, Some(r)) => Verdict::of(r <= TARGET_RATIO),
        _ => Verdict::NoData,
    };
    let result = match (big.done, cpu_ratio) {
        (Some((wall, cpu)), Some(r)) => format!(
            "100k tasks: {cpu:.2} s CPU, {wall:.2} s wall; {} the CPU of 10k",
            ratio(r)
        ),
        (None, _) if base.is_some() => format!(
            "100k tasks not done after {timeout:?} ({} printed)",
            thousands(big.printed as f64)
        ),
        _ => "no data (the 10k run did not finish)".into(),
    };
    let body = format!(
        "`serve-load --agents A --tasks N --events 0 --hold`: every task WORKING and quiet, its stream held open; \
ListTasks pages newest first. The real binary, `a2a-watch --agent URL [--agent URL ...] --json` (empty config), a \
separate process; the harness reads its NDJSON and counts distinct task ids. *Wall* and *CPU*: from spawning it until \
every task has had a line, CPU being the process's user + system seconds (all threads) read from /proc at that \
moment. The binary keeps 256 streams open per agent and follows the rest through the listing. Linear discovery \
costs 10x at 100k; the target is ≤ {TARGET_RATIO:.0}x the CPU of 10k, and finishing. Runs that do not finish \
within {timeout:?} show how far they got.\n\n{}",
        table(
            &[
                "tasks",
                "wall",
                "CPU",
                "CPU vs 10k",
                "wall vs 10k",
                "CPU µs / task",
                "RSS then",
                "error lines"
            ],
            &rows(&runs, timeout)
        ),
    );
    Section {
        number: 8,
        title: "Discovery at scale",
        target: format!("100k tasks ≤ {TARGET_RATIO:.0}x the CPU of 10k, and finish"),
        result,
        verdict,
        body,
    }
}
