//! The vocabulary the parts share: what the watch engine tells the store (`Event`), what the
//! front end asks of the engine (`Command`), the ids both name, and the channel that carries
//! events to the store. Plain data on `a2a` types alone, so the store and the front ends depend
//! on it rather than on the engine.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
pub use tokio::sync::mpsc::error::TryRecvError;

use crate::a2a::signature::CardSignature;
use crate::a2a::{Binding, ProtocolVersion, SendMessageRequest, StreamResponse, Task};

/// Agents are numbered in the order they were configured; names are kept once, in the store.
pub type AgentId = usize;

/// How an agent is doing, as a person reads it on the agent's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Health {
    Connecting,
    /// Card read, tasks found, live tasks streamed.
    Streaming,
    /// Watching by polling (no streaming capability, or streams refused).
    Polling {
        reason: String,
    },
    Reconnecting {
        attempt: u32,
        reason: String,
    },
    /// 401/403: the message says which scheme the card asks for and which env var to set.
    Unauthorized {
        message: String,
    },
    Unreachable {
        reason: String,
    },
}

impl Health {
    /// The agent cannot be reached. Retrying counts: after its first failed attempt a down
    /// agent is shown reconnecting (`watch::agent`), however long it stays down.
    pub fn is_down(&self) -> bool {
        matches!(self, Health::Unreachable { .. } | Health::Reconnecting { .. })
    }

    /// A short word for badges and NDJSON.
    pub fn label(&self) -> &'static str {
        match self {
            Health::Connecting => "connecting",
            Health::Streaming => "streaming",
            Health::Polling { .. } => "polling",
            Health::Reconnecting { .. } => "reconnecting",
            Health::Unauthorized { .. } => "unauthorized",
            Health::Unreachable { .. } => "unreachable",
        }
    }

    pub fn detail(&self) -> Option<String> {
        match self {
            Health::Connecting | Health::Streaming => None,
            Health::Polling { reason } | Health::Unreachable { reason } => Some(reason.clone()),
            Health::Reconnecting { attempt, reason } => Some(format!("attempt {attempt}: {reason}")),
            Health::Unauthorized { message } => Some(message.clone()),
        }
    }
}

/// What we learned from an agent's card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub name: String,
    pub version: ProtocolVersion,
    pub binding: Binding,
    pub streaming: bool,
    /// False for 0.3 agents: only tasks we started or were given by id are watched.
    pub lists_tasks: bool,
    /// Why the agent is not asked to push although its card offers it and the receiver is on:
    /// the receiver's token is a credential, and this destination may not get one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_off: Option<String>,
    /// What the card's signatures say (A2A 1.0 §8.4); `None` for an unsigned card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_signature: Option<CardSignature>,
}

/// How one task is being watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WatchMode {
    Streaming,
    Polling,
    /// Terminal: nothing more to watch.
    Done,
}

/// One of a2a-watch's own servers that an agent (or its planner) reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalServer {
    /// The agent's tap (`--tap`).
    Tap,
    /// The push receiver (`--push-listen`).
    Push,
}

/// What a tap did with a signed agent card (A2A 1.0 section 8.4) that it would point at itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignedCardAtTap {
    /// Passed on unchanged, so its signatures still hold: the planner calls the agent directly,
    /// around the tap.
    PassedThrough,
    /// Pointed at the tap, its signatures removed (`--tap-strip-signatures`).
    Stripped,
}

/// Names one thing the user asked for (an answer, a cancel, a new task), so its outcome can be
/// shown where it was asked.
pub type ActionId = u64;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActionOutcome {
    /// The agent took it; `task` is the task it concerns (new tasks learn their id here).
    Done { task: Option<String> },
    /// Not delivered, or refused; the message says why, in words for a person.
    Failed { message: String },
}

/// The A2A methods a2a-watch calls to change something, by the specification's names (A2A 1.0
/// section 9; gRPC's are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    SendMessage,
    SendStreamingMessage,
    CancelTask,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::SendMessage => "SendMessage",
            Method::SendStreamingMessage => "SendStreamingMessage",
            Method::CancelTask => "CancelTask",
        }
    }
}

/// The call an action made, as its outcome reports it: what the traces' `a2a.client` span says
/// (issue 22, "OpenTelemetry traces").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub method: Method,
    /// The task the request named (an answer, an approval, a cancel), else the one it created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The request's contextId, if it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub sent: Timestamp,
    pub ended: Timestamp,
    /// Why it failed, low in cardinality (OpenTelemetry's `error.type`): the A2A error's name
    /// (`TaskNotCancelableError`), an HTTP status, or a word (`timeout`, `refused`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

/// A W3C Trace Context `traceparent` (Trace Context Level 1, section 3.2) that a planner's send
/// carried through a tap: the planner's trace and the span of its call, which the tasks that send
/// creates join (issue 22). Recorded in its header form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub parent_id: [u8; 8],
    pub flags: u8,
}

impl TraceParent {
    /// A valid header value, else None (section 3.2.2): lowercase hex fields; version `ff` is
    /// invalid, a later version than 00 is read for its first four fields (3.2.4); all-zero ids
    /// are invalid.
    pub fn parse(value: &str) -> Option<TraceParent> {
        let bytes = value.as_bytes();
        let version = lower_hex::<1>(bytes.get(..2)?)?[0];
        let fits = match version {
            0 => bytes.len() == 55,
            0xff => false,
            _ => bytes.len() == 55 || bytes.get(55) == Some(&b'-'),
        };
        if !fits || [bytes[2], bytes[35], bytes[52]] != [b'-'; 3] {
            return None;
        }
        let trace_id = lower_hex::<16>(&bytes[3..35])?;
        let parent_id = lower_hex::<8>(&bytes[36..52])?;
        let flags = lower_hex::<1>(&bytes[53..55])?[0];
        (trace_id != [0; 16] && parent_id != [0; 8]).then_some(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }
}

/// `N` bytes from `2 * N` lowercase hex digits.
fn lower_hex<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    let digit = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

impl std::fmt::Display for TraceParent {
    /// The version 00 header form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.parent_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", self.flags)
    }
}

impl TryFrom<String> for TraceParent {
    type Error = String;

    fn try_from(value: String) -> Result<TraceParent, String> {
        TraceParent::parse(&value).ok_or_else(|| format!("not a traceparent: {value:?}"))
    }
}

impl From<TraceParent> for String {
    fn from(trace: TraceParent) -> String {
        trace.to_string()
    }
}

/// Serializable for recordings (`record`): externally tagged, the A2A parts in their wire JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    Info {
        agent: AgentId,
        info: AgentInfo,
    },
    Health {
        agent: AgentId,
        health: Health,
    },
    /// A whole task: from ListTasks, GetTask, or the first frame of a subscription.
    Snapshot {
        agent: AgentId,
        task: Task,
        seen: Timestamp,
    },
    /// One stream event.
    Update {
        agent: AgentId,
        event: StreamResponse,
        seen: Timestamp,
    },
    Watching {
        agent: AgentId,
        task: String,
        mode: WatchMode,
    },
    /// The agent has no such task (TaskNotFound): never existed, or not the caller's. The task
    /// shows as a row marked not found, even if nothing else was ever seen of it.
    NotFound {
        agent: AgentId,
        task: String,
        message: String,
        seen: Timestamp,
    },
    /// The task's stream has carried nothing since `since` (checked meanwhile by GetTask, or by
    /// the agent's listing when it follows the task).
    Quiet {
        agent: AgentId,
        task: String,
        since: Timestamp,
    },
    /// Whether the agent's last listing stopped at the page cap.
    ListingCut {
        agent: AgentId,
        cut: bool,
    },
    /// A planner's traffic through this agent's tap named the task: the planner delegated it, or
    /// asked about it (README, "Watching your own planner").
    /// Sent before what the traffic said of the task, so that its first line already says so.
    /// `trace` is the planner's trace context, when the traffic was a send that carried one.
    Tapped {
        agent: AgentId,
        task: String,
        seen: Timestamp,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace: Option<TraceParent>,
    },
    /// A push delivery came without this session's token, or with another: refused (401).
    PushRefused {
        agent: AgentId,
    },
    /// One of a2a-watch's servers for this agent had too many connections and answered 503.
    Busy {
        agent: AgentId,
        server: LocalServer,
    },
    /// The agent's tap was asked for a signed card (A2A 1.0 section 8.4) that it would rewrite.
    TapSignedCard {
        agent: AgentId,
        card: SignedCardAtTap,
    },
    /// A subscription's events skipped a `generation` (A2A 1.1, draft): some were missed, and
    /// the task was fetched again with GetTask.
    EventsMissed {
        agent: AgentId,
    },
    /// Something went wrong for one task; shown on its row, never fatal.
    TaskError {
        agent: AgentId,
        task: String,
        message: String,
    },
    /// What became of an action, and the call it made (none when nothing was sent).
    Action {
        agent: AgentId,
        action: ActionId,
        outcome: ActionOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<Box<Call>>,
    },
}

impl Event {
    /// The agent the event is about.
    pub fn agent(&self) -> AgentId {
        match self {
            Event::Info { agent, .. }
            | Event::Health { agent, .. }
            | Event::Snapshot { agent, .. }
            | Event::Update { agent, .. }
            | Event::Watching { agent, .. }
            | Event::NotFound { agent, .. }
            | Event::Quiet { agent, .. }
            | Event::ListingCut { agent, .. }
            | Event::Tapped { agent, .. }
            | Event::PushRefused { agent }
            | Event::Busy { agent, .. }
            | Event::TapSignedCard { agent, .. }
            | Event::EventsMissed { agent }
            | Event::TaskError { agent, .. }
            | Event::Action { agent, .. } => *agent,
        }
    }

    /// What a task's own event says, as the store takes it: a whole task is a snapshot, anything
    /// else an update (a stream, a push delivery, a tapped exchange).
    pub fn from_stream(agent: AgentId, event: StreamResponse, seen: Timestamp) -> Event {
        match event {
            StreamResponse::Task(task) => Event::Snapshot { agent, task, seen },
            event => Event::Update { agent, event, seen },
        }
    }
}

/// Requests from the front end to one agent's task.
#[derive(Debug, Clone)]
pub enum Command {
    /// Watch this task (one the dashboard started, or one given by id).
    Watch(String),
    /// Send a message: a new task, or an answer on a task. Its events flow into the store; the
    /// outcome comes back as `Event::Action`.
    Send {
        action: ActionId,
        request: Box<SendMessageRequest>,
    },
    Cancel {
        action: ActionId,
        task: String,
    },
    /// A call got a 401: resolve the credential again (run `token_command`, re-read `token_env`
    /// or `A2A_TOKEN_<NAME>`). Asked for by whichever call was refused; refreshes that come
    /// close together run once.
    Refresh,
}

/// The engine's side of the one bounded channel to the store. A stream hands over everything
/// one read brought as one batch: one send (one wake of the consumer) per read rather than per
/// event. Order holds: a batch keeps its order and the channel is first in, first out.
#[derive(Debug, Clone)]
pub struct Sender(mpsc::Sender<Batch>);

/// The store's side: yields the events one at a time, in the order they were sent.
#[derive(Debug)]
pub struct Receiver {
    batches: mpsc::Receiver<Batch>,
    held: std::vec::IntoIter<Event>,
}

/// The receiving side is gone: the engine stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// An event is as large as it was in a channel of single events; boxing it would cost an
/// allocation per event.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Batch {
    /// Most sends outside a stream are single events: no vector for them.
    One(Event),
    Many(Vec<Event>),
}

/// A channel of at most `capacity` batches waiting; a full channel makes the senders wait (the
/// network side slows down; nothing is dropped).
pub fn channel(capacity: usize) -> (Sender, Receiver) {
    let (tx, rx) = mpsc::channel(capacity);
    (
        Sender(tx),
        Receiver {
            batches: rx,
            held: Vec::new().into_iter(),
        },
    )
}

impl Sender {
    pub async fn send(&self, event: Event) -> Result<(), Closed> {
        self.0.send(Batch::One(event)).await.map_err(|_| Closed)
    }

    /// Sends the events together, in order; nothing is sent for none. The batch is made once
    /// the channel has room, so that a sender waiting for room holds a `Vec`, not an `Event`
    /// (every open stream's watcher is sized by its largest wait: issue 23).
    pub async fn send_all(&self, mut events: Vec<Event>) -> Result<(), Closed> {
        if events.is_empty() {
            return Ok(());
        }
        let room = self.0.reserve().await.map_err(|_| Closed)?;
        let batch = match events.len() {
            1 => Batch::One(events.pop().expect("one event")),
            _ => Batch::Many(events),
        };
        room.send(batch);
        Ok(())
    }
}

impl Receiver {
    /// The next event; None once every sender is gone and everything sent was taken.
    pub async fn recv(&mut self) -> Option<Event> {
        if let Some(event) = self.held.next() {
            return Some(event);
        }
        let batch = self.batches.recv().await?;
        Some(self.take(batch))
    }

    /// The next event if one is waiting, without waiting.
    pub fn try_recv(&mut self) -> Result<Event, TryRecvError> {
        if let Some(event) = self.held.next() {
            return Ok(event);
        }
        let batch = self.batches.try_recv()?;
        Ok(self.take(batch))
    }

    fn take(&mut self, batch: Batch) -> Event {
        match batch {
            Batch::One(event) => event,
            Batch::Many(events) => {
                self.held = events.into_iter();
                self.held.next().expect("a batch holds at least two events")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(task: &str) -> Event {
        Event::Quiet {
            agent: 0,
            task: task.into(),
            since: Timestamp::UNIX_EPOCH,
        }
    }

    fn task_of(event: &Event) -> &str {
        match event {
            Event::Quiet { task, .. } => task,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_traceparent_is_read_as_w3c_trace_context_says() {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parsed = TraceParent::parse(valid).expect("valid");
        assert_eq!(parsed.trace_id[..2], [0x4b, 0xf9]);
        assert_eq!(parsed.parent_id[7], 0xb7);
        assert_eq!(parsed.flags, 1);
        assert_eq!(parsed.to_string(), valid);
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes-next";
        assert_eq!(
            TraceParent::parse(later).map(|t| t.trace_id),
            Some(parsed.trace_id),
            "a later version is read for its first fields"
        );
        for invalid in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
        ] {
            assert_eq!(TraceParent::parse(invalid), None, "{invalid:?}");
        }
        let recorded = serde_json::to_string(&parsed).unwrap();
        assert_eq!(recorded, format!("\"{valid}\""));
        assert_eq!(serde_json::from_str::<TraceParent>(&recorded).unwrap(), parsed);
    }

    #[tokio::test]
    async fn batches_and_single_events_arrive_in_the_order_sent() {
        let (tx, mut rx) = channel(2);
        let sending = tokio::spawn(async move {
            tx.send(quiet("a")).await.unwrap();
            tx.send_all(vec![quiet("b"), quiet("c"), quiet("d")]).await.unwrap();
            tx.send_all(Vec::new()).await.unwrap();
            tx.send_all(vec![quiet("e")]).await.unwrap();
            tx.send(quiet("f")).await.unwrap();
        });
        let mut got = Vec::new();
        while let Some(event) = rx.recv().await {
            got.push(task_of(&event).to_string());
        }
        sending.await.unwrap();
        assert_eq!(got, ["a", "b", "c", "d", "e", "f"]);
    }

    #[tokio::test]
    async fn try_recv_takes_the_rest_of_a_batch_then_says_empty_then_closed() {
        let (tx, mut rx) = channel(4);
        tx.send_all(vec![quiet("a"), quiet("b")]).await.unwrap();
        assert_eq!(task_of(&rx.recv().await.unwrap()), "a");
        assert_eq!(task_of(&rx.try_recv().unwrap()), "b");
        assert_eq!(rx.try_recv().unwrap_err(), TryRecvError::Empty);
        drop(tx);
        assert_eq!(rx.try_recv().unwrap_err(), TryRecvError::Disconnected);
    }

    #[tokio::test]
    async fn a_gone_receiver_is_reported_to_the_sender() {
        let (tx, rx) = channel(4);
        drop(rx);
        assert_eq!(tx.send(quiet("a")).await, Err(Closed));
        assert_eq!(tx.send_all(vec![quiet("a"), quiet("b")]).await, Err(Closed));
    }
}
