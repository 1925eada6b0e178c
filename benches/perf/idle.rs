//! Benchmark 5, Idle: 1,000 live subscriptions with no events, the real binary in TUI mode inside tmux:
//! CPU seconds per wall second, and the writes it makes to the terminal (strace).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{
    LoadServer, Section, Verdict, binary, cpu_seconds, mib, quick, rss_kib, say, scratch, table, thread_cpu_seconds,
};

const SOCKET: &str = "a2a-watch-bench";

/// The dashboard's `quiet_after` here (default 30 s).
const QUIET_AFTER: Duration = Duration::from_secs(5);

pub fn tmux(args: &[&str]) -> Option<String> {
    let out = Command::new("tmux").arg("-L").arg(SOCKET).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Kills our own tmux server (its own socket) when the benchmark ends, however it ends.
pub struct Session;

impl Drop for Session {
    fn drop(&mut self) {
        let _ = tmux(&["kill-server"]);
    }
}

/// Runs `cmd` (a shell command line, which should `exec` the program) in a detached tmux
/// session `bench` of `width` x `height` on our own socket; the pid of its pane's process.
pub fn start_in_tmux(cmd: &str, width: u16, height: u16) -> Option<u32> {
    tmux(&[
        "new-session",
        "-d",
        "-s",
        "bench",
        "-x",
        &width.to_string(),
        "-y",
        &height.to_string(),
        cmd,
    ])?;
    tmux(&["list-panes", "-t", "bench", "-F", "#{pane_pid}"]).and_then(|p| p.lines().next()?.trim().parse().ok())
}

struct Writes {
    calls: usize,
    bytes: usize,
    /// Bursts of writes more than `FRAME_GAP` apart: one frame may take several writes.
    frames: usize,
}

/// Writes closer together than this belong to one frame (the dashboard draws at most every 33 ms).
const FRAME_GAP: f64 = 0.02;

/// Traces the process's write calls to stdout (the terminal) for `window`.
fn trace_writes(pid: u32, window: Duration) -> Option<Writes> {
    let out = scratch().join("idle.strace");
    let _ = std::fs::remove_file(&out);
    let status = Command::new("timeout")
        .args(["-s", "INT", &format!("{}", window.as_secs_f64())])
        .arg("strace")
        .args(["-f", "-qq", "-ttt", "-e", "trace=write,writev", "-o"])
        .arg(&out)
        .arg("-p")
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    let _ = status;
    let text = std::fs::read_to_string(&out).ok()?;
    let mut w = Writes {
        calls: 0,
        bytes: 0,
        frames: 0,
    };
    let mut last_write = f64::NEG_INFINITY;
    for line in text.lines() {
        // "<tid> <seconds.micros> write(1, "..."..., 123) = 123"
        // (strace pads the tid with spaces)
        let Some((_tid, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some((at, call)) = rest.trim_start().split_once(' ') else {
            continue;
        };
        if call.starts_with("write(1,") || call.starts_with("writev(1,") {
            w.calls += 1;
            if let Some(n) = call.rsplit("= ").next().and_then(|n| n.trim().parse::<usize>().ok()) {
                w.bytes += n;
            }
            if let Ok(at) = at.parse::<f64>() {
                if at - last_write > FRAME_GAP {
                    w.frames += 1;
                }
                last_write = at;
            }
        }
    }
    Some(w)
}

/// What one idle window measured.
pub struct Idle {
    /// Whether the load agent came to hold every stream open, and how long that took.
    pub subscribed: bool,
    to_subscribe: f64,
    /// The dashboard's CPU seconds over `wall` seconds, and their ratio.
    cpu: f64,
    wall: f64,
    pub share: f64,
    server_cpu: f64,
    rss: u64,
    open: u64,
    lists: u64,
    gets: u64,
    writes: Option<Writes>,
    screen_changed: bool,
    shows_tasks: bool,
}

/// The section when there is no tmux to run the dashboard in.
fn no_tmux() -> Section {
    Section {
        number: 5,
        title: "Idle",
        target: "≤ 0.2% of a core; no redraws without a change".into(),
        result: "not measured: no tmux".into(),
        verdict: Verdict::Info,
        body: "tmux is not installed; nothing was measured.\n".into(),
    }
}

/// Starts the dashboard against `s` in a detached tmux session, with `extra` arguments; its pid.
fn start_dashboard(s: &LoadServer, tasks: usize, extra: &[String]) -> u32 {
    // Quiet streams are re-checked by GetTask (issue 20) within 2x quiet_after, at most
    // check_rate (10) a second per agent. A short quiet_after brings the window to the steady
    // state, which at 1,000 streams is the same at the default 30 s: the budget, saturated.
    let config = scratch().join("idle-config.toml");
    std::fs::write(&config, format!("quiet_after = {}\n", QUIET_AFTER.as_secs())).expect("a config");
    let cmd = format!(
        "exec {} --config {} --log-file {} --agent {} --max-streams {tasks} {}",
        binary().display(),
        config.display(),
        scratch().join("idle.log").display(),
        s.url(),
        extra.join(" ")
    );
    say("idle: starting the dashboard in tmux");
    start_in_tmux(&cmd, 200, 50).expect("tmux starts the dashboard")
}

/// The dashboard (with `extra` arguments) holding `tasks` quiet streams: its CPU over `window`,
/// then its terminal writes over `trace_window`.
pub fn measure(tasks: usize, window: Duration, trace_window: Duration, extra: &[String]) -> Idle {
    let s = LoadServer::start(&[
        "--tasks".into(),
        tasks.to_string(),
        "--events".into(),
        "0".into(),
        "--hold".into(),
    ]);
    let _ = tmux(&["kill-server"]);
    let session = Session;
    let pid = start_dashboard(&s, tasks, extra);
    let started = Instant::now();
    let subscribed = s.wait_for(Duration::from_secs(120), |st| st.open_streams as usize >= tasks);
    let to_subscribe = started.elapsed().as_secs_f64();
    // Past the first quiet checks, which come all together and then drain at the budget.
    std::thread::sleep(QUIET_AFTER + Duration::from_secs(3));
    say(format!("idle: measuring CPU for {window:?}"));
    // Nanosecond thread times where the kernel has them, clock ticks otherwise.
    let cpu = |pid: u32| thread_cpu_seconds(pid).unwrap_or_else(|| cpu_seconds(pid));
    let (cpu0, t0, st0) = (cpu(pid), Instant::now(), s.stats());
    let server_cpu0 = cpu_seconds(s.pid());
    std::thread::sleep(window);
    let (cpu1, wall, st1) = (cpu(pid), t0.elapsed().as_secs_f64(), s.stats());
    let server_cpu = cpu_seconds(s.pid()) - server_cpu0;
    let rss = rss_kib(pid);
    say(format!("idle: tracing terminal writes for {trace_window:?}"));
    let before = tmux(&["capture-pane", "-p", "-t", "bench"]).unwrap_or_default();
    let writes = trace_writes(pid, trace_window);
    let screen = tmux(&["capture-pane", "-p", "-t", "bench"]).unwrap_or_default();
    drop(session);
    Idle {
        subscribed,
        to_subscribe,
        cpu: cpu1 - cpu0,
        wall,
        share: (cpu1 - cpu0) / wall,
        server_cpu,
        rss,
        open: st1.open_streams,
        lists: st1.list_calls - st0.list_calls,
        gets: st1.get_calls - st0.get_calls,
        writes,
        screen_changed: before != screen,
        shows_tasks: screen.contains(&tasks.to_string()) || screen.contains("1,000") || screen.contains("1000"),
    }
}

/// The section's text: the setup, the table and the terminal writes.
fn body(m: &Idle, tasks: usize, window: Duration, trace_window: Duration, tick_frames: usize) -> String {
    let (wall, lists) = (m.wall, m.lists);
    let (draws, per_s, bytes) = match &m.writes {
        Some(w) => (
            format!("{} writes in {} frames", w.calls, w.frames),
            format!("{:.1}", w.calls as f64 / trace_window.as_secs_f64()),
            format!("{:.0}", w.bytes as f64 / trace_window.as_secs_f64()),
        ),
        None => ("strace failed".into(), "—".into(), "—".into()),
    };
    let rows = vec![vec![
        format!("{}", m.open),
        format!("{:.1} s", m.to_subscribe),
        format!("{:.2} s / {wall:.1} s", m.cpu),
        format!("**{:.2}%**", m.share * 100.0),
        format!("{lists} ({:.1}/s)", lists as f64 / wall),
        m.gets.to_string(),
        format!("{:.2}%", m.server_cpu / wall * 100.0),
        mib(m.rss),
    ]];
    format!(
        "`serve-load --tasks {tasks} --events 0 --hold`: every task WORKING, its stream open, no events (a \
`: keep-alive` comment every 15 s, like sse-starlette). The real binary in TUI mode in a detached tmux session \
(200x50, its own tmux socket): `a2a-watch --agent URL --max-streams {tasks}` (the default cap, 256, would stream only \
256 of them), with `quiet_after = {quiet}` in its config, so that the quiet streams' GetTask re-checks (issue 20: within 2x \
`quiet_after`, at most `check_rate` = 10 a second per agent) are in their steady state, which at 1,000 streams is the same \
at the default 30 s: the budget, saturated. Once the load agent holds {tasks} open streams, {quiet} + 3 s of settling, then CPU time summed over the \
process's threads from /proc/PID/task/*/schedstat (ns) over {window:?} of wall time. Then `strace -f -e trace=write,writev -p PID` for \
{trace_window:?}: every write to fd 1 is a frame sent to the terminal.\n\n{}\n\
Terminal writes in {trace_window:?}: **{draws}** ({per_s} writes/s, {bytes} bytes/s; writes less than \
{FRAME_GAP}s apart count as one frame){}; the screen text {} between the captures taken before and after the trace. \
Target: ≤ 0.2% of one core (issue 11; issue 6 asked < 1%), and no redraws without a change: the ages on screen tick \
once a second, so at most {tick_frames} frames in {trace_window:?}.\n",
        table(
            &[
                "open streams",
                "time to subscribe all",
                "CPU / wall",
                "CPU share",
                "ListTasks calls in window",
                "GetTask calls",
                "load agent CPU",
                "RSS"
            ],
            &rows
        ),
        if m.shows_tasks {
            ""
        } else {
            " (the captured screen did not show the task count; check the pane)"
        },
        if m.screen_changed {
            "changed (ages tick)"
        } else {
            "did not change"
        },
        quiet = format!("{} s", QUIET_AFTER.as_secs()),
    )
}

pub fn run() -> Section {
    let tasks = 1_000;
    let window = Duration::from_secs(if quick() { 10 } else { 30 });
    let trace_window = Duration::from_secs(if quick() { 5 } else { 10 });
    if tmux(&["-V"]).is_none() && Command::new("tmux").arg("-V").output().is_err() {
        return no_tmux();
    }
    let m = measure(tasks, window, trace_window, &[]);
    let ok = m.subscribed && m.share <= 0.002;
    // Nothing changes but the ages, once a second: a frame a second is all there should be.
    let tick_frames = trace_window.as_secs() as usize + 1;
    let frames = m.writes.as_ref().map(|w| w.frames);
    Section {
        number: 5,
        title: "Idle",
        target: "≤ 0.2% of one core (CPU s / wall s); no redraws without a change".into(),
        result: format!(
            "{:.2}% of a core with {} open streams; {} frames in {trace_window:?}",
            m.share * 100.0,
            m.open,
            frames.map_or("no trace of".to_string(), |f| f.to_string()),
        ),
        // Without every stream open, or without a trace, there is nothing to judge.
        verdict: match frames {
            Some(frames) if m.subscribed => Verdict::of(ok && frames <= tick_frames),
            _ => Verdict::NoData,
        },
        body: body(&m, tasks, window, trace_window, tick_frames),
    }
}
