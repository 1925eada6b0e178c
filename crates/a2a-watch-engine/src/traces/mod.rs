//! OpenTelemetry traces (issue 22, "OpenTelemetry traces"; README "Monitoring stack"): one span per
//! task a2a-watch sees, fed by the store as it applies events (`store::Observer`), like `metrics`.
//!
//! The span model follows the OpenTelemetry GenAI A2A conventions (draft `docs/gen-ai/a2a.md` of
//! the semantic-conventions-genai work); the `a2a.*` keys are defined here (`keys`):
//! - `a2a.task {agent}`, kind CLIENT, from the task's first known time (its first status
//!   timestamp, else when seen) to its terminal state. It is built when the task ends and handed
//!   to `export` at once, never held open in an exporter; `finish_unfinished` sends the rest at
//!   shutdown with `a2a_watch.unfinished = true`. Each task gets one span a run.
//! - One event per state change (`a2a.task.status`; the status text only with
//!   `--otlp-include-text`) and per artifact (id, name, size in bytes; never content).
//! - Status ERROR for FAILED and REJECTED, the status text sanitised and cut as description.
//! - A task a planner created through a tap, with a W3C `traceparent` on its send, is the child
//!   of the planner's span in the planner's trace (the tap passes the header on as it came), and
//!   sent whatever its sampled flag says: `--otlp` asks for every task.
//!   Else a task whose messages' `referenceTaskIds` (A2A 1.0 `Message`) name a task seen is that
//!   task's child, in its trace; otherwise its trace is its context's (`ids`).
//! - a2a-watch's own calls that change something (a new task, an answer, an approval, a cancel)
//!   are `a2a.client` spans, kind CLIENT, named by the A2A method (`SendMessage`,
//!   `SendStreamingMessage`, `CancelTask`), from when the call was sent to its outcome: children
//!   of the span of the task they concern (a new task's, once it has an id), with `error.type`
//!   and status ERROR when the call failed. The outcome's words are the ERROR's description only
//!   with `--otlp-include-text` (they may quote the agent's reply).

mod export;
mod ids;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use jiff::Timestamp;
use opentelemetry::trace::{Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SpanData, SpanEvents, SpanLinks};

pub use export::{BuildError, ExportStatus, Exporting, FLUSH_WITHIN, QUEUE_CAPACITY, Queue, Settings};

use crate::a2a::{Artifact, PartContent, TaskState};
use crate::event::{ActionId, ActionOutcome, AgentId, Call};
use crate::store::{AgentEntry, Change, Move, Observer, Store, TaskEntry, TaskKey};

/// The attribute and event names (issue 22; the `a2a.*` ones are ours until the draft settles).
pub mod keys {
    pub const TASK_ID: &str = "a2a.task.id";
    pub const TASK_STATE: &str = "a2a.task.state";
    pub const PROTOCOL_VERSION: &str = "a2a.protocol.version";
    pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    pub const WATCH_AGENT: &str = "a2a_watch.agent";
    pub const UNFINISHED: &str = "a2a_watch.unfinished";
    pub const SERVER_ADDRESS: &str = "server.address";
    pub const SERVER_PORT: &str = "server.port";
    pub const STATUS_EVENT: &str = "a2a.task.status";
    pub const STATUS_TEXT: &str = "a2a.task.status.text";
    pub const ARTIFACT_EVENT: &str = "a2a.task.artifact";
    pub const ARTIFACT_ID: &str = "a2a.artifact.id";
    pub const ARTIFACT_NAME: &str = "a2a.artifact.name";
    pub const ARTIFACT_SIZE: &str = "a2a.artifact.size";
    pub const RPC_METHOD: &str = "rpc.method";
    pub const ERROR_TYPE: &str = "error.type";
}

/// Events kept a span; later ones are counted as dropped (a task that flaps for hours).
const EVENTS_PER_SPAN: usize = 128;
/// The bytes of status text kept as an ERROR description or an event attribute.
const TEXT_BYTES: usize = 256;

/// What each span of one agent says about the agent.
#[derive(Debug, Default, Clone)]
struct AgentLabels {
    /// The agent's URL origin (`scheme://host:port`), the trace ids' input.
    origin: String,
    host: String,
    port: Option<u16>,
    /// The name the user gave, else the card's, else the host (never a URL).
    shown: String,
    card_name: Option<String>,
    protocol: Option<&'static str>,
}

impl AgentLabels {
    fn of(agent: &AgentEntry) -> AgentLabels {
        let url = url::Url::parse(agent.url.as_str()).ok();
        let host = url.as_ref().and_then(|u| u.host_str()).unwrap_or("unnamed").to_string();
        AgentLabels {
            origin: url
                .as_ref()
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_default(),
            port: url.as_ref().and_then(url::Url::port_or_known_default),
            shown: agent.given_or_card_name().unwrap_or(&host).to_string(),
            host,
            card_name: agent.info.as_ref().map(|i| i.name.clone()).filter(|n| !n.is_empty()),
            protocol: agent.info.as_ref().map(|i| i.version.label()),
        }
    }

    /// What every span about this agent says of it.
    fn attributes(&self) -> Vec<KeyValue> {
        let mut attributes = vec![
            KeyValue::new(keys::WATCH_AGENT, self.shown.clone()),
            KeyValue::new(keys::SERVER_ADDRESS, self.host.clone()),
        ];
        if let Some(protocol) = self.protocol {
            attributes.push(KeyValue::new(keys::PROTOCOL_VERSION, protocol));
        }
        if let Some(name) = &self.card_name {
            attributes.push(KeyValue::new(keys::AGENT_NAME, name.clone()));
        }
        if let Some(port) = self.port {
            attributes.push(KeyValue::new(keys::SERVER_PORT, i64::from(port)));
        }
        attributes
    }
}

/// A task's span until it ends.
#[derive(Debug)]
struct OpenSpan {
    trace: TraceId,
    span: SpanId,
    parent: SpanId,
    /// The parent is the planner's span, in another process.
    parent_is_remote: bool,
    context_id: Arc<str>,
    start: SystemTime,
    state: TaskState,
    /// The last status text, for an ERROR's description.
    text: String,
    /// The terminal status's time, the span's end.
    terminal_at: Option<SystemTime>,
    events: Vec<Event>,
    dropped_events: u32,
    /// Artifacts already turned into events.
    artifacts: usize,
}

impl OpenSpan {
    fn event(&mut self, event: Event) {
        if self.events.len() < EVENTS_PER_SPAN {
            self.events.push(event);
        } else {
            self.dropped_events += 1;
        }
    }
}

/// The spans of one run: those open and the ids of those sent.
#[derive(Debug)]
pub struct Spans {
    include_text: bool,
    queue: Arc<Queue>,
    agents: Vec<AgentLabels>,
    open: HashMap<TaskKey, OpenSpan>,
    /// Tasks whose span was sent, with its ids: a task gets one span a run, and a later task
    /// that references it becomes its child.
    ended: HashMap<TaskKey, (TraceId, SpanId)>,
    scope: InstrumentationScope,
    /// The `a2a.client` spans' ids: each call is its own, so random ones (the SDK's).
    call_ids: RandomIdGenerator,
}

impl Spans {
    fn new(store: &Store, include_text: bool, queue: Arc<Queue>) -> Spans {
        Spans {
            include_text,
            queue,
            agents: store.agents.iter().map(AgentLabels::of).collect(),
            open: HashMap::new(),
            ended: HashMap::new(),
            scope: InstrumentationScope::builder("a2a-watch")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
            call_ids: RandomIdGenerator::default(),
        }
    }

    /// One event applied to `store` (`store::Observer`).
    fn applied(&mut self, store: &Store, agent: AgentId, change: &Change, moved: Option<&Move>) {
        if let Change::Action(action) = change
            && let Some(call) = store.call(*action)
        {
            self.called(store, agent, *action, call);
        }
        if let Change::Agent(id) = change
            && let Some(entry) = store.agents.get(*id)
        {
            if self.agents.len() <= *id {
                self.agents.resize_with(*id + 1, AgentLabels::default);
            }
            self.agents[*id] = AgentLabels::of(entry);
        }
        if let Some(moved) = moved
            && !self.ended.contains_key(&moved.key)
            && let Some(task) = store.task(&moved.key)
        {
            self.status(store, task, moved);
        }
        let key = match change {
            Change::Task(key) | Change::State(key) => key,
            _ => return,
        };
        if let (Some(task), Some(open)) = (store.task(key), self.open.get_mut(key)) {
            for artifact in task.artifacts.iter().skip(open.artifacts) {
                open.event(artifact_event(artifact));
            }
            open.artifacts = open.artifacts.max(task.artifacts.len());
        }
        if self.open.get(key).is_some_and(|open| open.state.is_terminal()) {
            self.end(key, false);
        }
    }

    /// A state move: the span opened if new, its status event, its state.
    fn status(&mut self, store: &Store, task: &TaskEntry, moved: &Move) {
        let (state, at) = &moved.to;
        if !self.open.contains_key(&moved.key) {
            let span = self.opened(store, task, *at);
            self.open.insert(moved.key.clone(), span);
        }
        let text = task.timeline.back().map(|t| t.text.clone()).unwrap_or_default();
        let include_text = self.include_text;
        let Some(open) = self.open.get_mut(&moved.key) else {
            return;
        };
        let mut attributes = vec![KeyValue::new(keys::TASK_STATE, state.proto_name().to_string())];
        if include_text && !text.is_empty() {
            attributes.push(KeyValue::new(keys::STATUS_TEXT, cut(&text)));
        }
        open.event(Event::new(keys::STATUS_EVENT, system_time(*at), attributes, 0));
        open.state = state.clone();
        open.text = text;
        if state.is_terminal() {
            open.terminal_at = Some(system_time(*at));
        }
    }

    /// A new task's span: its ids, its parent (the planner's span, or a referenced task seen)
    /// and its start.
    fn opened(&self, store: &Store, task: &TaskEntry, first_known: Timestamp) -> OpenSpan {
        let labels = self.agents.get(task.key.agent).cloned().unwrap_or_default();
        let planner = (task.planner_trace.as_deref()).map(|planner| {
            (
                TraceId::from_bytes(planner.trace_id),
                SpanId::from_bytes(planner.parent_id),
            )
        });
        let referenced = || {
            (task.history.iter())
                .flat_map(|m| &m.reference_task_ids)
                .find_map(|id| self.span_of(store, task.key.agent, id))
        };
        let (trace, parent) = (planner.or_else(referenced))
            .unwrap_or((ids::context_trace(&labels.origin, &task.context), SpanId::INVALID));
        OpenSpan {
            trace,
            span: ids::task_span(&labels.origin, &task.key.id),
            parent,
            parent_is_remote: planner.is_some(),
            context_id: task.context.clone(),
            start: system_time(first_known),
            state: TaskState::Unspecified,
            text: String::new(),
            terminal_at: None,
            events: Vec::new(),
            dropped_events: 0,
            artifacts: 0,
        }
    }

    /// The ids of a seen task's span: of the same agent first, task ids being an agent's own.
    fn span_of(&self, store: &Store, agent: AgentId, id: &str) -> Option<(TraceId, SpanId)> {
        let same_agent = std::iter::once(agent);
        let others = (0..store.agents.len()).filter(|a| *a != agent);
        same_agent.chain(others).find_map(|agent| {
            let key = TaskKey { agent, id: id.into() };
            self.ended
                .get(&key)
                .copied()
                .or_else(|| self.open.get(&key).map(|open| (open.trace, open.span)))
        })
    }

    /// Sends the `a2a.client` span of one of a2a-watch's own calls, once its outcome is known.
    fn called(&mut self, store: &Store, agent: AgentId, action: ActionId, call: &Call) {
        let labels = self.agents.get(agent).cloned().unwrap_or_default();
        let task = (call.task.as_deref()).map(|id| TaskKey { agent, id: id.into() });
        let entry = task.as_ref().and_then(|key| store.task(key));
        let context = entry.map(|t| &*t.context).or(call.context.as_deref());
        let (trace, parent) = match (
            task.as_ref().and_then(|key| self.task_span(&labels, key, entry)),
            context,
        ) {
            (Some(parent), _) => parent,
            (None, Some(context)) => (ids::context_trace(&labels.origin, context), SpanId::INVALID),
            (None, None) => (self.call_ids.new_trace_id(), SpanId::INVALID),
        };
        let mut attributes = vec![KeyValue::new(keys::RPC_METHOD, call.method.name())];
        if let Some(key) = &task {
            attributes.push(KeyValue::new(keys::TASK_ID, key.id.to_string()));
        }
        if let Some(context) = context {
            attributes.push(KeyValue::new(keys::CONVERSATION_ID, context.to_string()));
        }
        attributes.extend(labels.attributes());
        let status = match (&call.error_type, store.action(action)) {
            (None, _) => Status::Unset,
            (Some(error_type), outcome) => {
                attributes.push(KeyValue::new(keys::ERROR_TYPE, error_type.clone()));
                match outcome {
                    Some(ActionOutcome::Failed { message }) if self.include_text => Status::error(cut(message)),
                    _ => Status::error(""),
                }
            }
        };
        let start = system_time(call.sent);
        self.queue.push(SpanData {
            span_context: SpanContext::new(
                trace,
                self.call_ids.new_span_id(),
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent,
            parent_span_is_remote: false,
            span_kind: SpanKind::Client,
            name: call.method.name().into(),
            start_time: start,
            end_time: system_time(call.ended).max(start),
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status,
            instrumentation_scope: self.scope.clone(),
        });
    }

    /// The ids of `key`'s span, open or sent; one not opened yet has the ids it will open with,
    /// unless what it has not said yet (a reference, a planner's trace) moves it.
    fn task_span(&self, labels: &AgentLabels, key: &TaskKey, entry: Option<&TaskEntry>) -> Option<(TraceId, SpanId)> {
        let span = self.open.get(key).map(|open| (open.trace, open.span));
        span.or_else(|| self.ended.get(key).copied()).or_else(|| {
            let context = ids::context_trace(&labels.origin, &entry?.context);
            Some((context, ids::task_span(&labels.origin, &key.id)))
        })
    }

    /// Sends `key`'s span: at its terminal state, or unfinished at shutdown.
    fn end(&mut self, key: &TaskKey, unfinished: bool) {
        let Some(open) = self.open.remove(key) else {
            return;
        };
        let end = open.terminal_at.unwrap_or_else(SystemTime::now);
        self.ended.insert(key.clone(), (open.trace, open.span));
        let labels = self.agents.get(key.agent).cloned().unwrap_or_default();
        self.queue
            .push(span_data(&labels, key, open, end, unfinished, self.scope.clone()));
    }

    /// Sends every span still open, marked unfinished (at shutdown).
    pub fn finish_unfinished(&mut self) {
        let keys: Vec<TaskKey> = self.open.keys().cloned().collect();
        for key in keys {
            self.end(&key, true);
        }
    }
}

/// The exported form of a span.
fn span_data(
    labels: &AgentLabels,
    key: &TaskKey,
    open: OpenSpan,
    end: SystemTime,
    unfinished: bool,
    scope: InstrumentationScope,
) -> SpanData {
    let mut attributes = vec![
        KeyValue::new(keys::TASK_ID, key.id.to_string()),
        KeyValue::new(keys::TASK_STATE, open.state.proto_name().to_string()),
        KeyValue::new(keys::CONVERSATION_ID, open.context_id.to_string()),
    ];
    attributes.extend(labels.attributes());
    if unfinished {
        attributes.push(KeyValue::new(keys::UNFINISHED, true));
    }
    let status = match open.state {
        TaskState::Failed | TaskState::Rejected => Status::error(cut(&open.text)),
        _ => Status::Unset,
    };
    let mut events = SpanEvents::default();
    events.events = open.events;
    events.dropped_count = open.dropped_events;
    SpanData {
        span_context: SpanContext::new(open.trace, open.span, TraceFlags::SAMPLED, false, TraceState::default()),
        parent_span_id: open.parent,
        parent_span_is_remote: open.parent_is_remote,
        span_kind: SpanKind::Client,
        name: format!("a2a.task {}", labels.shown).into(),
        start_time: open.start,
        end_time: end.max(open.start),
        attributes,
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status,
        instrumentation_scope: scope,
    }
}

/// An artifact's event: what it is and how big, never what it says.
fn artifact_event(artifact: &Artifact) -> Event {
    let size: usize = artifact
        .parts
        .iter()
        .map(|part| match &part.content {
            PartContent::Text(s) | PartContent::Raw(s) | PartContent::Url(s) | PartContent::Unsupported(s) => s.len(),
            PartContent::Data(value) => value.to_string().len(),
        })
        .sum();
    let mut attributes = vec![
        KeyValue::new(keys::ARTIFACT_ID, artifact.artifact_id.clone()),
        KeyValue::new(keys::ARTIFACT_SIZE, i64::try_from(size).unwrap_or(i64::MAX)),
    ];
    if let Some(name) = &artifact.name {
        attributes.push(KeyValue::new(keys::ARTIFACT_NAME, cut(name)));
    }
    Event::new(keys::ARTIFACT_EVENT, SystemTime::now(), attributes, 0)
}

/// Text as a span may carry it: one sanitised line (README "Security"), at most `TEXT_BYTES`.
fn cut(text: &str) -> String {
    let line = crate::text::one_line(&crate::text::sanitize(text));
    crate::text::head(&line, TEXT_BYTES).0.to_string()
}

fn system_time(at: Timestamp) -> SystemTime {
    SystemTime::try_from(at).unwrap_or_else(|_| SystemTime::now())
}

/// The spans, shared by the store that feeds them and the run that ends them.
#[derive(Debug, Clone)]
pub struct Traces(Arc<Mutex<Spans>>);

impl Traces {
    /// Spans of `store`'s tasks into `queue`, fed from now on by every event it applies.
    pub fn observe(store: &mut Store, include_text: bool, queue: Arc<Queue>) -> Traces {
        let traces = Traces(Arc::new(Mutex::new(Spans::new(store, include_text, queue))));
        store.observe(Box::new(traces.clone()));
        traces
    }

    /// Sends the spans of the tasks still going, marked unfinished (at shutdown).
    pub fn finish_unfinished(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .finish_unfinished();
    }
}

impl Observer for Traces {
    fn applied(&mut self, store: &Store, agent: AgentId, change: &Change, moved: Option<&Move>) {
        let mut spans = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        spans.applied(store, agent, change, moved);
    }
}
