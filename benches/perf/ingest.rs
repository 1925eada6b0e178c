//! Benchmark 2, Ingest over loopback: many streams through the real watch engine into the store, against
//! (a) a bare reqwest + eventsource-stream frame counter and (b) the official Python SDK client; and
//! the same engine over gRPC (issue 14) against (a′), a bare tonic message counter.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::{FutureExt, StreamExt};
use http::uri::PathAndQuery;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use tonic::transport::Endpoint;

use a2a_watch::a2a::grpc::{DESCRIPTOR_SET, RawCodec};
use a2a_watch::a2a::sse::{self, DEFAULT_FRAME_LIMIT};
use a2a_watch::a2a::wire::jsonrpc;
use a2a_watch::a2a::{Binding, StreamResponse};
use a2a_watch::event::{Event, Receiver, Sender};
use a2a_watch::store::Store;
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};

use crate::load::task_id;
use crate::util::{
    LoadServer, Section, Verdict, cpu_seconds, median, quick, say, self_context_switches, self_cpu_seconds,
    sys_seconds, table, thousands,
};

pub struct Run {
    /// Bytes per read the reader was handed (the bare reader only).
    pub read_size: Option<f64>,
    pub seconds: f64,
    pub events: u64,
    /// CPU seconds of this process (the client) during the run.
    pub client_cpu: f64,
    /// Of which in the kernel.
    pub client_sys: f64,
    /// Context switches of the client's threads.
    pub switches: u64,
    pub server_cpu: f64,
}

impl Run {
    pub fn rate(&self) -> f64 {
        self.events as f64 / self.seconds
    }
}

fn runtime() -> tokio::runtime::Runtime {
    // What `a2a-watch` itself runs on: the default multi-threaded runtime.
    tokio::runtime::Runtime::new().expect("tokio runtime")
}

/// Runs `work` (the events it counted, and what else it returns) on `rt` to its end, measuring
/// this process (the client) and the load agent meanwhile.
fn measured<T>(server: &LoadServer, rt: tokio::runtime::Runtime, work: impl Future<Output = (u64, T)>) -> (Run, T) {
    let server_cpu = cpu_seconds(server.pid());
    let cpu = self_cpu_seconds();
    let sys = sys_seconds(std::process::id());
    let switches = self_context_switches();
    let start = Instant::now();
    let (events, out) = rt.block_on(work);
    let seconds = start.elapsed().as_secs_f64();
    // Before the runtime goes: its threads' switches go with them.
    let switched = self_context_switches().saturating_sub(switches);
    drop(rt);
    let run = Run {
        read_size: None,
        seconds,
        events,
        client_cpu: self_cpu_seconds() - cpu,
        client_sys: sys_seconds(std::process::id()) - sys,
        switches: switched,
        server_cpu: cpu_seconds(server.pid()) - server_cpu,
    };
    (run, out)
}

/// The real engine and store: from `Engine::start` until every task is terminal in the store.
/// It speaks whichever binding the load agent's card puts first (gRPC with `--grpc`).
pub fn engine(server: &LoadServer, tasks: usize, max_streams: usize) -> (Run, Store) {
    let url = server.url().to_string();
    measured(server, runtime(), async {
        let (tx, mut rx) = a2a_watch::event::channel(1024);
        let mut store = Store::new([(None, url.clone())]);
        let opts = WatchOptions {
            max_streams,
            ..WatchOptions::default()
        };
        let engine = Engine::start(vec![AgentSpec::new(url)], opts, tx);
        // Done when every stream has delivered its last, terminal, status update. (A listing can
        // show a task completed before its stream has been read to the end: the load agent marks
        // it so once it has written the last frame, which may still sit in socket buffers.)
        let mut finished = HashSet::new();
        let mut updates = 0u64;
        while let Some(ev) = rx.recv().await {
            let last = match &ev {
                Event::Update {
                    event: StreamResponse::StatusUpdate(u),
                    ..
                } if u.status.state.is_terminal() => Some(u.task_id.clone()),
                _ => None,
            };
            if matches!(ev, Event::Update { .. }) {
                updates += 1;
            }
            store.apply(ev);
            if let Some(id) = last {
                finished.insert(id);
                if finished.len() == tasks {
                    break;
                }
            }
        }
        drop(rx);
        let _ = tokio::time::timeout(Duration::from_secs(2), engine.shutdown()).await;
        (updates, store)
    })
}

/// How much of the client a bare reader runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Baseline (a): eventsource-stream, frames counted.
    Count,
    /// Our `sse::frames`, frames counted.
    Frames,
    /// `sse::frames` + `jsonrpc::decode_frame`, events dropped.
    Decode,
    /// All that, the events of each read sent as `Event::Update`s in one batch through a 1024-slot
    /// channel to one consumer applying them to a `Store`: the engine's data path without the engine.
    Store,
}

/// Baseline (a) and the layers above it: the same HTTP stack (`a2a::client::http_client`),
/// SubscribeToTask by hand, no engine and no store.
pub fn bare(server: &LoadServer, tasks: usize, layer: Layer) -> Run {
    bare_on(server, tasks, layer, runtime())
}

/// `bare` on the given runtime (a current-thread one puts readers and consumer on one thread).
pub fn bare_on(server: &LoadServer, tasks: usize, layer: Layer, rt: tokio::runtime::Runtime) -> Run {
    let url = server.url().to_string();
    let reads = std::sync::Arc::new((
        std::sync::atomic::AtomicU64::new(0),
        std::sync::atomic::AtomicU64::new(0),
    ));
    let counted = reads.clone();
    let (mut run, ()) = measured(server, rt, async {
        let http = a2a_watch::a2a::client::http_client(Duration::from_secs(10)).expect("http client");
        let mut set = tokio::task::JoinSet::new();
        let (tx, rx) = a2a_watch::event::channel(1024);
        for i in 0..tasks {
            let http = http.clone();
            let url = format!("{url}/");
            let reads = counted.clone();
            let tx = tx.clone();
            set.spawn(async move {
                let resp = subscribe(&http, url, &task_id(0, i)).await;
                let bytes = resp.bytes_stream().inspect(move |chunk| {
                    if let Ok(c) = chunk {
                        reads.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        reads.1.fetch_add(c.len() as u64, std::sync::atomic::Ordering::Relaxed);
                    }
                });
                read_stream(bytes, layer, tx).await
            });
        }
        drop(tx);
        if layer == Layer::Store {
            let applied = apply_all(rx, &url).await;
            while set.join_next().await.is_some() {}
            return (applied, ());
        }
        let mut total = 0;
        while let Some(n) = set.join_next().await {
            total += n.expect("reader");
        }
        (total, ())
    });
    let (n, bytes) = (
        reads.0.load(std::sync::atomic::Ordering::Relaxed),
        reads.1.load(std::sync::atomic::Ordering::Relaxed),
    );
    run.read_size = Some(bytes as f64 / n.max(1) as f64);
    run
}

/// JSON-RPC SubscribeToTask for task `id`, by hand.
pub async fn subscribe(http: &reqwest::Client, url: String, id: &str) -> reqwest::Response {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
        "params": {"id": id}});
    http.post(url)
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("subscribe")
}

/// Reads one stream to its end through `layer`; the frames (or events) it counted.
pub async fn read_stream<S>(bytes: S, layer: Layer, tx: Sender) -> u64
where
    S: futures::Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static,
{
    let mut n = 0u64;
    match layer {
        Layer::Count => {
            let mut events = bytes.eventsource();
            while let Some(ev) = events.next().await {
                ev.expect("frame");
                n += 1;
            }
        }
        Layer::Frames => {
            let mut frames = Box::pin(sse::frames(bytes, DEFAULT_FRAME_LIMIT));
            while let Some(f) = frames.next().await {
                f.expect("frame");
                n += 1;
            }
        }
        Layer::Decode => {
            let mut frames = Box::pin(sse::frames(bytes, DEFAULT_FRAME_LIMIT));
            while let Some(f) = frames.next().await {
                std::hint::black_box(jsonrpc::decode_frame(&f.expect("frame")).expect("decodes"));
                n += 1;
            }
        }
        Layer::Store => {
            // As the watcher does: what one read brought crosses in one send.
            let mut frames = Box::pin(sse::frames(bytes, DEFAULT_FRAME_LIMIT));
            let update = |f: Result<sse::Frame, _>| Event::Update {
                agent: 0,
                event: jsonrpc::decode_frame(&f.expect("frame")).expect("decodes"),
                seen: jiff::Timestamp::now(),
            };
            while let Some(f) = frames.next().await {
                let mut batch = vec![update(f)];
                while batch.len() < 256 {
                    match frames.next().now_or_never() as Option<Option<_>> {
                        Some(Some(f)) => batch.push(update(f)),
                        _ => break,
                    }
                }
                n += batch.len() as u64;
                if tx.send_all(batch).await.is_err() {
                    break;
                }
            }
        }
    }
    n
}

/// The consumer where the binary has it (on the thread that runs `block_on`): every event applied
/// to a `Store`; how many.
async fn apply_all(mut rx: Receiver, url: &str) -> u64 {
    let mut store = Store::new([(None, url.to_string())]);
    let mut applied = 0u64;
    while let Some(ev) = rx.recv().await {
        store.apply(ev);
        applied += 1;
    }
    std::hint::black_box(store.len());
    applied
}

/// Baseline (a) over gRPC: one tonic channel (one HTTP/2 connection; the engine's client spreads
/// its streams over four, `a2a::grpc::Link`), one SubscribeToTask per task, messages counted and
/// dropped without decoding.
pub fn bare_grpc(server: &LoadServer, tasks: usize) -> Run {
    let endpoint = format!("http://{}", server.grpc[0]);
    let pool = DescriptorPool::decode(DESCRIPTOR_SET).expect("proto/a2a.desc is a descriptor set");
    let input = pool
        .get_message_by_name("lf.a2a.v1.SubscribeToTaskRequest")
        .expect("SubscribeToTaskRequest is in proto/a2a.desc");
    let requests: Vec<Bytes> = (0..tasks)
        .map(|i| {
            let request = serde_json::json!({ "id": task_id(0, i) });
            let message = DynamicMessage::deserialize(input.clone(), request).expect("a SubscribeToTaskRequest");
            Bytes::from(message.encode_to_vec())
        })
        .collect();
    measured(server, runtime(), async move {
        let channel = Endpoint::from_shared(endpoint)
            .expect("a gRPC endpoint")
            .connect()
            .await
            .expect("the load agent's gRPC port");
        let mut set = tokio::task::JoinSet::new();
        for request in requests {
            let mut grpc = tonic::client::Grpc::new(channel.clone());
            set.spawn(async move {
                grpc.ready().await.expect("the channel is ready");
                let path = PathAndQuery::from_static("/lf.a2a.v1.A2AService/SubscribeToTask");
                let mut messages = grpc
                    .server_streaming(tonic::Request::new(request), path, RawCodec)
                    .await
                    .expect("subscribe")
                    .into_inner();
                let mut n = 0u64;
                while let Some(message) = messages.message().await.expect("message") {
                    std::hint::black_box(message);
                    n += 1;
                }
                n
            });
        }
        let mut total = 0;
        while let Some(n) = set.join_next().await {
            total += n.expect("reader");
        }
        (total, ())
    })
    .0
}

pub fn python() -> Option<PathBuf> {
    let venv = std::env::var("A2A_PY13_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/.venv-py13"));
    let py = venv.join("bin/python");
    py.is_file().then_some(py)
}

/// `benches/perf/sdk_consume.py` (a2a-sdk 1.3.0's client on one asyncio loop) subscribed to the
/// first `tasks` tasks of `url`, its one JSON line of results going to `stdout`.
pub fn spawn_sdk(url: &str, tasks: usize, stdout: Stdio) -> Option<std::process::Child> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/perf/sdk_consume.py");
    let mut child = Command::new(python()?)
        .arg(script)
        .arg(url)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    for i in 0..tasks {
        writeln!(stdin, "{}", task_id(0, i)).ok()?;
    }
    Some(child)
}

/// Baseline (b): `benches/perf/sdk_consume.py`, a2a-sdk 1.3.0's client on one asyncio loop.
fn sdk(server: &LoadServer, tasks: usize) -> Option<Run> {
    let server_cpu = cpu_seconds(server.pid());
    let child = spawn_sdk(server.url(), tasks, Stdio::piped())?;
    let out = child.wait_with_output().ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    // The script's CPU is its own; ours is not involved.
    Some(Run {
        read_size: None,
        seconds: v["seconds"].as_f64()?,
        events: v["events"].as_u64()?,
        client_cpu: f64::NAN,
        client_sys: f64::NAN,
        switches: 0,
        server_cpu: cpu_seconds(server.pid()) - server_cpu,
    })
}

fn kernel_share(runs: &[Run]) -> String {
    format!(
        "{:.0}%",
        median(
            &mut runs
                .iter()
                .map(|r| r.client_sys / r.client_cpu * 100.0)
                .collect::<Vec<_>>()
        )
    )
}

fn switches_per_k(runs: &[Run]) -> String {
    format!(
        "{:.0}",
        median(
            &mut runs
                .iter()
                .map(|r| r.switches as f64 / r.events as f64 * 1000.0)
                .collect::<Vec<_>>()
        )
    )
}

fn med(runs: &[Run], f: fn(&Run) -> f64) -> f64 {
    median(&mut runs.iter().map(f).collect::<Vec<_>>())
}

/// The median of `f` per event, in microseconds.
fn per_event_us(runs: &[Run], f: fn(&Run) -> f64) -> f64 {
    median(&mut runs.iter().map(|r| f(r) / r.events as f64 * 1e6).collect::<Vec<_>>())
}

/// The lowest and highest rate of the trials.
fn spread(runs: &[Run]) -> String {
    let lo = runs.iter().map(Run::rate).fold(f64::INFINITY, f64::min);
    let hi = runs.iter().map(Run::rate).fold(0.0, f64::max);
    format!("{}–{}", thousands(lo), thousands(hi))
}

fn server(tasks: usize, events: usize) -> LoadServer {
    LoadServer::with(&format!("--tasks {tasks} --events {events}"))
}

/// The same, serving gRPC too and listing it first on its card.
fn grpc_server(tasks: usize, events: usize) -> LoadServer {
    LoadServer::with(&format!("--tasks {tasks} --events {events} --grpc"))
}

/// The engine and store against `s`, checked to have read every task over `binding`.
fn engine_over(s: &LoadServer, tasks: usize, binding: Binding) -> Run {
    let (run, store) = engine(s, tasks, 256);
    assert_eq!(store.len(), tasks);
    let chosen = store.agents[0].info.as_ref().map(|i| i.binding);
    assert_eq!(chosen, Some(binding), "the engine chose the card's first interface");
    run
}

/// The median of the per-trial ratios of the rates of `a` to `b`: robust to drift across the run.
fn paired_ratio(a: &[Run], b: &[Run]) -> f64 {
    median(&mut a.iter().zip(b).map(|(a, b)| a.rate() / b.rate()).collect::<Vec<_>>())
}

/// Every trial's runs, one list a client.
#[derive(Default)]
struct Trials {
    ours: Vec<Run>,
    bares: Vec<Run>,
    framed: Vec<Run>,
    decoded: Vec<Run>,
    stored: Vec<Run>,
    one_thread: Vec<Run>,
    ours_grpc: Vec<Run>,
    bares_grpc: Vec<Run>,
}

/// `trials` interleaved trials of every client but the Python one, a fresh load agent a run.
fn measure(tasks: usize, events: usize, trials: usize) -> Trials {
    let mut r = Trials::default();
    for t in 0..trials {
        let trial = |what: &str| say(format!("ingest: trial {}/{trials}: {what}", t + 1));
        trial("bare reader");
        let s = server(tasks, events);
        r.bares.push(bare(&s, tasks, Layer::Count));
        drop(s);
        trial("bare reader + sse::frames (+ decode)");
        let s = server(tasks, events);
        r.framed.push(bare(&s, tasks, Layer::Frames));
        drop(s);
        let s = server(tasks, events);
        r.decoded.push(bare(&s, tasks, Layer::Decode));
        drop(s);
        let s = server(tasks, events);
        r.stored.push(bare(&s, tasks, Layer::Store));
        drop(s);
        let s = server(tasks, events);
        let single = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        r.one_thread.push(bare_on(&s, tasks, Layer::Store, single));
        drop(s);
        trial("engine + store");
        let s = server(tasks, events);
        r.ours.push(engine_over(&s, tasks, Binding::JsonRpc));
        drop(s);
        trial("over gRPC: bare reader, engine + store");
        let s = grpc_server(tasks, events);
        r.bares_grpc.push(bare_grpc(&s, tasks));
        drop(s);
        let s = grpc_server(tasks, events);
        r.ours_grpc.push(engine_over(&s, tasks, Binding::Grpc));
    }
    r
}

/// The table's rows: our clients and the layers, then the Python SDK's.
fn rows(r: &Trials, py: Option<&Run>, tasks: usize, events: usize, py_events: usize) -> Vec<Vec<String>> {
    let ours_rate = med(&r.ours, Run::rate);
    let size = format!("{tasks} × {}", thousands(events as f64));
    let row = |label: &str, runs: &[Run], with_range: bool| {
        let rate = med(runs, Run::rate);
        vec![
            label.to_string(),
            size.clone(),
            format!("{:.2} s", med(runs, |r| r.seconds)),
            if with_range {
                format!("{} ({})", thousands(rate), spread(runs))
            } else {
                thousands(rate)
            },
            format!("{:.2} µs", per_event_us(runs, |r| r.client_cpu)),
            kernel_share(runs),
            switches_per_k(runs),
            format!("{:.2} µs", per_event_us(runs, |r| r.server_cpu)),
            format!("{:.2}", rate / ours_rate),
        ]
    };
    let mut rows = vec![
        row("a2a-watch engine → store", &r.ours, true),
        row("a2a-watch engine → store over gRPC", &r.ours_grpc, true),
        row(
            "(a) + `sse::frames` + decode + channel → `Store::apply` (no engine)",
            &r.stored,
            true,
        ),
        row(
            "the same on a current-thread runtime (readers and consumer on one thread)",
            &r.one_thread,
            false,
        ),
        row(
            "(a) + our `sse::frames` + `jsonrpc::decode_frame` (no engine, no store)",
            &r.decoded,
            false,
        ),
        row("(a) + our `sse::frames` (size guard), frames counted", &r.framed, false),
        row("(a) bare reqwest + eventsource-stream, frames counted", &r.bares, true),
        row(
            "(a′) bare tonic reader over gRPC, messages counted (not decoded)",
            &r.bares_grpc,
            true,
        ),
    ];
    rows.push(python_row(py, tasks, py_events, ours_rate));
    rows
}

/// The row of (b), the Python SDK client, or why it did not run.
fn python_row(py: Option<&Run>, tasks: usize, py_events: usize, ours_rate: f64) -> Vec<String> {
    match py {
        Some(p) => vec![
            "(b) a2a-sdk 1.3.0 Python client (`client.subscribe`)".to_string(),
            format!("{tasks} × {}", thousands(py_events as f64)),
            format!("{:.2} s", p.seconds),
            thousands(p.rate()),
            "(own process)".into(),
            String::new(),
            String::new(),
            format!("{:.2} µs", p.server_cpu / p.events as f64 * 1e6),
            format!("{:.3}", p.rate() / ours_rate),
        ],
        None => vec![
            "(b) a2a-sdk 1.3.0 Python client".to_string(),
            "not run: no venv (tests/interop/python/setup.sh)".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}

/// Client CPU per event, in microseconds.
fn client_us(runs: &[Run]) -> f64 {
    per_event_us(runs, |r| r.client_cpu)
}

/// The paragraph that reads the gap off the layers' client CPU.
fn where_the_gap_is(r: &Trials) -> String {
    let cpu = client_us;
    let (c_bare, c_framed, c_decoded, c_stored, c_one, c_ours) = (
        cpu(&r.bares),
        cpu(&r.framed),
        cpu(&r.decoded),
        cpu(&r.stored),
        cpu(&r.one_thread),
        cpu(&r.ours),
    );
    format!(
        "\n**Where the gap is.** Client CPU per event, layer by layer: the bare reader with eventsource-stream {c_bare:.2} µs; \
our `sse::frames` in its place {:+.2} µs; `jsonrpc::decode_frame` adds {:.2} µs; sending the events of each read in one \
batch through a 1024-slot channel to one consumer that applies them to a `Store` adds {:.2} µs; the engine's own work on \
top (listing, GetTask, watch modes) {:+.2} µs. With readers and consumer on one thread, the channel-and-store step costs \
{:.2} µs{}.\n",
        c_framed - c_bare,
        c_decoded - c_framed,
        c_stored - c_decoded,
        c_ours - c_stored,
        c_one - c_decoded,
        match crate::decode::apply_seconds() {
            Some(s) => format!(" (`Store::apply` alone: {:.2} µs an event in benchmark 1)", s * 1e6),
            None => String::new(),
        },
    )
}

/// The paragraph on the gRPC rows.
fn over_grpc(r: &Trials) -> String {
    let cpu = client_us;
    let (c_bare, c_ours) = (cpu(&r.bares), cpu(&r.ours));
    let ratio_grpc_bare = paired_ratio(&r.ours_grpc, &r.bares_grpc);
    let ratio_grpc_json = paired_ratio(&r.ours_grpc, &r.ours);
    let server_us = |runs: &[Run]| per_event_us(runs, |r| r.server_cpu);
    format!(
        "\n**Over gRPC.** The same load agent with `--grpc` also serves `lf.a2a.v1.A2AService` (SubscribeToTask, \
GetTask, ListTasks) on a port of its own and lists it first on its card, so the same `Engine::start` chooses gRPC (each \
run checks the store's agent says GRPC): its streams spread over four HTTP/2 connections (`a2a::grpc::Link`), each \
message transcoded protobuf → proto JSON → our types by `a2a::grpc`. (a′), the gRPC analogue of (a): a bare tonic \
client on one channel, one SubscribeToTask per task, messages counted and dropped undecoded. Both interleaved with the \
JSON-RPC rows in each trial. Ours over gRPC / (a′) = **{ratio_grpc_bare:.2}x**; ours over gRPC / ours over JSON-RPC \
= **{ratio_grpc_json:.2}x** (medians of per-trial ratios; no target, issue 14 asks for the row). Client CPU per event: \
{:.2} µs over gRPC against {c_ours:.2} µs over JSON-RPC; the bare readers {:.2} µs (a′) and {c_bare:.2} µs (a). The \
load agent writes its status updates in protobuf field by field, as it writes its JSON-RPC frames by hand, and the \
rest (snapshots, GetTask, ListTasks) as proto JSON put in protobuf with prost-reflect (which would take about 13 µs \
an event); server CPU an event: {:.2} µs under the gRPC engine, {:.2} µs under the JSON-RPC one, on the {cores} cores \
the client shares.\n",
        cpu(&r.ours_grpc),
        cpu(&r.bares_grpc),
        server_us(&r.ours_grpc),
        server_us(&r.ours),
        cores = std::thread::available_parallelism().map_or(1, |n| n.get()),
    )
}

/// The median of the average read handed to the reader.
fn read_size(runs: &[Run]) -> f64 {
    median(&mut runs.iter().filter_map(|r| r.read_size).collect::<Vec<_>>())
}

pub fn run() -> Section {
    let tasks = 100;
    let events = if quick() { 1_000 } else { 10_000 };
    let py_events = if quick() { 200 } else { 1_000 };
    let trials = 3;
    let r = measure(tasks, events, trials);
    say("ingest: Python SDK client");
    let py = {
        let s = server(tasks, py_events);
        sdk(&s, tasks)
    };
    let ours_rate = med(&r.ours, Run::rate);
    // Ratios of trials taken side by side, then their median: robust to drift across the run.
    let ratio_a = paired_ratio(&r.ours, &r.bares);
    let grpc_rate = med(&r.ours_grpc, Run::rate);
    let ratio_grpc_bare = paired_ratio(&r.ours_grpc, &r.bares_grpc);
    let ratio_b = py.as_ref().map(|p| ours_rate / p.rate());
    let ok_a = ratio_a >= 0.6;
    let ok_b = ratio_b.is_none_or(|r| r >= 10.0);
    let verdict = if py.is_none() && ok_a {
        Verdict::Info
    } else {
        Verdict::of(ok_a && ok_b)
    };
    let body = format!(
        "The load agent, `serve-load --tasks {tasks} --events N`, as a separate process (a fresh one per run, so every \
task starts from its first event), streams as fast as the client reads. *Ours*: `Engine::start` with one \
`AgentSpec` (card discovery, ListTasks, one SubscribeToTask watcher per task, GetTask after each stream ends) sending \
into a 1024-slot channel, and a consumer applying every event to a `Store`; timed from `Engine::start` until every \
task is terminal in the store. (a): the same `reqwest::Client` (`a2a::client::http_client`), one JSON-RPC \
SubscribeToTask per task, `bytes_stream().eventsource()`, frames counted and dropped, timed until every stream ends. \
Both on tokio's default multi-threaded runtime (what the binary runs). (b): `benches/perf/sdk_consume.py`, \
`create_client` + `client.subscribe` on one shared `httpx.AsyncClient`, all streams under one `asyncio.gather`; it runs \
{py} events a stream rather than {ev} (at its speed the full run would take minutes), so it is compared by rate. \
{trials} interleaved trials of ours and (a), medians; the (a) ratio is the median of per-trial ratios. The load \
agent shares the machine's {cores} cores with the client: the CPU columns split the cost.\n\n{t}\n\
Ours / (a) = **{ratio_a:.2}x** (target ≥ 0.6x, issue 11; issue 6 asked 0.7x). Ours / (b) = **{rb}** (target ≥ 10x). The middle rows add our \
layers to (a) one at a time, on the same network path, so the gap can be read off the client-CPU column. Average read \
handed to the reader: (a) {read:.0} bytes, with `sse::frames` {read_f:.0}, with decode {read_d:.0}, with the \
channel and store {read_s:.0} (a slower reader gets bigger reads).\n{why}{grpc}",
        t = table(
            &[
                "client",
                "streams × events",
                "time",
                "events/s (trials' range)",
                "client CPU / event",
                "of it in the kernel",
                "context switches / 1k events",
                "server CPU / event",
                "rate vs ours"
            ],
            &rows(&r, py.as_ref(), tasks, events, py_events)
        ),
        py = thousands(py_events as f64),
        ev = thousands(events as f64),
        cores = std::thread::available_parallelism().map_or(1, |n| n.get()),
        read = read_size(&r.bares),
        read_f = read_size(&r.framed),
        read_d = read_size(&r.decoded),
        read_s = read_size(&r.stored),
        rb = ratio_b.map_or("not measured".to_string(), |r| format!("{r:.1}x")),
        why = where_the_gap_is(&r),
        grpc = over_grpc(&r),
    );
    Section {
        number: 2,
        title: "Ingest over loopback",
        target: "≥ 0.6x of (a) bare reader; ≥ 10x of (b) Python SDK".into(),
        result: format!(
            "{} events/s; {ratio_a:.2}x of (a); {}; over gRPC {} events/s, {ratio_grpc_bare:.2}x of (a′)",
            thousands(ours_rate),
            ratio_b.map_or("(b) not measured".into(), |r| format!("{r:.1}x of (b)")),
            thousands(grpc_rate),
        ),
        verdict,
        body,
    }
}
