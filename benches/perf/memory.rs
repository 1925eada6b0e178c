//! Benchmark 4, Memory: resident set of the real binary in `--json` mode watching 10,000 tasks (20 timeline
//! entries and a 1 KiB artifact each) against the same process watching none; and, in process,
//! the heap the store holds for them, measured with a counting allocator.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::alloc;
use crate::ingest;
use crate::util::{
    LoadServer, Section, Verdict, Watcher, hwm_kib, mib, quick, rss_kib, say, table, thousands, threads, watch_command,
};

fn server(tasks: usize) -> LoadServer {
    // 19 status updates: with the listing's first snapshot ("queued") that is 20 timeline entries.
    LoadServer::start(&[
        "--tasks".into(),
        tasks.to_string(),
        "--events".into(),
        "19".into(),
        "--artifact-bytes".into(),
        "1024".into(),
        "--artifact-chunks".into(),
        "1".into(),
    ])
}

struct Sample {
    rss: u64,
    hwm: u64,
    threads: u64,
    lines: u64,
    seconds: f64,
}

/// Runs `a2a-watch --agent URL --json` until the load agent has served every task and answered
/// the GetTask that follows each stream, lets it settle, and samples its memory.
fn watch(tasks: usize, settle: Duration) -> Sample {
    let s = server(tasks);
    let mut cmd = watch_command();
    cmd.arg("--agent").arg(s.url()).arg("--json");
    cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    let start = Instant::now();
    let mut w = Watcher::spawn(cmd);
    let lines = Arc::new(AtomicU64::new(0));
    let out = w.take_stdout();
    let counter = lines.clone();
    std::thread::spawn(move || {
        for _ in BufReader::new(out).lines() {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let finished = s.wait_for(Duration::from_secs(300), |st| {
        st.completed as usize >= tasks && st.get_calls as usize >= tasks && st.open_streams == 0
    });
    assert!(finished, "the watcher did not finish {tasks} tasks");
    let seconds = start.elapsed().as_secs_f64();
    std::thread::sleep(settle);
    Sample {
        rss: rss_kib(w.pid()),
        hwm: hwm_kib(w.pid()),
        threads: threads(w.pid()),
        lines: lines.load(Ordering::Relaxed),
        seconds,
    }
}

/// The store's heap for the watched tasks, in process, and what its parts hold.
struct StoreHeap {
    /// Tasks in the store.
    n: usize,
    /// Bytes live once the engine has shut down, and at the peak while it ran.
    live: i64,
    peak: i64,
    timeline_entries: usize,
    artifact_text: usize,
    /// A part of every task and the bytes all tasks' clones of it allocate.
    parts: Vec<(&'static str, i64)>,
    /// Bytes of `TaskEntry` + `TaskKey` themselves.
    inline: usize,
    /// Bytes of the timelines' spare capacity, and the capacity of one.
    timeline_slack: usize,
    timeline_capacity: usize,
}

/// What each part of a task holds on the heap: the bytes a clone of it allocates (a clone has
/// no spare capacity, so this is a floor), less the vector that collects the clones.
fn heap_of<T>(n: usize, f: impl FnOnce() -> Vec<T>) -> i64 {
    alloc::enable(true);
    let before = alloc::live();
    let v = f();
    let d = alloc::live() - before - (n * std::mem::size_of::<T>()) as i64;
    drop(v);
    alloc::enable(false);
    d
}

/// The store's heap for `tasks` tasks taken in through the real engine.
fn store_heap(tasks: usize) -> StoreHeap {
    let s = server(tasks);
    alloc::reset();
    alloc::enable(true);
    let before = alloc::live();
    let (_, store) = ingest::engine(&s, tasks, 256);
    let live = alloc::live() - before;
    let peak = alloc::peak() - before;
    alloc::enable(false);
    let timeline_entries: usize = store.tasks().map(|t| t.timeline.len()).sum();
    let artifact_text: usize = store
        .tasks()
        .map(|t| t.artifacts.iter().map(|a| a.text().len()).sum::<usize>())
        .sum();
    let n = store.len();
    let parts: Vec<(&str, i64)> = vec![
        (
            "`metadata`",
            heap_of(n, || store.tasks().map(|t| t.metadata.clone()).collect()),
        ),
        (
            "`artifacts`",
            heap_of(n, || store.tasks().map(|t| t.artifacts.clone()).collect()),
        ),
        (
            "`timeline` (20 `Transition`s)",
            heap_of(n, || store.tasks().map(|t| t.timeline.clone()).collect()),
        ),
        (
            "`status` (with its message)",
            heap_of(n, || store.tasks().map(|t| t.status.clone()).collect()),
        ),
        (
            "`history`",
            heap_of(n, || store.tasks().map(|t| t.history.clone()).collect()),
        ),
        (
            "key and context strings",
            heap_of(n, || {
                store
                    .tasks()
                    .map(|t| (t.key.id.to_string(), t.context.clone()))
                    .collect()
            }),
        ),
    ];
    let inline = std::mem::size_of::<a2a_watch::store::TaskEntry>() + std::mem::size_of::<a2a_watch::store::TaskKey>();
    // Spare capacity a clone does not have: the timeline's ring buffer grows by doubling.
    let timeline_slack: usize = store
        .tasks()
        .map(|t| (t.timeline.capacity() - t.timeline.len()) * std::mem::size_of::<a2a_watch::store::Transition>())
        .sum();
    let timeline_capacity = store.tasks().next().map_or(0, |t| t.timeline.capacity());
    drop(store);
    drop(s);
    StoreHeap {
        n,
        live,
        peak,
        timeline_entries,
        artifact_text,
        parts,
        inline,
        timeline_slack,
        timeline_capacity,
    }
}

/// The table of where the live heap goes, per task.
fn breakdown(h: &StoreHeap) -> String {
    let (n, store_heap, inline, timeline_slack) = (h.n, h.live, h.inline, h.timeline_slack);
    let named: i64 = h.parts.iter().map(|p| p.1).sum::<i64>() + (inline * n) as i64 + timeline_slack as i64;
    let mut part_rows: Vec<Vec<String>> = h
        .parts
        .iter()
        .map(|(name, bytes)| {
            vec![
                name.to_string(),
                thousands(*bytes as f64 / n as f64),
                format!("{:.0}%", *bytes as f64 / store_heap as f64 * 100.0),
            ]
        })
        .collect();
    part_rows.push(vec![
        "`TaskEntry` + `TaskKey` inline (HashMap slot, before load factor)".into(),
        thousands(inline as f64),
        format!("{:.0}%", (inline * n) as f64 / store_heap as f64 * 100.0),
    ]);
    part_rows.push(vec![
        format!(
            "`timeline` spare capacity ({} slots of {} B for 20 entries)",
            h.timeline_capacity,
            std::mem::size_of::<a2a_watch::store::Transition>()
        ),
        thousands(timeline_slack as f64 / n as f64),
        format!("{:.0}%", timeline_slack as f64 / store_heap as f64 * 100.0),
    ]);
    part_rows.push(vec![
        "rest (map slack, other capacity slack, the engine's leftovers)".into(),
        thousands((store_heap - named) as f64 / n as f64),
        format!("{:.0}%", (store_heap - named) as f64 / store_heap as f64 * 100.0),
    ]);
    table(&["part of a task", "bytes a task", "of the store heap"], &part_rows)
}

/// The table of the two processes sampled.
fn process_table(none: &Sample, full: &Sample, tasks: usize) -> String {
    let rows = vec![
        vec![
            "watching none".into(),
            "0".into(),
            mib(none.rss),
            mib(none.hwm),
            none.threads.to_string(),
            none.lines.to_string(),
            "—".into(),
        ],
        vec![
            format!("watching {}", thousands(tasks as f64)),
            thousands(tasks as f64),
            mib(full.rss),
            mib(full.hwm),
            full.threads.to_string(),
            thousands(full.lines as f64),
            format!("{:.1} s", full.seconds),
        ],
    ];
    table(
        &[
            "process",
            "tasks",
            "VmRSS",
            "VmHWM (peak)",
            "threads",
            "NDJSON lines",
            "time to ingest",
        ],
        &rows,
    )
}

/// The paragraph on the largest part and the process's memory beyond its heap.
fn where_it_goes(h: &StoreHeap, above: u64, tasks: usize) -> String {
    let (top_name, top_bytes) = h.parts.iter().max_by_key(|p| p.1).map_or(("?", 0), |p| (p.0, p.1));
    format!(
        "\n**Where it goes.** {} B a task in the store, of which the largest part is {top_name} ({} B a task, {:.0}%). \
The process sits {} above its live heap; the heap peaked at {} while 256 streams were open at once.\n",
        thousands(h.live as f64 / tasks as f64),
        thousands(top_bytes as f64 / h.n as f64),
        top_bytes as f64 / h.live as f64 * 100.0,
        mib(above.saturating_sub((h.live.max(0) as u64) / 1024)),
        mib((h.peak.max(0) as u64) / 1024),
    )
}

pub fn run() -> Section {
    let tasks = 10_000;
    let settle = Duration::from_secs(if quick() { 3 } else { 6 });
    say("memory: watching none");
    let none = watch(0, settle);
    say(format!("memory: watching {tasks} tasks"));
    let full = watch(tasks, settle);
    let above = full.rss.saturating_sub(none.rss);
    let verdict = Verdict::of(above <= 64 * 1024);

    // In process: the store's heap for the same tasks, through the real engine.
    say("memory: store heap in process");
    let heap = store_heap(tasks);
    let store_heap = heap.live;
    let body = format!(
        "The real binary, `a2a-watch --agent URL --json` (empty config), its NDJSON read and dropped by the harness, \
against `serve-load --tasks {tasks} --events 19 --artifact-bytes 1024 --artifact-chunks 1`: every task goes \
queued → 18 working steps → completed (20 timeline entries) and streams one 1 KiB artifact, then the watcher asks \
GetTask. Sampled from /proc/PID/status once the load agent has served every stream and GetTask, plus {settle:?} of \
settling (listings keep running). Baseline: the same binary against a load agent with no tasks.\n\n{}\n\
**{} above the idle process** (target ≤ 64 MiB; peak {} above).\n\n\
In process, a counting global allocator measured the heap that stays live after `Engine::start` has taken the same \
{tasks} tasks into a `Store` and shut down: **{} ({} bytes a task)**. Of what the tasks hold: {} timeline entries, \
{} of artifact text. The heap peaked at {} while the tasks streamed in (256 streams at a time). Where the live heap goes, per task:\n\n{}{why}",
        process_table(&none, &full, tasks),
        mib(above),
        mib(full.hwm.saturating_sub(none.hwm)),
        mib((store_heap.max(0) as u64) / 1024),
        thousands(store_heap as f64 / tasks as f64),
        thousands(heap.timeline_entries as f64),
        mib(heap.artifact_text as u64 / 1024),
        mib((heap.peak.max(0) as u64) / 1024),
        breakdown(&heap),
        why = where_it_goes(&heap, above, tasks),
    );
    Section {
        number: 4,
        title: "Memory",
        target: "≤ 64 MiB above the idle process".into(),
        result: format!(
            "{} above idle ({} vs {}); store heap {} B/task",
            mib(above),
            mib(full.rss),
            mib(none.rss),
            thousands(store_heap as f64 / tasks as f64)
        ),
        verdict,
        body,
    }
}
