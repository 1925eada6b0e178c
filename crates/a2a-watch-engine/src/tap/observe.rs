//! What passed through the tap, as the store's events: the responses to SendMessage, GetTask,
//! ListTasks and CancelTask, and the frames of SendStreamingMessage and SubscribeToTask, decoded
//! with the client's own decoders (both bindings, 1.0 and 0.3). Runs beside the proxy, one task
//! per exchange fed by an unbounded queue: awaiting the store here never holds up the planner.
//! What the observers hold unread is bounded per tap (`Backlog`): past it an exchange is no
//! longer observed, so a store that takes nothing cannot make the tap keep the planner's traffic.
//! Anything that does not decode (errors, push configs, cards) makes no event.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use http::Method;
use jiff::Timestamp;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use tokio::sync::{mpsc, oneshot};

use crate::a2a::sse::{self, DEFAULT_FRAME_LIMIT};
use crate::a2a::wire::{jsonrpc, rest};
use crate::a2a::{ListTasksResponse, StreamResponse};
use crate::event::{self, AgentId, Event, TraceParent};

/// What one tap's observers may hold, across its exchanges: what is queued unread, the chunks
/// read and not yet decoded, and the requests kept to tell the binding.
pub(super) const BACKLOG_LIMIT: usize = 64 * 1024 * 1024;

/// The bytes one tap's observers hold.
#[derive(Debug, Clone, Default)]
pub(super) struct Backlog(Arc<AtomicUsize>);

impl Backlog {
    /// Counts `n` more bytes, unless that would pass the limit.
    fn reserve(&self, n: usize) -> bool {
        let held = self.0.fetch_add(n, Ordering::Relaxed) + n;
        if held > BACKLOG_LIMIT {
            self.take(n);
            return false;
        }
        true
    }

    fn take(&self, n: usize) {
        self.0.fetch_sub(n, Ordering::Relaxed);
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// Bytes counted in a tap's backlog until released or dropped; shared between a queue and its
/// observer, which releases what it has decoded.
#[derive(Debug, Clone)]
struct Held {
    bytes: Arc<AtomicUsize>,
    backlog: Backlog,
}

impl Held {
    fn new(backlog: &Backlog) -> Held {
        Held {
            bytes: Arc::default(),
            backlog: backlog.clone(),
        }
    }

    /// Counts `n` more bytes as held, if the backlog has room.
    fn add(&self, n: usize) -> bool {
        let room = self.backlog.reserve(n);
        if room {
            self.bytes.fetch_add(n, Ordering::Relaxed);
        }
        room
    }

    fn release(&self) {
        self.backlog.take(self.bytes.swap(0, Ordering::Relaxed));
    }
}

/// The planner's request body as the observer keeps it, counted while kept.
pub(super) struct RequestCopy {
    pub bytes: Bytes,
    _held: Holding,
}

/// Releases what it holds when dropped.
struct Holding(Held);

impl Drop for Holding {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Copies the request body as it streams upstream, within the backlog; a body that does not
/// fit (or breaks off) is not kept, and its exchange is not observed.
pub(super) struct CopyRequest {
    bytes: BytesMut,
    held: Option<Holding>,
    to: oneshot::Sender<RequestCopy>,
}

impl CopyRequest {
    /// The copier, and where the whole copy arrives once the body has ended.
    pub fn new(backlog: &Backlog) -> (CopyRequest, oneshot::Receiver<RequestCopy>) {
        let (to, rx) = oneshot::channel();
        let copier = CopyRequest {
            bytes: BytesMut::new(),
            held: Some(Holding(Held::new(backlog))),
            to,
        };
        (copier, rx)
    }

    pub fn push(&mut self, chunk: &[u8]) {
        let Some(held) = &self.held else { return };
        if held.0.add(chunk.len()) {
            self.bytes.extend_from_slice(chunk);
        } else {
            self.held = None;
            self.bytes = BytesMut::new();
        }
    }

    pub fn finish(self) {
        if let Some(held) = self.held {
            let _ = self.to.send(RequestCopy {
                bytes: self.bytes.freeze(),
                _held: held,
            });
        }
    }
}

/// The proxy's end of one exchange's queue: hands each chunk on unless the backlog is full or
/// the observer gone, and from then on nothing more (the observer sees its queue end there; what
/// it decoded stands).
pub(super) struct Tee {
    to: Option<mpsc::UnboundedSender<Bytes>>,
    backlog: Backlog,
}

impl Tee {
    pub fn send(&mut self, chunk: &Bytes) {
        let Some(to) = &self.to else { return };
        let n = chunk.len();
        if !self.backlog.reserve(n) {
            self.to = None;
        } else if to.send(chunk.clone()).is_err() {
            self.backlog.take(n);
            self.to = None;
        }
    }
}

/// The observer's end: each chunk stays counted after it is read, until the observer has
/// decoded it (`Held::release`) or stops; what is left unread leaves the backlog then too.
pub(super) struct Queue {
    rx: mpsc::UnboundedReceiver<Bytes>,
    read: Held,
}

impl Queue {
    async fn next(&mut self) -> Option<Bytes> {
        let chunk = self.rx.recv().await?;
        // Counted already (by `Tee::send`): from here it is this queue's to release.
        self.read.bytes.fetch_add(chunk.len(), Ordering::Relaxed);
        Some(chunk)
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.rx.close();
        while let Ok(chunk) = self.rx.try_recv() {
            self.read.backlog.take(chunk.len());
        }
        self.read.release();
    }
}

/// One exchange's queue, counted in the tap's backlog.
pub(super) fn queue(backlog: &Backlog) -> (Tee, Queue) {
    let (to, rx) = mpsc::unbounded_channel();
    let tee = Tee {
        to: Some(to),
        backlog: backlog.clone(),
    };
    (
        tee,
        Queue {
            rx,
            read: Held::new(backlog),
        },
    )
}

/// One request of the planner and what is known of its response before the body.
pub(super) struct Exchange {
    pub agent: AgentId,
    pub method: Method,
    pub path: String,
    pub request: RequestCopy,
    pub status: u16,
    pub sse: bool,
    /// The planner's `traceparent`, if its request carried a valid one.
    pub trace: Option<TraceParent>,
}

/// The two bindings, told apart by the request: a JSON-RPC request names its method in a
/// `jsonrpc` envelope (spec section 9), an HTTP+JSON one is a path (spec section 11).
#[derive(Debug, PartialEq, Eq)]
enum Binding {
    JsonRpc { lists: bool },
    Rest { lists: bool },
}

#[derive(Deserialize)]
struct RpcHead<'a> {
    jsonrpc: Option<IgnoredAny>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
}

/// The method of a JSON-RPC request (empty if it names none); None for anything else.
pub(super) fn rpc_method(body: &[u8]) -> Option<String> {
    match serde_json::from_slice::<RpcHead>(body) {
        Ok(RpcHead {
            jsonrpc: Some(_),
            method,
        }) => Some(method.unwrap_or_default().into_owned()),
        _ => None,
    }
}

/// Whether the request sends a message (spec sections 9.4.1-2 and 11.3; 0.3's names too): the
/// exchange that creates a task, whose trace context the task joins.
fn sends(ex: &Exchange) -> bool {
    match rpc_method(&ex.request.bytes) {
        Some(method) => matches!(
            method.as_str(),
            "SendMessage" | "SendStreamingMessage" | "message/send" | "message/stream"
        ),
        None => {
            ex.method == Method::POST && (ex.path.ends_with("/message:send") || ex.path.ends_with("/message:stream"))
        }
    }
}

fn binding(ex: &Exchange) -> Binding {
    match rpc_method(&ex.request.bytes) {
        Some(method) => Binding::JsonRpc {
            // 0.3 has no ListTasks (docs/protocol-notes.md, "0.3 compatibility").
            lists: method == "ListTasks",
        },
        None => Binding::Rest {
            lists: ex.method == Method::GET && ex.path.ends_with("/tasks"),
        },
    }
}

/// Reads the response as it is passed on and hands its tasks and events to the store.
pub(super) async fn observe(ex: Exchange, chunks: Queue, events: event::Sender) {
    let binding = binding(&ex);
    let trace = ex.trace.filter(|_| sends(&ex));
    // The request is not kept while a stream lasts.
    let Exchange { agent, status, sse, .. } = ex;
    let read = chunks.read.clone();
    let chunks = futures::stream::unfold(chunks, |mut queue| async move {
        queue.next().await.map(|b| (Ok::<_, Infallible>(b), queue))
    });
    if sse {
        let decode = match binding {
            Binding::JsonRpc { .. } => jsonrpc::decode_frame,
            Binding::Rest { .. } => rest::decode_frame,
        };
        let mut frames = std::pin::pin!(sse::frames(chunks, DEFAULT_FRAME_LIMIT));
        while let Some(frame) = frames.next().await {
            // A broken stream ends here as it ends for the planner; a frame that does not decode
            // (an error frame) is skipped as the client skips it.
            let Ok(frame) = frame else { return };
            // What was read is decoded, but for the start of the next frame (part of one chunk).
            read.release();
            if let Ok(event) = decode(&frame)
                && events.send_all(as_events(agent, event, trace)).await.is_err()
            {
                return;
            }
        }
        return;
    }
    let mut body = BytesMut::new();
    let mut chunks = std::pin::pin!(chunks);
    while let Some(Ok(chunk)) = chunks.next().await {
        body.extend_from_slice(&chunk);
    }
    // The body stays counted (by the queue) until it is decoded, and not while the store waits.
    let decoded = unary(agent, &binding, status, &body, trace);
    drop(body);
    read.release();
    let _ = events.send_all(decoded).await;
}

/// The events in one whole response body.
fn unary(agent: AgentId, binding: &Binding, status: u16, body: &[u8], trace: Option<TraceParent>) -> Vec<Event> {
    fn decoded<T: DeserializeOwned>(binding: &Binding, status: u16, body: &[u8]) -> Option<T> {
        match binding {
            Binding::JsonRpc { .. } => jsonrpc::decode("tapped response", body).ok(),
            Binding::Rest { .. } => rest::decode("tapped response", status, body).ok(),
        }
    }
    let (Binding::JsonRpc { lists } | Binding::Rest { lists }) = binding;
    if *lists {
        let listed: Option<ListTasksResponse> = decoded(binding, status, body);
        let tasks = listed.map(|l| l.tasks).unwrap_or_default();
        return tasks
            .into_iter()
            .flat_map(|t| as_events(agent, StreamResponse::Task(t), None))
            .collect();
    }
    // A Task (GetTask, CancelTask, a send) or a send's Message: one decoder reads all of them.
    decoded(binding, status, body)
        .map(|event| as_events(agent, event, trace))
        .unwrap_or_default()
}

/// A whole task is a snapshot, anything else an update of the task it names, each said to be
/// tapped first (with the planner's `trace` when the exchange was a send that carried one); a
/// message outside any task concerns no row.
fn as_events(agent: AgentId, event: StreamResponse, trace: Option<TraceParent>) -> Vec<Event> {
    let seen = Timestamp::now();
    let Some(task) = event.named_task().map(str::to_string) else {
        return Vec::new();
    };
    vec![
        Event::Tapped {
            agent,
            task,
            seen,
            trace,
        },
        Event::from_stream(agent, event, seen),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that takes nothing fills the backlog to its limit and no further: the exchange is
    /// then no longer observed; what was queued leaves the backlog when its observer stops.
    #[test]
    fn the_backlog_is_bounded_and_given_back() {
        let backlog = Backlog::default();
        let (mut tee, queue) = queue(&backlog);
        let mib = Bytes::from(vec![b'x'; 1 << 20]);
        for _ in 0..(BACKLOG_LIMIT >> 20) + 10 {
            tee.send(&mib);
        }
        assert_eq!(backlog.held(), BACKLOG_LIMIT, "full, and no further");
        assert!(tee.to.is_none(), "the exchange is no longer observed");
        let (mut other, _its_queue) = super::queue(&backlog);
        other.send(&mib);
        assert!(other.to.is_none(), "the limit is the tap's, across exchanges");
        drop(queue);
        assert_eq!(backlog.held(), 0, "what was unread is given back");
    }

    fn copied(backlog: &Backlog, body: &[u8]) -> Option<RequestCopy> {
        let (mut copier, mut copy) = CopyRequest::new(backlog);
        copier.push(body);
        copier.finish();
        copy.try_recv().ok()
    }

    /// Chunks read from the queue stay counted until the observer says they are decoded, and a
    /// request kept to tell the binding is counted while it is kept; one that does not fit is
    /// not kept at all.
    #[tokio::test]
    async fn what_the_observer_holds_counts_until_it_lets_go() {
        let backlog = Backlog::default();
        let request = copied(&backlog, &[b'r'; 100]).expect("fits");
        assert_eq!(backlog.held(), 100);
        let (mut tee, mut queue) = queue(&backlog);
        tee.send(&Bytes::from_static(&[b'x'; 50]));
        assert_eq!(queue.next().await.map(|b| b.len()), Some(50));
        assert_eq!(backlog.held(), 150, "read, not yet decoded");
        queue.read.release();
        assert_eq!(backlog.held(), 100);
        drop(request);
        assert_eq!(backlog.held(), 0);
        let (mut filler, _its_queue) = super::queue(&backlog);
        filler.send(&Bytes::from(vec![b'x'; BACKLOG_LIMIT - 10]));
        assert!(copied(&backlog, &[b'r'; 11]).is_none(), "over the bound: not kept");
        assert_eq!(backlog.held(), BACKLOG_LIMIT - 10, "and not counted");
    }

    fn exchange(method: Method, path: &str, request: &str) -> Exchange {
        Exchange {
            agent: 0,
            method,
            path: path.into(),
            request: copied(&Backlog::default(), request.as_bytes()).unwrap(),
            status: 200,
            sse: false,
            trace: None,
        }
    }

    fn ids(events: &[Event]) -> Vec<(&'static str, String)> {
        events
            .iter()
            .map(|e| match e {
                Event::Snapshot { task, .. } => ("snapshot", task.id.clone()),
                Event::Update { event, .. } => (event.kind(), event.task_id().unwrap_or("").into()),
                Event::Tapped { task, .. } => ("tapped", task.clone()),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_request_tells_the_binding_and_the_listing() {
        let rpc = exchange(
            Method::POST,
            "/",
            r#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#,
        );
        assert_eq!(binding(&rpc), Binding::JsonRpc { lists: true });
        let send03 = exchange(Method::POST, "/", r#"{"jsonrpc":"2.0","id":1,"method":"message/send"}"#);
        assert_eq!(binding(&send03), Binding::JsonRpc { lists: false });
        assert_eq!(
            binding(&exchange(Method::GET, "/acme/tasks", "")),
            Binding::Rest { lists: true }
        );
        assert_eq!(
            binding(&exchange(Method::POST, "/message:send", r#"{"message":{}}"#)),
            Binding::Rest { lists: false }
        );
    }

    #[test]
    fn only_a_send_passes_the_planners_trace_on() {
        let rpc = |method: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{}}}}"#);
        for send in [
            exchange(Method::POST, "/", &rpc("SendMessage")),
            exchange(Method::POST, "/", &rpc("SendStreamingMessage")),
            exchange(Method::POST, "/", &rpc("message/stream")),
            exchange(Method::POST, "/acme/message:send", r#"{"message":{}}"#),
        ] {
            assert!(sends(&send), "{}", send.path);
        }
        for other in [
            exchange(Method::POST, "/", &rpc("GetTask")),
            exchange(Method::POST, "/", &rpc("CancelTask")),
            exchange(Method::GET, "/tasks/t-1", ""),
            exchange(Method::POST, "/tasks/t-1:cancel", ""),
        ] {
            assert!(!sends(&other), "{}", other.path);
        }
        let trace = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        let task = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}}"#;
        let events = unary(0, &Binding::JsonRpc { lists: false }, 200, task.as_bytes(), trace);
        assert!(matches!(&events[0], Event::Tapped { trace: t, .. } if *t == trace && t.is_some()));
    }

    #[test]
    fn tasks_messages_and_listings_become_events_and_errors_none() {
        let rpc = Binding::JsonRpc { lists: false };
        let task = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}"#;
        assert_eq!(
            ids(&unary(0, &rpc, 200, task.as_bytes(), None)),
            [("tapped", "t-1".into()), ("snapshot", "t-1".into())]
        );
        let v03 = r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t-3","contextId":"c","status":{"state":"working"}}}"#;
        assert_eq!(
            ids(&unary(0, &rpc, 200, v03.as_bytes(), None)),
            [("tapped", "t-3".into()), ("snapshot", "t-3".into())]
        );
        let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#;
        assert!(unary(0, &rpc, 200, error.as_bytes(), None).is_empty());
        let bare_message = r#"{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}"#;
        assert!(unary(0, &Binding::Rest { lists: false }, 200, bare_message.as_bytes(), None).is_empty());
        let listing = r#"{"tasks":[{"id":"a","contextId":"c","status":{"state":"TASK_STATE_WORKING"}},{"id":"b","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}],"nextPageToken":""}"#;
        let listed = unary(0, &Binding::Rest { lists: true }, 200, listing.as_bytes(), None);
        assert_eq!(
            ids(&listed),
            [
                ("tapped", "a".into()),
                ("snapshot", "a".into()),
                ("tapped", "b".into()),
                ("snapshot", "b".into())
            ]
        );
        let not_found = r#"{"error":{"code":404,"status":"NOT_FOUND","message":"no"}}"#;
        assert!(unary(0, &Binding::Rest { lists: false }, 404, not_found.as_bytes(), None).is_empty());
    }
}
