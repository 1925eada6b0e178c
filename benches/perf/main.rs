//! a2a-watch benchmarks (issue 6): one `harness = false` binary for every measurement, so the
//! build stays light. `scripts/bench.sh` runs them all and writes BENCHMARKS.md.
//!
//! ```text
//! cargo bench --bench perf -- [decode] [ingest] [render] [memory] [idle] [latency] [scale]
//!                             [discovery] [e2e] [quiet] [tap] [fleet] [monitoring]
//!                             [--report FILE]       (default: all, report to stdout)
//!                             [--seconds N] [--agents N] [--tasks-per-agent N]
//!                             [--large-tasks-per-agent N]   (the fleet's size and window)
//!                             [--profile]           (append callgrind profiles of the worst ratios)
//! cargo bench --bench perf -- profile decode|apply-log|render-steady|render-event|ingest
//! <this binary> serve-load [--tasks N] [--events N] ...   (the load agent; `serve-load --help`)
//! <this binary> fleet-read --tasks N URL...           (the fleet's bare reader)
//! ```
//! `BENCH_QUICK=1` shrinks every benchmark to a smoke run. Benchmarks report; they never fail.

mod decode;
mod discovery;
mod e2e;
mod fleet;
mod idle;
mod ingest;
mod latency;
mod load;
mod memory;
mod monitoring;
mod quiet;
mod render;
mod scale;
mod tap;
mod util;

use std::process::Command;

use util::{Section, Verdict, quick, say, table};

/// A global allocator that can count live bytes, for the memory benchmark; off (one relaxed
/// load per call) everywhere else.
mod alloc {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

    static ON: AtomicBool = AtomicBool::new(false);
    static LIVE: AtomicI64 = AtomicI64::new(0);
    static PEAK: AtomicI64 = AtomicI64::new(0);

    fn grew(by: i64) {
        let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }

    pub struct Counting;

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() && ON.load(Ordering::Relaxed) {
                grew(layout.size() as i64);
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            if ON.load(Ordering::Relaxed) {
                LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() && ON.load(Ordering::Relaxed) {
                grew(new_size as i64 - layout.size() as i64);
            }
            p
        }
    }

    pub fn enable(on: bool) {
        ON.store(on, Ordering::SeqCst);
    }

    pub fn reset() {
        LIVE.store(0, Ordering::SeqCst);
        PEAK.store(0, Ordering::SeqCst);
    }

    /// The most that was live at once since `reset`.
    pub fn peak() -> i64 {
        PEAK.load(Ordering::SeqCst)
    }

    pub fn live() -> i64 {
        LIVE.load(Ordering::SeqCst)
    }
}

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

const ALL: [&str; 13] = [
    "decode",
    "ingest",
    "render",
    "memory",
    "idle",
    "latency",
    "scale",
    "discovery",
    "e2e",
    "quiet",
    "tap",
    "fleet",
    "monitoring",
];

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.first().map(String::as_str) == Some("profile") {
        profile(args.get(1).map_or("decode", String::as_str));
        return;
    }
    if args.first().map(String::as_str) == Some("serve-load") {
        serve_load(&args);
        return;
    }
    if args.first().map(String::as_str) == Some("fleet-read") {
        fleet::bare_reader(&args);
        return;
    }
    let fleet_knobs = fleet::Knobs::take(&mut args);
    let with_profiles = args.iter().any(|a| a == "--profile");
    args.retain(|a| a != "--profile");
    let mut report = None;
    if let Some(i) = args.iter().position(|a| a == "--report") {
        report = args.get(i + 1).cloned();
        args.drain(i..(i + 2).min(args.len()));
    }
    let wanted: Vec<&str> = if args.is_empty() || args.iter().any(|a| a == "all") {
        ALL.to_vec()
    } else {
        ALL.iter().copied().filter(|b| args.iter().any(|a| a == b)).collect()
    };
    let started = jiff::Timestamp::now();
    let mut sections = Vec::new();
    for name in &wanted {
        say(format!("== {name}"));
        let t = std::time::Instant::now();
        let section = match *name {
            "decode" => decode::run(),
            "ingest" => ingest::run(),
            "render" => render::run(),
            "memory" => memory::run(),
            "idle" => idle::run(),
            "latency" => latency::run(),
            "scale" => scale::run(),
            "discovery" => discovery::run(),
            "e2e" => e2e::run(),
            "quiet" => quiet::run(),
            "tap" => tap::run(),
            "fleet" => fleet::run(fleet_knobs),
            "monitoring" => monitoring::run(),
            _ => unreachable!(),
        };
        say(format!(
            "   {} ({:.0} s): {}",
            section.verdict.label(),
            t.elapsed().as_secs_f64(),
            section.result
        ));
        sections.push(section);
    }
    let mut text = markdown(&sections, started);
    if with_profiles {
        text = text.replace("<!-- profile -->\n", &profiles());
    }
    match report {
        Some(path) => {
            std::fs::write(&path, &text).unwrap_or_else(|e| panic!("writing {path}: {e}"));
            say(format!("wrote {path}"));
        }
        None => print!("{text}"),
    }
    let _ = std::fs::remove_dir_all(util::scratch());
}

/// The load agents' flags (`util::LoadServer` starts this binary with them).
#[derive(clap::Parser)]
#[command(name = "serve-load")]
struct LoadArgs {
    /// Tasks per agent.
    #[arg(long, default_value_t = 100)]
    tasks: usize,
    /// Status updates per task; the last one completes it unless --hold.
    #[arg(long, default_value_t = 100)]
    events: usize,
    /// Events per second on each stream (default: as fast as the client reads).
    #[arg(long)]
    rate: Option<f64>,
    /// With --rate: start each stream's events at its own point of the period, spread evenly
    /// over every agent's streams, so that they arrive one at a time (a sparse fleet, issue 23).
    #[arg(long)]
    spread: bool,
    /// Agents, on consecutive ports from --port (ephemeral ports when --port is 0).
    #[arg(long, default_value_t = 1)]
    agents: usize,
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Each task's artifact size in bytes, streamed in --artifact-chunks chunks.
    #[arg(long, default_value_t = 0)]
    artifact_bytes: usize,
    #[arg(long, default_value_t = 0)]
    artifact_chunks: usize,
    /// Keep the tasks working and their streams open after their events.
    #[arg(long)]
    hold: bool,
    /// Seconds between keep-alive comments on quiet streams.
    #[arg(long, default_value_t = 15.0)]
    keep_alive: f64,
    /// Messages in each task's history.
    #[arg(long, default_value_t = 0)]
    history: usize,
    /// List no task until `GET /_load/reveal`.
    #[arg(long)]
    hidden: bool,
    /// Serve gRPC too, on a port of its own, and list it first on the card.
    #[arg(long)]
    grpc: bool,
}

/// `serve-load`: starts the load agents on loopback, prints one JSON line with their URLs (and
/// gRPC interfaces) once they listen, then serves until interrupted.
fn serve_load(args: &[String]) {
    use clap::{CommandFactory as _, Parser as _};
    let a = LoadArgs::parse_from(args);
    if !(a.keep_alive > 0.0 && a.keep_alive.is_finite()) {
        LoadArgs::command()
            .error(
                clap::error::ErrorKind::ValueValidation,
                "--keep-alive must be a positive number of seconds",
            )
            .exit();
    }
    let config = load::LoadConfig {
        agents: a.agents,
        tasks: a.tasks,
        events: a.events,
        rate: a.rate,
        spread: a.spread,
        artifact_bytes: a.artifact_bytes,
        artifact_chunks: a.artifact_chunks,
        hold: a.hold,
        port: a.port,
        keep_alive: std::time::Duration::from_secs_f64(a.keep_alive),
        history: a.history,
        hidden: a.hidden,
        grpc: a.grpc,
    };
    // The scale benchmark holds thousands of streams open against it.
    a2a_watch::cli::raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new().expect("the async runtime starts");
    runtime.block_on(async {
        let running = load::start(config)
            .await
            .unwrap_or_else(|e| panic!("serve-load on 127.0.0.1:{}: {e}", a.port));
        println!(
            "{}",
            serde_json::json!({ "agents": running.urls, "grpc": running.grpc })
        );
        // If the signal handler cannot be installed, serve until killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        running.stop();
    });
}

/// One workload alone, for `valgrind --tool=callgrind`; the `#[inline(never)]` functions are
/// what `--toggle-collect` names.
fn profile(what: &str) {
    match what {
        "decode" => {
            let c = decode::corpus(&decode::configs()[0].1);
            profiled::decode_full(&c);
            profiled::decode_baseline(&c);
        }
        "apply-log" => {
            let c = decode::corpus(&decode::configs()[2].1);
            profiled::decode_full(&c);
            profiled::decode_baseline(&c);
        }
        "render-steady" | "render-event" | "render-filter" => {
            let mut app = render::app(100_000);
            if what == "render-filter" {
                let mut spec = app.spec().clone();
                spec.filter = a2a_watch::store::query::Filter::parse("test_4");
                app.set_spec(spec);
            }
            let mut term = render::terminal();
            render::frame(&mut term, &mut app);
            if what == "render-steady" {
                profiled::render_steady(&mut term, &mut app);
            } else {
                profiled::render_event(&mut term, &mut app);
            }
        }
        "ingest" => {
            let s = util::LoadServer::start(&["--tasks".into(), "100".into(), "--events".into(), "500".into()]);
            let (run, _) = ingest::engine(&s, 100, 256);
            eprintln!(
                "profile ingest: {} events in {:.2} s; load agent: {:?}",
                run.events,
                run.seconds,
                s.stats()
            );
        }
        "ingest-store" | "ingest-engine" | "ingest-bare" => {
            let s = util::LoadServer::start(&["--tasks".into(), "100".into(), "--events".into(), "10000".into()]);
            let run = match what {
                "ingest-store" => ingest::bare(&s, 100, ingest::Layer::Store),
                "ingest-bare" => ingest::bare(&s, 100, ingest::Layer::Count),
                _ => ingest::engine(&s, 100, 256).0,
            };
            eprintln!(
                "profile {what}: {} events in {:.2} s, {:.2} µs CPU an event",
                run.events,
                run.seconds,
                run.client_cpu / run.events as f64 * 1e6
            );
        }
        "ingest-decode" => {
            let s = util::LoadServer::start(&["--tasks".into(), "100".into(), "--events".into(), "500".into()]);
            let run = ingest::bare(&s, 100, ingest::Layer::Decode);
            eprintln!(
                "profile ingest-decode: {} events in {:.2} s; load agent: {:?}",
                run.events,
                run.seconds,
                s.stats()
            );
        }
        other => {
            eprintln!("profile: unknown workload {other:?} (decode, apply-log, render-steady, render-event, ingest)")
        }
    }
}

mod profiled {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use a2a_watch::app::App;

    use crate::{decode, render};

    pub const FRAMES: usize = 3;

    #[inline(never)]
    pub fn decode_full(c: &decode::Corpus) -> usize {
        decode::full(c)
    }

    #[inline(never)]
    pub fn decode_baseline(c: &decode::Corpus) -> usize {
        decode::baseline(c)
    }

    #[inline(never)]
    pub fn render_steady(term: &mut Terminal<TestBackend>, app: &mut App) {
        for _ in 0..FRAMES {
            render::frame(term, app);
        }
    }

    #[inline(never)]
    fn event_frame(term: &mut Terminal<TestBackend>, app: &mut App) {
        render::frame(term, app);
    }

    pub fn render_event(term: &mut Terminal<TestBackend>, app: &mut App) {
        for k in 0..FRAMES {
            render::touch(app, 100_000, k + 1);
            event_frame(term, app);
        }
    }
}

/// One callgrind run of `profile <workload>`, collecting only inside `toggle` (all if empty).
fn callgrind(workload: &str, toggle: &str) -> Option<std::path::PathBuf> {
    let out = util::scratch().join(format!("callgrind.{workload}.{}", toggle.len()));
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new("valgrind");
    cmd.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()));
    if !toggle.is_empty() {
        cmd.arg(format!("--toggle-collect={toggle}"));
    }
    cmd.arg(exe).arg("profile").arg(workload);
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let status = cmd.status().ok()?;
    (status.success() && out.is_file()).then_some(out)
}

/// (instructions, share in percent, function)
type Costs = Vec<(u64, f64, String)>;

struct Annotated {
    total: u64,
    /// (instructions, share, function) by self cost.
    exclusive: Costs,
    /// The same, counting callees.
    inclusive: Costs,
}

fn annotate(file: &std::path::Path) -> Option<Annotated> {
    let parse = |inclusive: bool| -> Option<(u64, Costs)> {
        let mut cmd = Command::new("callgrind_annotate");
        if inclusive {
            cmd.arg("--inclusive=yes");
        }
        let text = String::from_utf8_lossy(&cmd.arg(file).output().ok()?.stdout).to_string();
        let mut total = 0;
        let mut rows = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            let Some((num, rest)) = line.split_once(' ') else {
                continue;
            };
            let Ok(n) = num.replace(',', "").parse::<u64>() else {
                continue;
            };
            if rest.contains("PROGRAM TOTALS") {
                total = n;
                continue;
            }
            let Some((pct, name)) = rest.trim().strip_prefix('(').and_then(|r| r.split_once("%)")) else {
                continue;
            };
            let name = name.trim();
            let name = name.split_once(':').map_or(name, |(_, f)| f);
            let name = name.rsplit_once(" [").map_or(name, |(f, _)| f).trim().to_string();
            rows.push((n, pct.trim().parse::<f64>().unwrap_or(0.0), name));
        }
        Some((total, rows))
    };
    let (total, exclusive) = parse(false)?;
    let (_, inclusive) = parse(true)?;
    Some(Annotated {
        total,
        exclusive,
        inclusive,
    })
}

fn interesting(name: &str) -> bool {
    const WRAPPERS: [&str; 16] = [
        "SpecFromIterNested",
        "Iterator>::fold",
        "Iterator>::next",
        "Iterator>::try_fold",
        "tokio::runtime",
        "<std::sys::thread",
        "stream::map::Map",
        "TakeWhile",
        "ForEach",
        "FnMut1",
        "block_on",
        "Harness<T,S>",
        "Core<T,S>",
        "Scoped<T>",
        "<&mut serde_json::de::Deserializer<R> as serde_core::de::Deserializer>::deserialize_struct",
        "Deserialize for core::option::Option<T>",
    ];
    !(WRAPPERS.iter().any(|w| name.contains(w))
        || name.starts_with("perf::")
        || name.starts_with("std::")
        || name.starts_with("core::ops")
        || name.starts_with("main")
        || name.starts_with("(below")
        || name.starts_with("0x")
        || name.starts_with("__libc")
        || name.starts_with("start_thread")
        || name.starts_with("clone")
        || name.contains("lang_start")
        || name.contains("__rust_begin_short_backtrace"))
}

fn function_table(rows: &[(u64, f64, String)], take: usize, filter: impl Fn(&str) -> bool) -> String {
    let picked: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| filter(&r.2) && r.1 < 99.5)
        .take(take)
        .map(|(n, pct, name)| {
            let short: String = name.chars().take(110).collect();
            vec![
                util::thousands(*n as f64),
                format!("{pct:.1}%"),
                format!("`{}`", short.replace('`', "'")),
            ]
        })
        .collect();
    table(&["Ir", "share", "function"], &picked)
}

/// The callgrind section: the worst ratios, profiled, with their hot functions.
fn profiles() -> String {
    if Command::new("valgrind").arg("--version").output().is_err() {
        return "## Profiles\n\nvalgrind is not installed: no profiles in this run.\n".into();
    }
    let mut out = String::from(
        "## Profiles (callgrind; ingest sampled with perf)\n\n`valgrind --tool=callgrind` counts instructions (Ir), so these figures repeat \
from run to run where timings do not; `perf stat -e instructions` is not supported on this machine. Each workload is \
`cargo bench --bench perf -- profile <workload>`, collected only inside the measured function \
(`--toggle-collect`). Names are as callgrind demangles them; inlined callees are counted in their callers; generic \
wrappers (iterator adapters, the tokio scheduler, serde's generic struct visitor) are left out of the inclusive lists. \
`rep movsb` counts one instruction per byte, so `__memcpy_avx_unaligned_erms` measures bytes copied and overstates \
its share of the time. Ingest over the network is not profiled here: its instruction count depends on how the bytes \
fall into reads (see the read-size table of benchmark 1), so it does not repeat; its layers are timed in benchmark 2.\n",
    );
    let runs: [(&str, &str, &str); 6] = [
        (
            "render-steady",
            "perf::profiled::render_steady",
            "Render, 100,000 tasks, store unchanged (3 frames)",
        ),
        (
            "render-event",
            "perf::profiled::event_frame",
            "Render, 100,000 tasks, one event before each frame (3 frames)",
        ),
        (
            "render-filter",
            "perf::profiled::event_frame",
            "Render, 100,000 tasks, filter text `test_4`, one event before each frame (3 frames)",
        ),
        (
            "decode",
            "perf::profiled::decode_full",
            "Decode + apply, status updates (full path)",
        ),
        (
            "decode",
            "perf::profiled::decode_baseline",
            "Decode baseline, `from_slice::<Value>` of the same frames",
        ),
        (
            "apply-log",
            "perf::profiled::decode_full",
            "Decode + apply, status + streamed log (64 KiB in 200 chunks a task)",
        ),
    ];
    let mut decode_ir = Vec::new();
    for (workload, toggle, title) in runs {
        say(format!("callgrind: {title}"));
        let Some(file) = callgrind(workload, toggle) else {
            out.push_str(&format!("\n### {title}\n\ncallgrind failed.\n"));
            continue;
        };
        let Some(a) = annotate(&file) else { continue };
        if workload == "decode" {
            decode_ir.push(a.total);
        }
        out.push_str(&format!(
            "\n### {title}\n\n{} instructions collected.\n\n",
            util::thousands(a.total as f64)
        ));
        out.push_str("Inclusive (with callees), a2a-watch and library functions:\n\n");
        out.push_str(&function_table(&a.inclusive, 16, interesting));
        out.push_str("\nSelf cost:\n\n");
        out.push_str(&function_table(&a.exclusive, 10, |_| true));
    }
    if let [full, base] = decode_ir[..] {
        out.push_str(&format!(
            "\nDecode + apply costs **{:.2}x** the baseline in instructions ({} vs {}).\n",
            full as f64 / base as f64,
            util::thousands(full as f64),
            util::thousands(base as f64)
        ));
    }
    out.push_str(&sampled_ingest());
    out
}

/// Ingest is multi-threaded and timing-bound, which callgrind (one thread at a time) cannot show:
/// `perf record -e cpu-clock` samples the real run instead, where the kernel allows it.
fn sampled_ingest() -> String {
    let data = util::scratch().join("perf.ingest");
    let Ok(exe) = std::env::current_exe() else {
        return String::new();
    };
    say("perf record: ingest, readers + channel + store");
    let recorded = Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-F",
            "499",
            "--call-graph",
            "dwarf,16384",
            "-o",
        ])
        .arg(&data)
        .arg(exe)
        .args(["profile", "ingest-store"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !recorded {
        return "\n### Ingest, sampled\n\n`perf record -e cpu-clock` is not available here: not sampled.\n".into();
    }
    let report = perf_report(&data);
    let rows = sample_rows(&report);
    format!(
        "\n### Ingest, sampled (perf record)\n\n`perf record -e cpu-clock -F 499 --call-graph dwarf` of \
`profile ingest-store` (benchmark 2's \"channel → `Store::apply`\" rung, 100 streams × 10,000 events, the real \
multi-threaded run). Share of all samples in which each function is on the stack (children included, so rows \
overlap):\n\n{}",
        table(&["what", "samples", "symbol"], &rows)
    )
}

/// `perf report` of the samples in `data`: the share of samples each symbol is on the stack in.
fn perf_report(data: &std::path::Path) -> String {
    Command::new("perf")
        .args([
            "report",
            "--children",
            "--sort",
            "symbol",
            "--stdio",
            "-g",
            "none",
            "-i",
        ])
        .arg(data)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default()
}

/// The share of samples of each function the ingest profile looks for, from `report`.
fn sample_rows(report: &str) -> Vec<Vec<String>> {
    // (label, what the symbol column contains); the first line that matches is taken.
    let wanted: [(&str, &str); 12] = [
        ("all of the readers' tasks (tokio workers)", "multi_thread::worker::run"),
        (
            "the consumer (`block_on` on the main thread)",
            "CachedParkThread::block_on",
        ),
        (
            "eventsource-stream",
            "EventStream<S> as futures_core::stream::Stream>::poll_next",
        ),
        (
            "decoding a `StreamResponse`",
            "StreamResponse as serde_core::de::Deserialize",
        ),
        ("`Store::apply`", "a2a_watch::store::Store::apply"),
        (
            "dropping a `Message` (in the consumer)",
            "drop_in_place<a2a_watch::a2a::types::Message>",
        ),
        ("system calls", "entry_SYSCALL_64_after_hwframe"),
        ("futex (kernel)", "do_futex"),
        ("glibc arena lock, waiting", "lll_lock_wait_private"),
        ("glibc arena lock, waking", "lll_lock_wake_private"),
        ("`malloc` internals", "_int_malloc"),
        ("`free` internals", "_int_free"),
    ];
    let mut rows = Vec::new();
    for (label, needle) in wanted {
        let line = report
            .lines()
            .find(|l| l.contains(needle) && l.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        let share = line
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or("—")
            .to_string();
        rows.push(vec![label.to_string(), share, format!("`{needle}`")]);
    }
    rows
}

fn command_line(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU".to_string(), |(_, m)| m.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let rustc = command_line("rustc", &["-V"]).unwrap_or_else(|| "rustc (unknown)".into());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let nofile = util::nofile_limits(std::process::id()).map_or("?".into(), |(s, h)| format!("{s} / {h}"));
    let dir = env!("CARGO_MANIFEST_DIR");
    let rev = command_line("git", &["-C", dir, "rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "?".into());
    let dirty = command_line("git", &["-C", dir, "status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    let mut tree = format!("{rev}{}", if dirty { " with uncommitted changes" } else { "" });
    if std::env::var_os("BENCH_BINARY").is_some() {
        tree.push_str(&format!(
            "; the a2a-watch binary measured is `BENCH_BINARY` = {}",
            util::binary().display()
        ));
    }
    format!(
        "- CPU: {model}, {cores} cores available\n- Memory: {:.1} GiB\n- Kernel: Linux {}\n- {rustc}; bench profile \
(release, optimized)\n- Tree: {tree}\n- Load average when the run began: {}\n- RLIMIT_NOFILE soft / hard of the harness: \
{nofile}\n",
        mem_kib as f64 / 1024.0 / 1024.0,
        kernel.trim(),
        load.join(" "),
    )
}

fn markdown(sections: &[Section], started: jiff::Timestamp) -> String {
    let mut out = String::new();
    out.push_str("# a2a-watch benchmarks\n\n");
    out.push_str(
        "Written by `scripts/bench.sh` (`cargo bench --bench perf`, code in `benches/perf/`), issue 6. Figures are \
from one run on a shared machine: absolute numbers are noisy, so every comparison is a ratio of figures measured in \
the same run, side by side. Benchmarks report; nothing here fails CI.\n\n",
    );
    out.push_str(&format!(
        "Run: {} (UTC), {} mode.\n\n",
        started.strftime("%Y-%m-%d %H:%M"),
        if quick() {
            "**quick** (`BENCH_QUICK=1`, smaller sizes and shorter windows)"
        } else {
            "full"
        }
    ));
    out.push_str("## Machine\n\n");
    out.push_str(&machine());
    out.push_str("\n## Summary\n\n");
    let rows: Vec<Vec<String>> = sections
        .iter()
        .map(|s| {
            vec![
                format!("{}. {}", s.number, s.title),
                s.target.clone(),
                s.result.clone(),
                s.verdict.label().to_string(),
            ]
        })
        .collect();
    out.push_str(&table(&["benchmark", "target", "result", "verdict"], &rows));
    let missed = sections.iter().filter(|s| s.verdict == Verdict::Missed).count();
    let no_data = sections.iter().filter(|s| s.verdict == Verdict::NoData).count();
    out.push_str(&format!(
        "\n{missed} of {} targets missed in this run; {no_data} without data.\n",
        sections.len()
    ));
    for s in sections {
        out.push_str(&format!("\n## {}. {}\n\n", s.number, s.title));
        out.push_str(&s.body);
    }
    out.push_str(&analysis());
    // Replaced by the callgrind section with `--profile`.
    out.push_str("\n<!-- profile -->\n");
    out
}

/// `benches/perf/ANALYSIS.md`: the causes of the gaps, written by hand against one revision
/// (its first line, `<!-- rev: abc1234 -->`); flagged when this run measured another.
fn analysis() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let Ok(text) = std::fs::read_to_string(format!("{dir}/benches/perf/ANALYSIS.md")) else {
        return String::new();
    };
    let written = text
        .lines()
        .next()
        .and_then(|l| l.trim().strip_prefix("<!-- rev:"))
        .and_then(|l| l.strip_suffix("-->"))
        .map(|r| r.trim().to_string());
    let head = command_line("git", &["-C", dir, "rev-parse", "--short", "HEAD"]);
    let mut out = String::from("\n");
    if let (Some(w), Some(h)) = (&written, &head)
        && w != h
    {
        out.push_str(&format!(
            "> The analysis below was written against {w}; this run measured {h}. Where the figures above \
disagree with it, the figures are right.\n\n"
        ));
    }
    out.push_str(
        text.lines()
            .skip(usize::from(written.is_some()))
            .collect::<Vec<_>>()
            .join("\n")
            .trim_start(),
    );
    out.push('\n');
    out
}
