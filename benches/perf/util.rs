//! What every benchmark shares: the load agent as a child process, /proc sampling, a tiny
//! blocking HTTP GET for the load agent's stats, statistics and markdown tables.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The real binary, built by cargo for this bench target; or `BENCH_BINARY`, another revision's
/// build, so that figures before and after a change come from one machine in one sitting.
pub fn binary() -> PathBuf {
    std::env::var_os("BENCH_BINARY").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_a2a-watch")), PathBuf::from)
}

pub fn quick() -> bool {
    std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A scratch directory for this run (config files, logs).
pub fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-watch-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// An empty config file, so the user's own config never leaks into a measurement.
pub fn empty_config() -> PathBuf {
    let path = scratch().join("config.toml");
    let _ = std::fs::write(&path, "");
    path
}

/// The load agent (`load.rs`), this binary's `serve-load ...`, as a child process; killed on drop.
pub struct LoadServer {
    child: Child,
    pub urls: Vec<String>,
    /// The agents' gRPC interfaces (`host:port`), with `--grpc`.
    pub grpc: Vec<String>,
}

impl LoadServer {
    /// `serve-load` with its flags in one string, split at spaces.
    pub fn with(flags: &str) -> LoadServer {
        LoadServer::start(&flags.split_whitespace().map(str::to_string).collect::<Vec<_>>())
    }

    pub fn start(args: &[String]) -> LoadServer {
        let mut child = Command::new(std::env::current_exe().expect("the bench binary knows its path"))
            .arg("serve-load")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the bench binary runs");
        let stdout = child.stdout.take().expect("piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("serve-load prints its URLs");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("serve-load said {line:?}: {e}"));
        let strings = |key: &str| -> Vec<String> {
            v[key]
                .as_array()
                .map(|a| a.iter().filter_map(|u| u.as_str().map(str::to_string)).collect())
                .unwrap_or_default()
        };
        LoadServer {
            child,
            urls: strings("agents"),
            grpc: strings("grpc"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self) -> &str {
        &self.urls[0]
    }

    /// Every agent's stats, summed field by field.
    pub fn stats(&self) -> Stats {
        let mut total = Stats::default();
        for url in &self.urls {
            if let Some(v) = http_get_json(url, "/_load/stats") {
                let get = |k: &str| v[k].as_u64().unwrap_or(0);
                total.open_streams += get("open_streams");
                total.peak_streams += get("peak_streams");
                total.subscribes += get("subscribes");
                total.events += get("events");
                total.completed += get("completed");
                total.list_calls += get("list_calls");
                total.get_calls += get("get_calls");
            }
        }
        total
    }

    /// Polls the stats until `done` holds; false on timeout.
    pub fn wait_for(&self, timeout: Duration, done: impl Fn(&Stats) -> bool) -> bool {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if done(&self.stats()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for LoadServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    pub open_streams: u64,
    pub peak_streams: u64,
    pub subscribes: u64,
    pub events: u64,
    pub completed: u64,
    pub list_calls: u64,
    pub get_calls: u64,
}

/// HTTP/1.0 GET on loopback; the server closes the connection after the reply.
pub fn http_get_json(base: &str, path: &str) -> Option<Value> {
    let host = base.strip_prefix("http://")?.trim_end_matches('/');
    let mut s = TcpStream::connect(host).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let (_, body) = buf.split_once("\r\n\r\n")?;
    serde_json::from_str(body).ok()
}

/// A child process of the real binary, killed on drop.
pub struct Watcher {
    pub child: Child,
}

impl Watcher {
    pub fn spawn(mut cmd: Command) -> Watcher {
        Watcher {
            child: cmd.spawn().expect("the a2a-watch binary runs"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn take_stdout(&mut self) -> ChildStdout {
        self.child.stdout.take().expect("stdout piped")
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `a2a-watch` with an empty config and logs in the scratch directory.
pub fn watch_command() -> Command {
    let mut cmd = Command::new(binary());
    cmd.arg("--config").arg(empty_config());
    cmd.arg("--log-file").arg(scratch().join("a2a-watch.log"));
    cmd
}

// ---- /proc ----

fn status_field(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Resident set size, KiB.
pub fn rss_kib(pid: u32) -> u64 {
    status_field(pid, "VmRSS:").unwrap_or(0)
}

/// Peak resident set size, KiB.
pub fn hwm_kib(pid: u32) -> u64 {
    status_field(pid, "VmHWM:").unwrap_or(0)
}

pub fn threads(pid: u32) -> u64 {
    status_field(pid, "Threads:").unwrap_or(0)
}

pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// The soft and hard RLIMIT_NOFILE of a running process.
pub fn nofile_limits(pid: u32) -> Option<(String, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let mut parts = line["Max open files".len()..].split_whitespace();
    Some((parts.next()?.to_string(), parts.next()?.to_string()))
}

fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// User + system CPU seconds of a process (all its threads) so far.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / clock_ticks()
}

/// System CPU seconds of a process (all its threads) so far.
pub fn sys_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(12).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / clock_ticks()
}

/// Context switches (voluntary + not) of this process's live threads so far.
pub fn self_context_switches() -> u64 {
    context_switches(std::process::id())
}

/// Context switches (voluntary + not) of a process's live threads so far: /proc/PID/status
/// counts only its main thread, so each thread's own status is read.
pub fn context_switches(pid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut n = 0;
    for entry in dir.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        for line in text.lines() {
            if line.starts_with("voluntary_ctxt_switches:") || line.starts_with("nonvoluntary_ctxt_switches:") {
                n += line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    n
}

/// CPU seconds of a process's live threads, from /proc/PID/task/*/schedstat (nanoseconds, so
/// much finer than the 10 ms ticks of /proc/PID/stat); threads that have exited are not counted.
pub fn thread_cpu_seconds(pid: u32) -> Option<f64> {
    let mut ns = 0u64;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let text = std::fs::read_to_string(entry.path().join("schedstat")).ok()?;
        ns += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e9)
}

pub fn self_cpu_seconds() -> f64 {
    cpu_seconds(std::process::id())
}

// ---- statistics ----

pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The q-th quantile (0..=1) of sorted data, nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

// ---- formatting ----

pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", header.iter().map(|_| "---|").collect::<String>()));
    for r in rows {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out
}

/// A number with thousands separators.
pub fn thousands(n: f64) -> String {
    let s = format!("{:.0}", n);
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

pub fn ms(d: f64) -> String {
    if d < 0.01 {
        format!("{:.1} µs", d * 1000.0)
    } else if d < 1.0 {
        format!("{:.3} ms", d)
    } else {
        format!("{:.1} ms", d)
    }
}

/// Prints progress to stderr (the report goes to a file).
pub fn say(msg: impl AsRef<str>) {
    eprintln!("[bench] {}", msg.as_ref());
}

/// How a benchmark did against its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    /// No target, or it could not be measured here.
    Info,
    /// The measurement failed (no samples, a dead process, an error): nothing to judge.
    NoData,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Missed => "**missed**",
            Verdict::Info => "n/a",
            Verdict::NoData => "no data",
        }
    }

    pub fn of(ok: bool) -> Verdict {
        if ok { Verdict::Met } else { Verdict::Missed }
    }
}

/// One benchmark's part of BENCHMARKS.md.
pub struct Section {
    pub number: u8,
    pub title: &'static str,
    pub target: String,
    /// The headline figure(s), one line.
    pub result: String,
    pub verdict: Verdict,
    /// Markdown: how it was measured, the figures, and what they mean.
    pub body: String,
}

// ---- the real binary, measured from outside ----

/// The distinct tasks the binary's NDJSON has named so far (agents' task ids are distinct in the
/// load agent), and when the count first reached the goal, with the process's CPU seconds then.
#[derive(Debug, Default)]
pub struct Printed {
    pub tasks: std::collections::HashSet<String>,
    pub lines: u64,
    pub errors: u64,
    /// (wall seconds since start, CPU seconds of the process) when every task had a line.
    pub reached: Option<(f64, f64)>,
    /// The output ended: the process exited or closed stdout.
    pub ended: bool,
}

/// Reads the binary's stdout on a thread of its own, counting what `Printed` counts.
pub struct TaskLines(std::sync::Arc<std::sync::Mutex<Printed>>);

impl TaskLines {
    pub fn spawn(out: ChildStdout, pid: u32, goal: usize, start: Instant) -> TaskLines {
        let shared = std::sync::Arc::new(std::sync::Mutex::new(Printed::default()));
        let seen = shared.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                // A substring search rather than a JSON parse: the harness shares the two cores.
                let task = line
                    .split_once(r#""task":""#)
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map(|(id, _)| id.to_string());
                let mut p = seen.lock().unwrap_or_else(|e| e.into_inner());
                p.lines += 1;
                if line.contains(r#""event":"error""#) {
                    p.errors += 1;
                }
                if let Some(task) = task {
                    p.tasks.insert(task);
                    if p.tasks.len() >= goal && p.reached.is_none() {
                        p.reached = Some((start.elapsed().as_secs_f64(), process_cpu_seconds(pid)));
                    }
                }
            }
            seen.lock().unwrap_or_else(|e| e.into_inner()).ended = true;
        });
        TaskLines(shared)
    }

    /// Waits until every task has a line, the output ends, or `timeout`; true if every task did.
    pub fn wait(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        loop {
            {
                let p = self.0.lock().unwrap_or_else(|e| e.into_inner());
                if p.reached.is_some() {
                    return true;
                }
                if p.ended || Instant::now() >= until {
                    return false;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn get<T>(&self, f: impl FnOnce(&Printed) -> T) -> T {
        f(&self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// CPU seconds of a running process: the finer of the per-thread nanosecond counters and the
/// whole process's 10 ms ticks (which also count threads that have exited).
pub fn process_cpu_seconds(pid: u32) -> f64 {
    cpu_seconds(pid).max(thread_cpu_seconds(pid).unwrap_or(0.0))
}

/// How a child process that was waited for ended.
#[derive(Debug, Clone, Copy)]
pub struct Exited {
    pub wall: f64,
    /// User + system CPU seconds (getrusage of the child).
    pub cpu: f64,
    pub success: bool,
}

/// Waits for `child` with wait4(2), which returns its CPU time as well; kills it after
/// `timeout` (None then). `start` is when it was spawned.
pub fn wait_measured(child: &mut Child, start: Instant, timeout: Duration) -> Option<Exited> {
    let pid = i32::try_from(child.id()).ok()?;
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child, with pointers to live locals.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            return Some(Exited {
                wall: start.elapsed().as_secs_f64(),
                cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
                success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            });
        }
        if got < 0 {
            return None;
        }
        if start.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
