//! A load agent for the benchmarks (the perf bench's `serve-load`): N tasks per agent on
//! loopback, A2A 1.0 over JSON-RPC, frames shaped like a2a-python 1.3's. Each SubscribeToTask
//! stream sends the task snapshot, then the task's remaining status updates (and artifact chunks)
//! as fast as the client reads, or at a set rate per stream; the last update completes the task
//! unless `hold` keeps it working with the stream open. ListTasks pages over every task
//! (pageSize, pageToken, statusTimestampAfter, includeArtifacts), GetTask answers the current
//! state, and `GET /_load/stats` counts what was served so a harness can tell when a run is done.
//!
//! Frames are written by hand rather than through serde, so the server costs the client under
//! test as little CPU as possible on a shared machine.
//!
//! A module of the perf bench, kept out of the product binary; its tests run as their own test
//! target (`load_agent` in Cargo.toml), since a `harness = false` bench runs none.

// The same file whether this is a module of the perf bench or the root of `load_agent`.
#[path = "load/grpc.rs"]
mod grpc;

use std::convert::Infallible;
use std::fmt::Write as _;
use std::io;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt as _;
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use a2a_watch::a2a::card::{AgentCapabilities, AgentCard, AgentInterface};
use a2a_watch::a2a::{Binding, parse_timestamp};

/// What the load agents serve.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// Agents, each on its own port (consecutive from `port`, or ephemeral when `port` is 0).
    pub agents: usize,
    /// Tasks per agent.
    pub tasks: usize,
    /// Status updates per task, the last one COMPLETED unless `hold`.
    pub events: usize,
    /// Events per second on each stream; `None` = as fast as the client reads.
    pub rate: Option<f64>,
    /// With `rate`: each stream's first event comes at its own point of the period (spread
    /// evenly over the fleet's streams) instead of at once, so a sparse fleet's events arrive
    /// one at a time, as a real fleet's do (issue 23), not all together.
    pub spread: bool,
    /// Total text of each task's artifact (0 = no artifact).
    pub artifact_bytes: usize,
    /// Chunks the artifact is streamed in (append), spread between the status updates.
    pub artifact_chunks: usize,
    /// Keep every task WORKING and its stream open after its events.
    pub hold: bool,
    pub port: u16,
    /// Interval of `: keep-alive` comments on streams with nothing to send (sse-starlette's 15 s).
    pub keep_alive: Duration,
    /// Messages in each task's history (a user request, then agent replies), served where the
    /// request's historyLength allows (spec section 3.2.4: 0 = none).
    pub history: usize,
    /// ListTasks shows no task until `GET /_load/reveal`, so a harness can measure the same
    /// client process idle and then with every task.
    pub hidden: bool,
    /// Serve gRPC too, on a port of its own, listed first on the card so clients choose it.
    pub grpc: bool,
}

impl Default for LoadConfig {
    fn default() -> LoadConfig {
        LoadConfig {
            agents: 1,
            tasks: 100,
            events: 100,
            rate: None,
            spread: false,
            artifact_bytes: 0,
            artifact_chunks: 0,
            hold: false,
            port: 0,
            keep_alive: Duration::from_secs(15),
            history: 0,
            hidden: false,
            grpc: false,
        }
    }
}

/// The context every task of agent `agent` belongs to.
pub fn context_id(agent: usize) -> String {
    format!("c0a7e4f2-{agent:04x}-4000-8000-000000000000")
}

/// The id of task `index` on agent `agent`: UUID-shaped, like the SDKs', and told apart by its
/// first 8 digits, as the dashboard's short ids are.
pub fn task_id(agent: usize, index: usize) -> String {
    format!("{index:08x}-7a5c-4000-8000-{agent:012x}")
}

fn message_id(agent: usize, index: usize, step: usize) -> String {
    format!("{:08x}-{agent:04x}-4000-9000-{index:012x}", step as u32)
}

/// Where a task is: how many of its status updates and artifact chunks have gone out.
#[derive(Debug, Clone, Copy)]
struct Progress {
    statuses: usize,
    chunks: usize,
    /// The timestamp of the current status.
    at: Timestamp,
}

struct Slot {
    id: String,
    progress: Mutex<Progress>,
}

#[derive(Default)]
struct Counters {
    open_streams: AtomicUsize,
    peak_streams: AtomicUsize,
    subscribes: AtomicUsize,
    events: AtomicUsize,
    completed: AtomicUsize,
    list_calls: AtomicUsize,
    get_calls: AtomicUsize,
}

struct LoadAgent {
    index: usize,
    config: LoadConfig,
    context: String,
    card: Value,
    slots: Vec<Slot>,
    /// One chunk's text (every chunk has the same).
    chunk_text: String,
    stats: Counters,
    hidden: AtomicBool,
    /// Bumped whenever a task's status time moves, so ListTasks can keep its order between pages.
    generation: AtomicU64,
    /// The listing order (newest status first, then id) as of `generation`: sorting every task
    /// again for each page of 100 would cost the shared machine more than the client under test.
    order: Mutex<(u64, Arc<Order>)>,
}

/// Tasks as (status time in nanoseconds, index), in listing order.
type Order = Vec<(i128, usize)>;

/// One step of a task's script.
enum Step {
    Status(usize),
    Chunk(usize),
}

impl LoadAgent {
    fn terminal(&self, p: &Progress) -> bool {
        !self.config.hold && p.statuses >= self.config.events && p.chunks >= self.config.artifact_chunks
    }

    /// The next step after `p`, or `None` when the script is over. The last status update comes
    /// last; chunks go out after the status updates their share of the script follows.
    fn next_step(&self, p: &Progress) -> Option<Step> {
        let (events, chunks) = (self.config.events, self.config.artifact_chunks);
        if p.chunks < chunks && (p.statuses >= (p.chunks + 1) * events / (chunks + 1) || events == 0) {
            return Some(Step::Chunk(p.chunks));
        }
        if p.statuses < events {
            return Some(Step::Status(p.statuses));
        }
        None
    }

    fn state_of(&self, p: &Progress) -> &'static str {
        if self.terminal(p) {
            "TASK_STATE_COMPLETED"
        } else {
            "TASK_STATE_WORKING"
        }
    }

    fn status_text(&self, p: &Progress) -> String {
        match p.statuses {
            0 => "queued".to_string(),
            n if self.terminal(p) => format!("done after {n} steps"),
            n => format!("step {n} of {}", self.config.events),
        }
    }

    /// The task as JSON text: status with its message, the artifact so far when asked, and the
    /// last `history` messages of its history.
    fn task_json(&self, index: usize, p: &Progress, artifacts: bool, history: Option<usize>, out: &mut String) {
        let id = &self.slots[index].id;
        let _ = write!(out, r#"{{"id":"{id}","contextId":"{}","status":"#, self.context);
        self.status_json(index, p, out);
        let messages = self.config.history;
        let shown = history.unwrap_or(messages).min(messages);
        if shown > 0 {
            out.push_str(r#","history":["#);
            for n in messages - shown..messages {
                if n > messages - shown {
                    out.push(',');
                }
                let (role, text) = match n {
                    0 => ("ROLE_USER", "please look into this"),
                    _ => ("ROLE_AGENT", "working on it, one moment"),
                };
                let _ = write!(
                    out,
                    r#"{{"messageId":"{}","contextId":"{}","taskId":"{id}","role":"{role}","parts":[{{"text":"{text}"}}]}}"#,
                    message_id(self.index, index, 0x8000_0000 + n),
                    self.context,
                );
            }
            out.push(']');
        }
        if artifacts && p.chunks > 0 {
            out.push_str(r#","artifacts":[{"artifactId":"result","name":"result.txt","parts":[{"text":""#);
            for _ in 0..p.chunks {
                out.push_str(&self.chunk_text);
            }
            out.push_str(r#""}]}]"#);
        }
        out.push('}');
    }

    fn status_json(&self, index: usize, p: &Progress, out: &mut String) {
        let _ = write!(
            out,
            r#"{{"state":"{}","message":{{"messageId":"{}","contextId":"{}","taskId":"{}","role":"ROLE_AGENT","parts":[{{"text":"{}"}}]}},"timestamp":"{}"}}"#,
            self.state_of(p),
            message_id(self.index, index, p.statuses),
            self.context,
            self.slots[index].id,
            self.status_text(p),
            p.at,
        );
    }

    /// Advances the task by one step: the step, and where the task is after it; `None` when the
    /// script is over.
    fn advance(&self, index: usize, at: Timestamp) -> Option<(Step, Progress)> {
        let mut p = self.slots[index].progress.lock().unwrap_or_else(|e| e.into_inner());
        let step = self.next_step(&p)?;
        match step {
            Step::Status(n) => {
                p.statuses = n + 1;
                p.at = at;
                self.generation.fetch_add(1, Ordering::Relaxed);
            }
            Step::Chunk(n) => p.chunks = n + 1,
        }
        if self.terminal(&p) {
            self.stats.completed.fetch_add(1, Ordering::Relaxed);
        }
        self.stats.events.fetch_add(1, Ordering::Relaxed);
        Some((step, *p))
    }

    /// Advances the task by one step and writes its SSE frame, the JSON-RPC response to request
    /// `rpc_id` (JSON text); false when there is nothing left.
    fn step(&self, index: usize, rpc_id: &str, at: Timestamp, out: &mut String) -> bool {
        let Some((step, p)) = self.advance(index, at) else {
            return false;
        };
        open_frame(Some(rpc_id), out);
        self.event_json(index, &step, &p, out);
        close_frame(Some(rpc_id), out);
        true
    }

    /// A step's StreamResponse as proto JSON, `p` being where the task is after it.
    fn event_json(&self, index: usize, step: &Step, p: &Progress, out: &mut String) {
        let task_id = &self.slots[index].id;
        match *step {
            Step::Status(_) => {
                let _ = write!(
                    out,
                    r#"{{"statusUpdate":{{"taskId":"{task_id}","contextId":"{}","status":"#,
                    self.context
                );
                self.status_json(index, p, out);
                out.push_str("}}");
            }
            Step::Chunk(n) => {
                let last = p.chunks == self.config.artifact_chunks;
                let _ = write!(
                    out,
                    r#"{{"artifactUpdate":{{"taskId":"{task_id}","contextId":"{}","artifact":{{"artifactId":"result","name":"result.txt","parts":[{{"text":"{}"}}]}},"append":{},"lastChunk":{last}}}}}"#,
                    self.context,
                    self.chunk_text,
                    n > 0,
                );
            }
        }
    }

    /// How long after its subscription task `index`'s stream sends its first event: at once, or
    /// with `spread` its own fraction of `period`. The golden ratio's multiples spread any number
    /// of streams evenly and keep neighbours apart, whichever agent they are on.
    fn phase(&self, index: usize, period: Duration) -> Duration {
        if !self.config.spread {
            return Duration::ZERO;
        }
        const GOLDEN: f64 = 0.618_033_988_749_895;
        let stream = (self.index * self.config.tasks + index) as f64;
        period.mul_f64((stream * GOLDEN).fract())
    }

    fn find(&self, id: &str) -> Option<usize> {
        // Ids are ours, so the index is in them; anything else is not found.
        let index = usize::from_str_radix(id.split('-').next()?, 16).ok()?;
        (self.slots.get(index)?.id == id).then_some(index)
    }
}

/// What goes before a StreamResponse's proto JSON: on JSON-RPC, the SSE frame and the response
/// to request `rpc_id`; on gRPC, nothing.
fn open_frame(rpc_id: Option<&str>, out: &mut String) {
    if let Some(id) = rpc_id {
        let _ = write!(out, r#"data: {{"id":{id},"jsonrpc":"2.0","result":"#);
    }
}

fn close_frame(rpc_id: Option<&str>, out: &mut String) {
    if rpc_id.is_some() {
        out.push_str("}\n\n");
    }
}

/// Frames written (or bytes buffered) before a stream yields, when not rate-limited.
const BATCH_BYTES: usize = 16 * 1024;

/// Counts a stream as open for as long as the server holds it.
struct Open(Arc<LoadAgent>);

impl Open {
    fn new(agent: Arc<LoadAgent>) -> Open {
        let now = agent.stats.open_streams.fetch_add(1, Ordering::Relaxed) + 1;
        agent.stats.peak_streams.fetch_max(now, Ordering::Relaxed);
        agent.stats.subscribes.fetch_add(1, Ordering::Relaxed);
        Open(agent)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.stats.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a subscription's events go on the wire.
enum Wire {
    /// SSE frames of JSON-RPC responses to the request with this id (JSON text), as many to a
    /// write as fill `BATCH_BYTES`.
    Sse(String),
    /// One protobuf StreamResponse per item: gRPC frames each message, and tonic gathers the
    /// messages that are ready into one write.
    Grpc,
}

impl Wire {
    fn rpc_id(&self) -> Option<&str> {
        match self {
            Wire::Sse(id) => Some(id),
            Wire::Grpc => None,
        }
    }

    /// What was written (the snapshot), as one item of the stream.
    fn finish(&self, out: String) -> Bytes {
        match self {
            Wire::Sse(_) => Bytes::from(out),
            Wire::Grpc => grpc::stream_response(&out),
        }
    }
}

struct StreamState {
    open: Open,
    index: usize,
    wire: Wire,
    snapshot_sent: bool,
    ticker: Option<tokio::time::Interval>,
    done: bool,
}

/// A subscription's events from the task's snapshot on: the script at the configured rate, then
/// the end of the stream at the terminal update, or (held) keep-alives on SSE and silence on gRPC.
fn events(agent: Arc<LoadAgent>, index: usize, wire: Wire) -> impl futures::Stream<Item = Bytes> + Send {
    let ticker = agent.config.rate.filter(|r| *r > 0.0).map(|rate| {
        let period = Duration::from_secs_f64(1.0 / rate);
        let first = tokio::time::Instant::now() + agent.phase(index, period);
        let mut t = tokio::time::interval_at(first, period);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        t
    });
    let state = StreamState {
        open: Open::new(agent),
        index,
        wire,
        snapshot_sent: false,
        ticker,
        done: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        let agent = st.open.0.clone();
        let mut out = String::new();
        let rpc_id = st.wire.rpc_id();
        if !st.snapshot_sent {
            st.snapshot_sent = true;
            let p = *agent.slots[st.index].progress.lock().unwrap_or_else(|e| e.into_inner());
            open_frame(rpc_id, &mut out);
            out.push_str(r#"{"task":"#);
            agent.task_json(st.index, &p, true, None, &mut out);
            out.push('}');
            close_frame(rpc_id, &mut out);
            let item = st.wire.finish(out);
            return Some((item, st));
        }
        if !st.done {
            let due = match &mut st.ticker {
                Some(ticker) => {
                    // The event is stamped with the time it was due, so a server held back by a
                    // slow reader shows as latency rather than hiding it.
                    let due = ticker.tick().await;
                    let late = tokio::time::Instant::now().saturating_duration_since(due);
                    Some(
                        Timestamp::now()
                            .checked_sub(jiff::SignedDuration::try_from(late).unwrap_or_default())
                            .unwrap_or_else(|_| Timestamp::now()),
                    )
                }
                None => None,
            };
            let item = match &st.wire {
                // One frame a tick, or as fast as the client reads, frames filling a write.
                Wire::Sse(rpc_id) => loop {
                    if !agent.step(st.index, rpc_id, due.unwrap_or_else(Timestamp::now), &mut out) {
                        st.done = true;
                        break (!out.is_empty()).then(|| Bytes::from(out));
                    }
                    if due.is_some() || out.len() >= BATCH_BYTES {
                        break Some(Bytes::from(out));
                    }
                },
                Wire::Grpc => match agent.advance(st.index, due.unwrap_or_else(Timestamp::now)) {
                    Some((step, p)) => Some(grpc::event(&agent, st.index, &step, &p)),
                    None => {
                        st.done = true;
                        None
                    }
                },
            };
            if let Some(item) = item {
                return Some((item, st));
            }
        }
        let p = *agent.slots[st.index].progress.lock().unwrap_or_else(|e| e.into_inner());
        if agent.terminal(&p) {
            return None;
        }
        // Held open: nothing more to say but that we are here (gRPC has no comment to send).
        if let Wire::Grpc = st.wire {
            return std::future::pending().await;
        }
        tokio::time::sleep(agent.config.keep_alive).await;
        Some((Bytes::from_static(b": keep-alive\n\n"), st))
    })
}

fn subscription(agent: Arc<LoadAgent>, index: usize, rpc_id: String) -> Response {
    let body = events(agent, index, Wire::Sse(rpc_id)).map(Ok::<_, Infallible>);
    Response::builder()
        .header(CONTENT_TYPE, "text/event-stream")
        .header(CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})).into_response()
}

fn rpc_result(id: &Value, result: &str) -> Response {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    ([(CONTENT_TYPE, "application/json")], body).into_response()
}

async fn handle(State(agent): State<Arc<LoadAgent>>, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(&Value::Null, -32700, "parse error");
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    match request.get("method").and_then(Value::as_str).unwrap_or("") {
        "SubscribeToTask" => match subscribable(&agent, &params) {
            Ok(index) => subscription(agent.clone(), index, id.to_string()),
            Err(Refusal::NotFound) => rpc_error(&id, -32001, NOT_FOUND),
            Err(Refusal::Terminal) => rpc_error(&id, -32004, TERMINAL),
        },
        "GetTask" => match get_task(&agent, &params) {
            Some(task) => rpc_result(&id, &task),
            None => rpc_error(&id, -32001, NOT_FOUND),
        },
        "ListTasks" => match list(&agent, &params) {
            Ok(result) => rpc_result(&id, &result),
            Err(message) => rpc_error(&id, -32602, &message),
        },
        other => rpc_error(&id, -32601, &format!("Method not found: {other}")),
    }
}

const NOT_FOUND: &str = "Task not found";
const TERMINAL: &str = "Task is in a terminal state and cannot be subscribed to";

/// Why SubscribeToTask is refused: no such task, or a terminal one (spec section 3.1.6).
enum Refusal {
    NotFound,
    Terminal,
}

/// SubscribeToTask's task, if it may be subscribed to.
fn subscribable(agent: &LoadAgent, params: &Value) -> Result<usize, Refusal> {
    let index = params
        .get("id")
        .and_then(Value::as_str)
        .and_then(|t| agent.find(t))
        .ok_or(Refusal::NotFound)?;
    let p = *agent.slots[index].progress.lock().unwrap_or_else(|e| e.into_inner());
    if agent.terminal(&p) {
        return Err(Refusal::Terminal);
    }
    Ok(index)
}

/// GetTask: the task as proto JSON, or `None` if it is not ours.
fn get_task(agent: &LoadAgent, params: &Value) -> Option<String> {
    agent.stats.get_calls.fetch_add(1, Ordering::Relaxed);
    let index = agent.find(params.get("id").and_then(Value::as_str)?)?;
    let p = *agent.slots[index].progress.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = String::new();
    agent.task_json(index, &p, true, history_length(params), &mut out);
    Some(out)
}

/// A request's historyLength (spec section 3.2.4): `None` when unset (the server's default, all).
fn history_length(params: &Value) -> Option<usize> {
    params
        .get("historyLength")
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

impl LoadAgent {
    /// Every task as (status time in nanoseconds, index), newest first, then by id descending:
    /// sorted again only when a status time moved since the last listing.
    fn listing_order(&self) -> Arc<Order> {
        let generation = self.generation.load(Ordering::Relaxed);
        let mut cached = self.order.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0 != generation || cached.1.len() != self.slots.len() {
            let mut rows: Order = self
                .slots
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        s.progress.lock().unwrap_or_else(|e| e.into_inner()).at.as_nanosecond(),
                        i,
                    )
                })
                .collect();
            let slots = &self.slots;
            rows.sort_by(|a, b| (b.0, slots[b.1].id.as_str()).cmp(&(a.0, slots[a.1].id.as_str())));
            *cached = (generation, Arc::new(rows));
        }
        cached.1.clone()
    }
}

/// ListTasks: newest status first, then id; the cursor is `<nanos>.<id>` of the last task served.
fn list(agent: &LoadAgent, params: &Value) -> Result<String, String> {
    agent.stats.list_calls.fetch_add(1, Ordering::Relaxed);
    let page_size = params.get("pageSize").and_then(Value::as_u64).unwrap_or(50);
    if !(1..=100).contains(&page_size) {
        return Err(format!("pageSize must be between 1 and 100, not {page_size}"));
    }
    let after = params
        .get("statusTimestampAfter")
        .and_then(Value::as_str)
        .and_then(parse_timestamp);
    let artifacts = params.get("includeArtifacts").and_then(Value::as_bool).unwrap_or(false);
    let history = history_length(params);
    let context_ok = params
        .get("contextId")
        .and_then(Value::as_str)
        .is_none_or(|c| c == agent.context);
    let order = agent.listing_order();
    let shown = !agent.hidden.load(Ordering::Relaxed) && context_ok;
    // Newest first, so the tasks at or after `after` are a prefix.
    let rows: &[(i128, usize)] = match (shown, after) {
        (false, _) => &[],
        (true, None) => &order,
        (true, Some(a)) => &order[..order.partition_point(|r| r.0 >= a.as_nanosecond())],
    };
    let slots = &agent.slots;
    let start = match params
        .get("pageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        Some(token) => {
            let (nanos, id) = token
                .split_once('.')
                .and_then(|(n, id)| Some((n.parse::<i128>().ok()?, id)))
                .ok_or_else(|| format!("pageToken {token:?} is not one we issued"))?;
            rows.partition_point(|r| (r.0, slots[r.1].id.as_str()) >= (nanos, id))
        }
        None => 0,
    };
    let rest = &rows[start..];
    let served = &rest[..rest.len().min(page_size as usize)];
    let next = match served.last() {
        Some(last) if served.len() < rest.len() => format!("{}.{}", last.0, slots[last.1].id),
        _ => String::new(),
    };
    let mut out = String::from(r#"{"tasks":["#);
    for (n, (_, index)) in served.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let p = *slots[*index].progress.lock().unwrap_or_else(|e| e.into_inner());
        agent.task_json(*index, &p, artifacts, history, &mut out);
    }
    let _ = write!(
        out,
        r#"],"nextPageToken":"{next}","pageSize":{page_size},"totalSize":{}}}"#,
        rows.len()
    );
    Ok(out)
}

/// `GET /_load/reveal`: the tasks of a `hidden` agent appear in its listings from now on.
async fn reveal(State(agent): State<Arc<LoadAgent>>) -> Json<Value> {
    agent.hidden.store(false, Ordering::Relaxed);
    Json(json!({ "tasks": agent.slots.len() }))
}

async fn stats(State(agent): State<Arc<LoadAgent>>) -> Json<Value> {
    let s = &agent.stats;
    let get = |c: &AtomicUsize| c.load(Ordering::Relaxed);
    Json(json!({
        "tasks": agent.slots.len(),
        "open_streams": get(&s.open_streams),
        "peak_streams": get(&s.peak_streams),
        "subscribes": get(&s.subscribes),
        "events": get(&s.events),
        "completed": get(&s.completed),
        "list_calls": get(&s.list_calls),
        "get_calls": get(&s.get_calls),
    }))
}

/// The card: JSON-RPC at `url`, and first, when served, gRPC at `grpc` (`host:port`).
fn card(url: &str, grpc: Option<&str>, name: &str) -> Value {
    let interface = |url: String, binding: Binding| AgentInterface {
        url,
        protocol_binding: binding.wire_name().into(),
        protocol_version: "1.0".into(),
        tenant: None,
    };
    let card = AgentCard {
        name: name.into(),
        description: "Benchmark load agent: many tasks, many events".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        supported_interfaces: grpc
            .map(|g| interface(g.to_string(), Binding::Grpc))
            .into_iter()
            .chain([interface(format!("{url}/"), Binding::JsonRpc)])
            .collect(),
        capabilities: AgentCapabilities {
            streaming: true,
            ..AgentCapabilities::default()
        },
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        ..AgentCard::default()
    };
    serde_json::to_value(&card).unwrap_or(Value::Null)
}

/// Filler for artifact chunks: plain ASCII that needs no escaping.
fn chunk_text(len: usize) -> String {
    const WORDS: &str = "the quick brown fox jumps over the lazy dog ";
    WORDS.chars().cycle().take(len).collect()
}

/// The running load agents.
pub struct LoadAgents {
    pub urls: Vec<String>,
    /// The gRPC interfaces (`host:port`), when `grpc`.
    pub grpc: Vec<String>,
    servers: Vec<JoinHandle<io::Result<()>>>,
}

impl LoadAgents {
    pub fn stop(self) {
        for s in self.servers {
            s.abort();
        }
    }
}

fn build(index: usize, url: &str, grpc: Option<&str>, config: &LoadConfig, start: Timestamp) -> LoadAgent {
    let name = if config.agents > 1 {
        format!("load-{index}")
    } else {
        "load".to_string()
    };
    // Distinct, ordered timestamps: task 0 is the oldest.
    let slots = (0..config.tasks)
        .map(|i| Slot {
            id: task_id(index, i),
            progress: Mutex::new(Progress {
                statuses: 0,
                chunks: 0,
                at: start
                    .checked_add(jiff::SignedDuration::from_micros(i as i64))
                    .unwrap_or(start),
            }),
        })
        .collect();
    let chunk = match config.artifact_chunks {
        0 => 0,
        n => config.artifact_bytes.div_ceil(n),
    };
    let agent = LoadAgent {
        index,
        context: context_id(index),
        card: card(url, grpc, &name),
        slots,
        chunk_text: chunk_text(chunk),
        stats: Counters::default(),
        hidden: AtomicBool::new(config.hidden),
        generation: AtomicU64::new(0),
        order: Mutex::new((u64::MAX, Arc::new(Vec::new()))),
        config: config.clone(),
    };
    if config.events == 0 && config.artifact_chunks == 0 && !config.hold {
        agent.stats.completed.store(agent.slots.len(), Ordering::Relaxed);
    }
    agent
}

/// The SSE bodies the subscriptions to agent 0's tasks send when each is read from the start to
/// its end (snapshot, then every step), with JSON-RPC id 1: input for benchmarks that decode
/// without a network.
pub fn scripts(config: &LoadConfig) -> Vec<String> {
    let agent = build(0, "http://127.0.0.1:1", None, config, Timestamp::now());
    (0..config.tasks)
        .map(|index| {
            let mut out = String::new();
            let p = *agent.slots[index].progress.lock().unwrap_or_else(|e| e.into_inner());
            out.push_str(r#"data: {"id":1,"jsonrpc":"2.0","result":{"task":"#);
            agent.task_json(index, &p, true, None, &mut out);
            out.push_str("}}\n\n");
            while agent.step(index, "1", Timestamp::now(), &mut out) {}
            out
        })
        .collect()
}

/// Starts the agents on 127.0.0.1 and returns once all of them listen.
pub async fn start(config: LoadConfig) -> io::Result<LoadAgents> {
    let mut urls = Vec::new();
    let mut grpc_urls = Vec::new();
    let mut servers = Vec::new();
    let start = Timestamp::now();
    for index in 0..config.agents.max(1) {
        let port = match config.port {
            0 => 0,
            p => p
                .checked_add(u16::try_from(index).unwrap_or(u16::MAX))
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "port too high"))?,
        };
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let url = format!("http://127.0.0.1:{}", listener.local_addr()?.port());
        let grpc_listener = if config.grpc {
            Some(TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?)
        } else {
            None
        };
        let grpc_url = match &grpc_listener {
            Some(l) => Some(format!("127.0.0.1:{}", l.local_addr()?.port())),
            None => None,
        };
        let agent = Arc::new(build(index, &url, grpc_url.as_deref(), &config, start));
        if let (Some(listener), Some(grpc_url)) = (grpc_listener, grpc_url) {
            let face = grpc::Face(agent.clone());
            // TCP_NODELAY, as tonic's own `serve` sets by default.
            let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
            servers.push(tokio::spawn(async move {
                tonic::transport::Server::builder()
                    .serve_with_incoming(face, incoming)
                    .await
                    .map_err(io::Error::other)
            }));
            grpc_urls.push(grpc_url);
        }
        let card_doc = agent.card.clone();
        let app = Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(move || {
                    let card = card_doc.clone();
                    async move { Json(card) }
                }),
            )
            .route("/", post(handle))
            .route("/_load/stats", get(stats))
            .route("/_load/reveal", get(reveal))
            .with_state(agent);
        urls.push(url);
        servers.push(tokio::spawn(async move { axum::serve(listener, app).await }));
    }
    Ok(LoadAgents {
        urls,
        grpc: grpc_urls,
        servers,
    })
}

// The perf bench compiles this module with cfg(test) but no harness, which drops the tests and
// leaves their imports and helpers unused there; the `load_agent` target runs them.
#[cfg(test)]
#[allow(unused)]
mod tests {
    use super::*;
    use a2a_watch::a2a::{StreamResponse, TaskState};
    use futures::StreamExt;

    fn agent(config: LoadConfig) -> LoadAgent {
        build(0, "http://127.0.0.1:1", None, &config, Timestamp::now())
    }

    #[test]
    fn a_script_decodes_with_the_client_and_ends_completed() {
        let a = agent(LoadConfig {
            tasks: 2,
            events: 5,
            artifact_bytes: 30,
            artifact_chunks: 3,
            ..LoadConfig::default()
        });
        let mut out = String::new();
        while a.step(1, "7", Timestamp::now(), &mut out) {}
        let bytes = vec![Ok::<_, io::Error>(Bytes::from(out))];
        let frames: Vec<_> =
            futures::executor::block_on(a2a_watch::a2a::sse::frames(futures::stream::iter(bytes), 1 << 20).collect());
        let events: Vec<StreamResponse> = frames
            .into_iter()
            .map(|f| a2a_watch::a2a::wire::jsonrpc::decode_frame(&f.unwrap()).unwrap())
            .collect();
        assert_eq!(events.len(), 8);
        assert_eq!(events.iter().filter(|e| e.kind() == "artifact").count(), 3);
        let StreamResponse::StatusUpdate(last) = events.last().unwrap() else {
            panic!("ends with a status update")
        };
        assert_eq!(last.status.state, TaskState::Completed);
        assert_eq!(last.task_id, task_id(0, 1));
        let mut task = String::new();
        let p = *a.slots[1].progress.lock().unwrap();
        a.task_json(1, &p, true, None, &mut task);
        let task: a2a_watch::a2a::Task = serde_json::from_str(&task).unwrap();
        assert_eq!(task.artifacts[0].text().len(), 30);
        assert_eq!(a.find(&task_id(0, 1)), Some(1));
        assert_eq!(a.find("nope"), None);
        let scripts = scripts(&LoadConfig {
            tasks: 2,
            events: 5,
            ..LoadConfig::default()
        });
        assert_eq!(scripts[1].matches("data: ").count(), 6);
    }

    #[test]
    fn listing_pages_newest_first_and_filters_by_time() {
        let a = agent(LoadConfig {
            tasks: 5,
            ..LoadConfig::default()
        });
        for (i, s) in a.slots.iter().enumerate() {
            s.progress.lock().unwrap().at = Timestamp::from_second(1_800_000_000 + i as i64).unwrap();
        }
        let page: a2a_watch::a2a::ListTasksResponse =
            serde_json::from_str(&list(&a, &json!({"pageSize": 2})).unwrap()).unwrap();
        assert_eq!(page.tasks[0].id, task_id(0, 4));
        assert_eq!(page.total_size, 5);
        let next: a2a_watch::a2a::ListTasksResponse =
            serde_json::from_str(&list(&a, &json!({"pageSize": 2, "pageToken": page.next_page_token})).unwrap())
                .unwrap();
        assert_eq!(next.tasks[0].id, task_id(0, 2));
        let after: a2a_watch::a2a::ListTasksResponse =
            serde_json::from_str(&list(&a, &json!({"statusTimestampAfter": "2027-01-15T08:00:03Z"})).unwrap()).unwrap();
        assert!(after.tasks.len() < 5);
    }

    #[test]
    fn spread_streams_start_apart_across_agents_and_unspread_ones_at_once() {
        let config = LoadConfig {
            agents: 3,
            tasks: 40,
            rate: Some(0.2),
            spread: true,
            ..LoadConfig::default()
        };
        let period = Duration::from_secs(5);
        let mut phases: Vec<Duration> = (0..config.agents)
            .flat_map(|i| {
                let a = build(i, "http://127.0.0.1:1", None, &config, Timestamp::now());
                (0..config.tasks).map(move |t| a.phase(t, period))
            })
            .collect();
        phases.sort();
        let n = phases.len();
        assert!(phases.iter().all(|p| *p < period));
        phases.dedup();
        assert_eq!(phases.len(), n, "no two streams of the fleet start together");
        let widest = phases.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        assert!(
            widest <= period.mul_f64(3.0 / n as f64),
            "evenly spread: widest gap {widest:?}"
        );
        let at_once = agent(LoadConfig {
            spread: false,
            ..config
        });
        assert!((0..40).all(|t| at_once.phase(t, period).is_zero()));
    }

    fn listed(a: &LoadAgent, params: Value) -> a2a_watch::a2a::ListTasksResponse {
        serde_json::from_str(&list(a, &params).unwrap()).unwrap()
    }

    #[test]
    fn a_hidden_agent_lists_nothing_until_revealed_and_history_follows_history_length() {
        let a = agent(LoadConfig {
            tasks: 3,
            events: 2,
            history: 3,
            hidden: true,
            ..LoadConfig::default()
        });
        assert_eq!(listed(&a, json!({})).tasks.len(), 0);
        a.hidden.store(false, Ordering::Relaxed);
        let all = listed(&a, json!({}));
        assert_eq!(all.tasks.len(), 3);
        assert_eq!(all.tasks[0].history.len(), 3, "unset historyLength: the whole history");
        assert_eq!(all.tasks[0].history[0].role, a2a_watch::a2a::Role::User);
        assert!(listed(&a, json!({"historyLength": 0})).tasks[0].history.is_empty());
        let last = listed(&a, json!({"historyLength": 1}));
        assert_eq!(last.tasks[0].history.len(), 1);
        assert_eq!(last.tasks[0].history[0].role, a2a_watch::a2a::Role::Agent);
        // A task that moves comes first in the next listing, however the order was cached.
        let oldest = task_id(0, 0);
        assert_eq!(all.tasks[2].id, oldest);
        let mut out = String::new();
        let later = Timestamp::now()
            .checked_add(jiff::SignedDuration::from_secs(60))
            .unwrap();
        assert!(a.step(0, "1", later, &mut out));
        assert_eq!(listed(&a, json!({})).tasks[0].id, oldest);
        let since = listed(&a, json!({"statusTimestampAfter": later.to_string()}));
        assert_eq!(since.tasks.iter().map(|t| t.id.clone()).collect::<Vec<_>>(), [oldest]);
    }

    /// The agents running, and the library's client of the first, from its card.
    async fn served(config: LoadConfig) -> (LoadAgents, a2a_watch::a2a::Client) {
        let running = start(config).await.unwrap();
        let client = a2a_watch::a2a::Client::connect(&running.urls[0], Default::default())
            .await
            .unwrap();
        (running, client)
    }

    #[tokio::test]
    async fn the_client_follows_a_task_to_its_end_and_the_stats_count_it() {
        let (running, client) = served(LoadConfig {
            tasks: 2,
            events: 3,
            ..LoadConfig::default()
        })
        .await;
        let events: Vec<StreamResponse> = client
            .subscribe(&task_id(0, 0))
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(events.len(), 4, "the snapshot, then three status updates");
        assert_eq!(
            client.get_task(&task_id(0, 0), None).await.unwrap().status.state,
            TaskState::Completed
        );
        // The library's client, which never sends loopback through a proxy.
        let http = a2a_watch::a2a::client::http_client(Duration::from_secs(5)).unwrap();
        let stats = http
            .get(format!("{}/_load/stats", running.urls[0]))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        assert_eq!(
            (stats["events"].as_u64(), stats["completed"].as_u64()),
            (Some(3), Some(1))
        );
        running.stop();
    }

    #[test]
    fn over_grpc_every_event_is_the_message_its_proto_json_makes() {
        let a = agent(LoadConfig {
            tasks: 2,
            events: 3,
            artifact_bytes: 8,
            artifact_chunks: 1,
            ..LoadConfig::default()
        });
        let proto = |bytes: Bytes| {
            let m = prost_reflect::DynamicMessage::decode(grpc::STREAM_RESPONSE.clone(), bytes).unwrap();
            serde_json::to_value(&m).unwrap()
        };
        let mut kinds = Vec::new();
        // A fixed time whose nanoseconds end in no zero: proto JSON writes 0, 3, 6 or 9 digits
        // and jiff the fewest, so `…460Z` and `…46Z` (the same time) would differ as text.
        let at = Timestamp::new(1_764_000_000, 123_456_789).unwrap();
        while let Some((step, p)) = a.advance(1, at) {
            let mut json = String::new();
            a.event_json(1, &step, &p, &mut json);
            let written = proto(grpc::event(&a, 1, &step, &p));
            assert_eq!(written, proto(grpc::stream_response(&json)));
            if let Step::Status(_) = step {
                // (An artifact chunk's `"append": false` is proto3's default, left out.)
                assert_eq!(
                    written,
                    serde_json::from_str::<Value>(&json).unwrap(),
                    "reads back as its JSON"
                );
            }
            kinds.push(json.split('"').nth(1).unwrap().to_string());
        }
        assert_eq!(
            kinds,
            ["statusUpdate", "artifactUpdate", "statusUpdate", "statusUpdate"]
        );
    }

    #[tokio::test]
    async fn over_grpc_the_client_reads_the_same_script_to_completed() {
        // Discovered from the card, as the engine does: the gRPC interface comes first.
        let (running, client) = served(LoadConfig {
            tasks: 3,
            events: 4,
            artifact_bytes: 20,
            artifact_chunks: 2,
            grpc: true,
            ..LoadConfig::default()
        })
        .await;
        assert_eq!(client.endpoint.binding, Binding::Grpc);
        assert_eq!(client.endpoint.url.as_str(), format!("http://{}/", running.grpc[0]));
        let events: Vec<StreamResponse> = client
            .subscribe(&task_id(0, 1))
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(events.len(), 7, "the snapshot, four status updates, two chunks");
        let StreamResponse::Task(snapshot) = &events[0] else {
            panic!("starts with the task")
        };
        assert_eq!(snapshot.status.state, TaskState::Working);
        assert_eq!(events.iter().filter(|e| e.kind() == "artifact").count(), 2);
        let StreamResponse::StatusUpdate(last) = events.last().unwrap() else {
            panic!("ends with a status update")
        };
        assert_eq!(last.status.state, TaskState::Completed);
        assert_eq!(last.task_id, task_id(0, 1));
        let task = client.get_task(&task_id(0, 1), None).await.unwrap();
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.artifacts[0].text().len(), 20);
        let page = client
            .list_tasks(&a2a_watch::a2a::ListTasksRequest {
                page_size: Some(2),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!((page.tasks.len(), page.total_size), (2, 3));
        assert_eq!(page.tasks[0].id, task_id(0, 1), "the task that moved lists first");
        // Refusals carry the reason the client classifies them by.
        let terminal = client.subscribe(&task_id(0, 1)).await.err().unwrap();
        assert!(
            terminal.is_kind(a2a_watch::a2a::ErrorKind::UnsupportedOperation),
            "{terminal}"
        );
        let missing = client.get_task("nope", None).await.unwrap_err();
        assert!(missing.is_kind(a2a_watch::a2a::ErrorKind::TaskNotFound), "{missing}");
        running.stop();
    }
}
