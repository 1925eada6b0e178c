//! What the store holds and hands out: a task as we know it (its statuses seen, artifacts,
//! history and marks), an agent's row, the counts per class, what applying an event changed, and
//! the limits that keep one task from growing without end.

use std::collections::VecDeque;
use std::sync::Arc;

use jiff::Timestamp;

use super::Store;
use crate::a2a::shown::ShownUrl;
use crate::a2a::{Artifact, Message, Metadata, StateClass, Task, TaskState, TaskStatus};
use crate::event::{ActionId, AgentId, AgentInfo, Health, SignedCardAtTap, TraceParent, WatchMode};

/// A task is known by its agent and its id (ids are only unique per agent).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey {
    pub agent: AgentId,
    pub id: Arc<str>,
}

/// One state a task was seen in. The protocol keeps no transition history, so only a watcher
/// can show this.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub state: TaskState,
    pub at: Timestamp,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct TaskEntry {
    pub key: TaskKey,
    /// Shared by every task of the agent in the same context (`Store::contexts`).
    pub context: Arc<str>,
    /// The status message's `taskId` and `contextId` are dropped when they repeat the task's own
    /// (`status_ids` says which; `status_as_sent` puts them back): two strings a task.
    pub status: TaskStatus,
    pub(super) status_ids: RepeatedIds,
    /// Where the held status stands among the task's statuses (`order_time`): its timestamp,
    /// or its arrival when it had none or one too far ahead. `status` keeps the stamp as sent.
    pub(super) status_at: Timestamp,
    /// The agent has stamped a status of this task: from then on an unstamped one cannot be
    /// placed among them, and does not change the state unless it ends the task.
    pub(super) stamped: bool,
    pub artifacts: Vec<Artifact>,
    pub history: Vec<Message>,
    pub metadata: Option<Metadata>,
    pub timeline: VecDeque<Transition>,
    /// Timeline entries dropped to stay within the limit, so the view can say so.
    pub timeline_dropped: usize,
    /// When the task entered its current state.
    pub state_since: Timestamp,
    pub updated: Timestamp,
    /// The last whole snapshot as JSON, for the detail view.
    /// Whether a whole snapshot (ListTasks, GetTask, a subscription's first frame) was seen.
    pub snapshot_seen: bool,
    pub watch: Option<WatchMode>,
    /// The last warning for this task; cleared by the next good snapshot or update.
    pub error: Option<String>,
    /// The agent said it has no such task (never existed, or not the caller's).
    pub not_found: bool,
    /// The stream has carried nothing since then (checked with GetTask meanwhile); cleared by
    /// the next stream event.
    pub quiet_since: Option<Timestamp>,
    /// Seen in a planner's traffic through a tap (`Event::Tapped`).
    pub tapped: bool,
    /// The planner's trace context, from the first send through a tap that named the task with
    /// one: its traces span joins the planner's trace (issue 22). Boxed: most tasks have none.
    pub planner_trace: Option<Box<TraceParent>>,
    /// What the limits left out, so the detail pane can say so.
    pub cut: Cut,
}

/// Counts of what a task's limits dropped (`Limits`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cut {
    pub artifacts: usize,
    /// Parts beyond `Limits::parts` in an artifact.
    pub parts: usize,
    pub metadata: usize,
}

impl Cut {
    pub fn is_empty(&self) -> bool {
        *self == Cut::default()
    }
}

/// Which ids of a stored status message the store dropped because they repeat the task's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RepeatedIds {
    task: bool,
    context: bool,
}

impl TaskEntry {
    /// The task as this watcher holds it, in the protocol's shape: the last snapshot with every
    /// later event folded in. Built when asked (the detail pane), never kept per task.
    pub fn as_task(&self) -> Task {
        Task {
            id: self.key.id.to_string(),
            context_id: self.context.to_string(),
            status: self.status_as_sent(),
            artifacts: self.artifacts.clone(),
            history: self.history.clone(),
            metadata: self.metadata.clone(),
            // Kept by the watchers of streams, which look for gaps in it, not here.
            generation: 0,
        }
    }

    /// The status as the agent sent it, its message's ids included.
    pub fn status_as_sent(&self) -> TaskStatus {
        let mut status = self.status.clone();
        if let Some(m) = &mut status.message {
            if self.status_ids.task {
                m.task_id = Some(self.key.id.to_string());
            }
            if self.status_ids.context {
                m.context_id = Some(self.context.to_string());
            }
        }
        status
    }

    /// Drops the ids of `status`'s message that repeat this task's; says which it dropped.
    pub(super) fn without_repeated_ids(&self, mut status: TaskStatus) -> (TaskStatus, RepeatedIds) {
        let mut ids = RepeatedIds::default();
        if let Some(m) = &mut status.message {
            if m.task_id.as_deref() == Some(&*self.key.id) {
                m.task_id = None;
                ids.task = true;
            }
            if !self.context.is_empty() && m.context_id.as_deref() == Some(&*self.context) {
                m.context_id = None;
                ids.context = true;
            }
        }
        (status, ids)
    }

    pub fn state(&self) -> &TaskState {
        &self.status.state
    }

    pub fn class(&self) -> StateClass {
        self.status.state.class()
    }
}

#[derive(Debug, Clone)]
pub struct AgentEntry {
    /// The name the user gave, or the card's once it is read (the shown URL until then).
    pub name: String,
    pub(super) named_by_user: bool,
    /// The config's `group`, set by the front end that knows it (`AgentSpec::group`).
    pub group: Option<String>,
    /// Only ever the shown form (README "Security"): the store feeds the screen, `--json` and
    /// recordings.
    pub url: ShownUrl,
    pub health: Health,
    pub info: Option<AgentInfo>,
    /// The last listing stopped at the page cap: tasks past it are not shown.
    pub listing_cut: bool,
    /// Push deliveries refused for a missing or wrong token.
    pub push_refused: u64,
    /// Requests answered 503 by the agent's tap, and by the push receiver, for too many
    /// connections.
    pub tap_busy: u64,
    pub push_busy: u64,
    /// What the agent's tap did with its signed card, once asked for it.
    pub tap_signed_card: Option<SignedCardAtTap>,
    /// Gaps seen in the `generation` of a subscription's events (A2A 1.1, draft).
    pub missed_events: u64,
    /// Times its health became `Reconnecting` (each attempt counts, as in the metric
    /// `a2a_watch_stream_reconnects_total`).
    pub reconnects: u64,
    /// Its tasks followed by a stream now (`WatchMode::Streaming`).
    pub streams: usize,
    /// When the last task snapshot or update from it was seen.
    pub last_event: Option<Timestamp>,
}

impl AgentEntry {
    /// The name the user gave, else the card's once read; never the URL that `name` holds until
    /// then (the label of the agent's metrics, README "Monitoring stack").
    pub fn given_or_card_name(&self) -> Option<&str> {
        let card_named = self.info.as_ref().is_some_and(|i| !i.name.is_empty());
        (self.named_by_user || card_named).then_some(self.name.as_str())
    }
}

/// Tasks per class on one agent; terminal ones split into success and the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub active: usize,
    pub interrupted: usize,
    pub completed: usize,
    /// FAILED, CANCELED, REJECTED.
    pub ended: usize,
    pub unknown: usize,
}

impl Counts {
    fn slot(&mut self, state: &TaskState) -> &mut usize {
        match state.class() {
            StateClass::Active => &mut self.active,
            StateClass::Interrupted => &mut self.interrupted,
            StateClass::Terminal if *state == TaskState::Completed => &mut self.completed,
            StateClass::Terminal => &mut self.ended,
            StateClass::Unknown => &mut self.unknown,
        }
    }

    pub fn add(&mut self, state: &TaskState) {
        *self.slot(state) += 1;
    }

    pub fn remove(&mut self, state: &TaskState) {
        let n = self.slot(state);
        *n = n.saturating_sub(1);
    }

    pub fn merge(&mut self, other: &Counts) {
        self.active += other.active;
        self.interrupted += other.interrupted;
        self.completed += other.completed;
        self.ended += other.ended;
        self.unknown += other.unknown;
    }

    pub fn total(&self) -> usize {
        self.active + self.interrupted + self.completed + self.ended + self.unknown
    }
}

/// What applying one event did, for the headless mode and the notifier.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Nothing,
    Agent(AgentId),
    Task(TaskKey),
    /// The task's state moved (a new timeline entry).
    State(TaskKey),
    Action(ActionId),
}

/// A task's state move, as the store indexed it: the state it left and since when (none for a
/// task first seen), and the state it entered and since when (`TaskEntry::state_since`).
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    pub key: TaskKey,
    pub from: Option<(TaskState, Timestamp)>,
    pub to: (TaskState, Timestamp),
}

/// Told of every event the store applies (`Store::observe`), after it is applied: the agent it
/// was about, what it changed, the task's state move if it made one, and the store as it is now.
/// One call per event, so what an observer keeps costs it no look at every task (`metrics`).
pub trait Observer: Send + std::fmt::Debug {
    fn applied(&mut self, store: &Store, agent: AgentId, change: &Change, moved: Option<&Move>);
}

/// What changed since the views last looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Journal {
    Changed(Vec<TaskKey>),
    Everything,
}

/// What one task may hold; an agent's lists are not ours to grow without end.
#[derive(Debug, Clone)]
pub struct Limits {
    pub timeline: usize,
    pub history: usize,
    /// Artifacts per task; later ones are dropped.
    pub artifacts: usize,
    /// Parts per artifact; later chunks are dropped.
    pub parts: usize,
    /// Metadata keys per task; new keys past it are dropped.
    pub metadata: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeline: 64,
            history: 50,
            artifacts: 256,
            parts: 4096,
            metadata: 256,
        }
    }
}
