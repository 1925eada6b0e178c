//! The one place where watch events become state. Plain data, no I/O, no async: the dashboard
//! renders views of it, the headless mode prints what changed, tests drive it by hand.
//!
//! Applying is idempotent and order-tolerant: the same event twice changes nothing, and a
//! snapshot older than what we hold does not roll a task back (streams, ListTasks, GetTask and
//! push deliveries race each other, and A2A 1.0 has no sequence numbers). What may not move a
//! task, snapshots and events alike (`set_status`; README, "Security"):
//! - a terminal state is final (spec section 3.1.1): nothing revives the task, and its artifacts
//!   are frozen (a snapshot in that same terminal state may still fill them in);
//! - a terminal state is never discarded as older than a live one;
//! - statuses are ordered by the agent's timestamps, a stamp more than 5 minutes ahead of our
//!   clock counting as the status's arrival (the status keeps the stamp it was sent with);
//! - an unstamped status is placed by its arrival, which says nothing against a stamp: on a task
//!   the agent stamps, it may refresh the state's text, and change the state only to end the task.

mod ids;
pub mod query;
pub mod tree;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use crate::a2a::shown::ShownUrl;

use crate::a2a::{
    Artifact, Message, Metadata, StateClass, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use crate::event::{
    ActionId, ActionOutcome, AgentId, AgentInfo, Event, Health, LocalServer, SignedCardAtTap, WatchMode,
};

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
    status_ids: RepeatedIds,
    /// Where the held status stands among the task's statuses (`order_time`): its timestamp,
    /// or its arrival when it had none or one too far ahead. `status` keeps the stamp as sent.
    status_at: Timestamp,
    /// The agent has stamped a status of this task: from then on an unstamped one cannot be
    /// placed among them, and does not change the state unless it ends the task.
    stamped: bool,
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
struct RepeatedIds {
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
    fn without_repeated_ids(&self, mut status: TaskStatus) -> (TaskStatus, RepeatedIds) {
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
    named_by_user: bool,
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

/// Changed tasks remembered between two looks of the views; more means a rebuild.
const JOURNAL_MAX: usize = 8192;

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

/// Keeps the first `limits.artifacts` artifacts and `limits.parts` parts of each; says how
/// many of each it dropped.
fn cap_artifacts(artifacts: &mut Vec<Artifact>, limits: &Limits) -> (usize, usize) {
    let dropped = artifacts.len().saturating_sub(limits.artifacts);
    artifacts.truncate(limits.artifacts);
    let mut parts = 0;
    for a in artifacts.iter_mut() {
        parts += a.parts.len().saturating_sub(limits.parts);
        a.parts.truncate(limits.parts);
    }
    (dropped, parts)
}

/// Adds `incoming` keys to `held` while there is room; returns how many did not fit.
fn merge_metadata(held: &mut Metadata, incoming: Metadata, limit: usize) -> usize {
    let mut dropped = 0;
    for (k, v) in incoming {
        if held.len() < limit || held.contains_key(&k) {
            held.insert(k, v);
        } else {
            dropped += 1;
        }
    }
    dropped
}

#[derive(Debug, Default)]
pub struct Store {
    pub agents: Vec<AgentEntry>,
    /// Per agent, by task id: looked up by `&str`, so an event costs no allocation to find its task.
    /// Boxed, so the table's empty slots and its copies while it grows cost a pointer rather than
    /// a whole entry (over 500 bytes) each: at 100,000 tasks that is tens of MiB.
    tasks: Vec<HashMap<Arc<str>, Box<TaskEntry>>>,
    /// Per agent, every context id seen, so its tasks share one copy: an agent's tasks often
    /// belong to a few contexts, and 100,000 copies of the same id cost about 5 MiB.
    contexts: Vec<HashSet<Arc<str>>>,
    /// Every task id, sorted, so the screen shows each as much as tells it apart (`task_id_chars`).
    ids: ids::SortedIds,
    /// Kept as tasks move, so the header and the inbox cost nothing per frame: counts per
    /// agent, and the waiting tasks by (since when, key), oldest first.
    counts: Vec<Counts>,
    waiting: BTreeSet<(Timestamp, TaskKey)>,
    /// The AUTH_REQUIRED ones among them: the approvals pane.
    approvals: BTreeSet<(Timestamp, TaskKey)>,
    /// Tasks that may still move: not terminal, and not disowned by their agent (`settled`).
    unsettled: usize,
    /// What became of the actions the user took, by id.
    actions: HashMap<ActionId, (AgentId, ActionOutcome)>,
    /// Tasks changed since the views last looked, so they move only those.
    journal: Vec<TaskKey>,
    /// Too much changed (or an agent was renamed): views rebuild.
    journal_overflowed: bool,
    pub limits: Limits,
}

impl Store {
    /// Agents by the name the user gave them (if any) and URL, in configuration order. Only the
    /// URL's shown form is kept.
    pub fn new<U: AsRef<str>>(agents: impl IntoIterator<Item = (Option<String>, U)>) -> Store {
        Store {
            agents: agents
                .into_iter()
                .map(|(name, url)| (name, ShownUrl::of_input(url.as_ref())))
                .map(|(name, url)| AgentEntry {
                    named_by_user: name.is_some(),
                    name: name.unwrap_or_else(|| url.to_string()),
                    url,
                    health: Health::Connecting,
                    info: None,
                    listing_cut: false,
                    push_refused: 0,
                    tap_busy: 0,
                    push_busy: 0,
                    tap_signed_card: None,
                    missed_events: 0,
                })
                .collect(),
            ..Store::default()
        }
    }

    pub fn task(&self, key: &TaskKey) -> Option<&TaskEntry> {
        self.tasks.get(key.agent)?.get(&*key.id).map(|t| &**t)
    }

    pub fn tasks(&self) -> impl Iterator<Item = &TaskEntry> {
        self.tasks.iter().flat_map(HashMap::values).map(|t| &**t)
    }

    /// How many leading characters of a task id tell it apart from every other task's id (of
    /// any agent), counting at most `max`; more than the id has when it is the start of another.
    pub fn task_id_chars(&self, id: &str, max: usize) -> usize {
        self.ids.distinguishing_chars(id, max)
    }

    pub fn action(&self, id: ActionId) -> Option<&ActionOutcome> {
        self.actions.get(&id).map(|(_, outcome)| outcome)
    }

    pub fn len(&self) -> usize {
        self.tasks.iter().map(HashMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.iter().all(HashMap::is_empty)
    }

    pub fn agent_name(&self, agent: AgentId) -> &str {
        self.agents.get(agent).map_or("?", |a| a.name.as_str())
    }

    pub fn counts(&self, agent: AgentId) -> Counts {
        self.counts.get(agent).copied().unwrap_or_default()
    }

    pub fn total_counts(&self) -> Counts {
        let mut total = Counts::default();
        for c in &self.counts {
            total.merge(c);
        }
        total
    }

    /// Every task waiting on a person, oldest first.
    pub fn interrupts(&self) -> Vec<&TaskEntry> {
        self.waiting.iter().filter_map(|(_, key)| self.task(key)).collect()
    }

    /// How many tasks wait for an approval (AUTH_REQUIRED).
    pub fn approval_count(&self) -> usize {
        self.approvals.len()
    }

    /// The AUTH_REQUIRED tasks from the `first`-th on, oldest first; only what is taken is
    /// looked up, so a pane of five costs five lookups whatever the number waiting.
    pub fn approvals_from(&self, first: usize) -> impl Iterator<Item = &TaskEntry> {
        self.approvals.iter().skip(first).filter_map(|(_, key)| self.task(key))
    }

    /// Where a task is among the approvals (`approvals_from`), if it waits for one.
    pub fn approval_index(&self, key: &TaskKey) -> Option<usize> {
        let (_, since) = self.indexed(key.agent, &key.id)?;
        let at = (since, key.clone());
        self.approvals
            .contains(&at)
            .then(|| self.approvals.range(..&at).count())
    }

    /// Whether some task waits on a person, without looking at every task.
    pub fn any_interrupted(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Whether there are tasks and every one is terminal or unknown to its agent (which will
    /// not move again), without looking at every task.
    pub fn all_settled(&self) -> bool {
        !self.is_empty() && self.unsettled == 0
    }

    fn settled(&self, agent: AgentId, id: &str) -> Option<bool> {
        let t = self.tasks.get(agent)?.get(id)?;
        Some(t.class() == StateClass::Terminal || t.not_found)
    }

    /// Keeps `unsettled` after an event on a task that was `before` it.
    fn recount_settled(&mut self, change: &Change, before: Option<Before>) {
        let (was, now) = match (before, change) {
            (Some(Before::Known(was)), Change::Task(key) | Change::State(key)) => {
                (Some(was), self.settled(key.agent, &key.id))
            }
            // An event can add a task and still report nothing (an empty artifact chunk).
            (Some(Before::New(agent, id)), _) => (None, self.settled(agent, &id)),
            _ => return,
        };
        match (was, now) {
            (None | Some(true), Some(false)) => self.unsettled += 1,
            (Some(false), Some(true)) => self.unsettled -= 1,
            _ => {}
        }
    }

    /// A task's state and since when, before an event: what `reindex` compares against.
    fn indexed(&self, agent: AgentId, id: &str) -> Option<(TaskState, Timestamp)> {
        self.tasks
            .get(agent)?
            .get(id)
            .filter(|t| !t.timeline.is_empty())
            .map(|t| (t.state().clone(), t.state_since))
    }

    /// Only a state move can change where a task is counted or whether it waits.
    fn reindex_moved(&mut self, change: &Change, before: Option<(TaskState, Timestamp)>) {
        if let Change::State(key) = change {
            let key = key.clone();
            self.reindex(&key, before);
        }
    }

    /// Moves a task between the counts and the waiting list after its state changed.
    fn reindex(&mut self, key: &TaskKey, before: Option<(TaskState, Timestamp)>) {
        let Some(now) = self.indexed(key.agent, &key.id) else {
            return;
        };
        if before.as_ref() == Some(&now) {
            return;
        }
        if self.counts.len() <= key.agent {
            self.counts.resize(key.agent + 1, Counts::default());
        }
        if let Some((state, since)) = before {
            self.counts[key.agent].remove(&state);
            self.waiting.remove(&(since, key.clone()));
            self.approvals.remove(&(since, key.clone()));
        }
        self.counts[key.agent].add(&now.0);
        if now.0.is_interrupted() {
            self.waiting.insert((now.1, key.clone()));
        }
        if now.0 == TaskState::AuthRequired {
            self.approvals.insert((now.1, key.clone()));
        }
    }

    /// The tasks that changed since the last call, or `Everything` when views must rebuild.
    pub fn take_journal(&mut self) -> Journal {
        if std::mem::take(&mut self.journal_overflowed) {
            self.journal.clear();
            return Journal::Everything;
        }
        Journal::Changed(std::mem::take(&mut self.journal))
    }

    fn note(&mut self, change: &Change) {
        if let Change::Task(key) | Change::State(key) = change {
            if self.journal.len() >= JOURNAL_MAX {
                self.journal_overflowed = true;
                self.journal.clear();
            }
            if !self.journal_overflowed {
                self.journal.push(key.clone());
            }
        }
    }

    pub fn apply(&mut self, event: Event) -> Change {
        // Only these create a task, move its state or mark it unknown to its agent.
        let target = match &event {
            Event::Snapshot { agent, task, .. } => Some((*agent, task.id.as_str())),
            Event::Update { agent, event, .. } => event.task_id().map(|id| (*agent, id)),
            Event::NotFound { agent, task, .. } | Event::Tapped { agent, task, .. } => Some((*agent, task.as_str())),
            _ => None,
        };
        let settled_before = target.map(|(agent, id)| match self.settled(agent, id) {
            Some(settled) => Before::Known(settled),
            None => Before::New(agent, id.to_string()),
        });
        let change = self.apply_event(event);
        self.recount_settled(&change, settled_before);
        if change != Change::Nothing {
            self.note(&change);
        }
        change
    }

    fn apply_event(&mut self, event: Event) -> Change {
        match event {
            Event::Info { agent, info } => match self.agents.get_mut(agent) {
                Some(a) if a.info.as_ref() != Some(&info) => {
                    // A new name can reorder the by-agent view.
                    self.journal_overflowed = true;
                    if !a.named_by_user && !info.name.is_empty() {
                        a.name = info.name.clone();
                    }
                    a.info = Some(info);
                    Change::Agent(agent)
                }
                _ => Change::Nothing,
            },
            Event::Health { agent, health } => match self.agents.get_mut(agent) {
                Some(a) if a.health != health => {
                    a.health = health;
                    Change::Agent(agent)
                }
                _ => Change::Nothing,
            },
            Event::Snapshot { agent, task, seen } => {
                let before = self.indexed(agent, &task.id);
                let change = self.apply_snapshot(agent, task, seen);
                self.reindex_moved(&change, before);
                change
            }
            Event::Update { agent, event, seen } => {
                let before = event.task_id().and_then(|id| self.indexed(agent, id));
                let change = self.apply_update(agent, event, seen);
                self.reindex_moved(&change, before);
                change
            }
            Event::Watching { agent, task, mode } => {
                match self.tasks.get_mut(agent).and_then(|m| m.get_mut(task.as_str())) {
                    Some(t) if t.watch != Some(mode) => {
                        t.watch = Some(mode);
                        t.quiet_since = None;
                        // A stream that opens again supersedes the error that closed the last one.
                        if mode == WatchMode::Streaming {
                            t.error = None;
                        }
                        Change::Task(t.key.clone())
                    }
                    _ => Change::Nothing,
                }
            }
            Event::PushRefused { agent } => self.count_on_agent(agent, |a| &mut a.push_refused),
            Event::EventsMissed { agent } => self.count_on_agent(agent, |a| &mut a.missed_events),
            Event::Busy { agent, server } => self.count_on_agent(agent, |a| match server {
                LocalServer::Tap => &mut a.tap_busy,
                LocalServer::Push => &mut a.push_busy,
            }),
            Event::TapSignedCard { agent, card } => match self.agents.get_mut(agent) {
                Some(a) if a.tap_signed_card != Some(card) => {
                    a.tap_signed_card = Some(card);
                    Change::Agent(agent)
                }
                _ => Change::Nothing,
            },
            Event::ListingCut { agent, cut } => match self.agents.get_mut(agent) {
                Some(a) if a.listing_cut != cut => {
                    a.listing_cut = cut;
                    Change::Agent(agent)
                }
                _ => Change::Nothing,
            },
            Event::NotFound {
                agent,
                task,
                message,
                seen,
            } => {
                let entry = self.entry(agent, &task, "", seen);
                if entry.not_found && entry.error.as_deref() == Some(&message) {
                    Change::Nothing
                } else {
                    entry.not_found = true;
                    entry.error = Some(message);
                    Change::Task(entry.key.clone())
                }
            }
            Event::Tapped { agent, task, seen } => {
                // A row from the first word of it: what the planner saw of the task follows.
                let entry = self.entry(agent, &task, "", seen);
                if entry.tapped {
                    Change::Nothing
                } else {
                    entry.tapped = true;
                    Change::Task(entry.key.clone())
                }
            }
            Event::Quiet { agent, task, since } => {
                match self.tasks.get_mut(agent).and_then(|m| m.get_mut(task.as_str())) {
                    Some(t) if t.quiet_since != Some(since) => {
                        t.quiet_since = Some(since);
                        Change::Task(t.key.clone())
                    }
                    _ => Change::Nothing,
                }
            }
            Event::TaskError { agent, task, message } => {
                match self.tasks.get_mut(agent).and_then(|m| m.get_mut(task.as_str())) {
                    Some(t) if t.error.as_deref() != Some(&message) => {
                        t.error = Some(message);
                        Change::Task(t.key.clone())
                    }
                    _ => Change::Nothing,
                }
            }
            Event::Action { agent, action, outcome } => {
                self.actions.insert(action, (agent, outcome));
                Change::Action(action)
            }
        }
    }

    /// One more of something counted on the agent's row.
    fn count_on_agent(&mut self, agent: AgentId, count: impl FnOnce(&mut AgentEntry) -> &mut u64) -> Change {
        match self.agents.get_mut(agent) {
            Some(a) => {
                *count(a) += 1;
                Change::Agent(agent)
            }
            None => Change::Nothing,
        }
    }

    fn entry(&mut self, agent: AgentId, id: &str, context: &str, seen: Timestamp) -> &mut TaskEntry {
        if self.tasks.len() <= agent {
            self.tasks.resize_with(agent + 1, HashMap::new);
            self.contexts.resize_with(agent + 1, HashSet::new);
        }
        let map = &mut self.tasks[agent];
        let contexts = &mut self.contexts[agent];
        if !map.contains_key(id) {
            let key = TaskKey { agent, id: id.into() };
            self.ids.insert(&key.id);
            let entry = TaskEntry {
                key: key.clone(),
                context: intern(contexts, ""),
                status: TaskStatus {
                    state: TaskState::Unknown("(not seen yet)".into()),
                    message: None,
                    timestamp: None,
                },
                status_ids: RepeatedIds::default(),
                status_at: seen,
                stamped: false,
                artifacts: Vec::new(),
                history: Vec::new(),
                metadata: None,
                timeline: VecDeque::new(),
                timeline_dropped: 0,
                state_since: seen,
                updated: seen,
                snapshot_seen: false,
                watch: None,
                error: None,
                not_found: false,
                quiet_since: None,
                tapped: false,
                cut: Cut::default(),
            };
            map.insert(key.id, Box::new(entry));
        }
        let entry = map.get_mut(id).expect("inserted above");
        if entry.context.is_empty() && !context.is_empty() {
            entry.context = intern(contexts, context);
        }
        entry
    }

    fn apply_snapshot(&mut self, agent: AgentId, task: Task, seen: Timestamp) -> Change {
        let limits = self.limits.clone();
        let is_new = self.tasks.get(agent).is_none_or(|m| !m.contains_key(task.id.as_str()));
        let entry = self.entry(agent, &task.id, &task.context_id, seen);
        // A good snapshot is the task recovered: the warning it had is stale.
        let mut changed = is_new || recovered(entry);
        // A task's artifacts are final with its terminal state: only a snapshot of the task in
        // that state (the agent's record of how it ended) may still say what they are.
        let frozen = is_ended(entry) && task.status.state != entry.status.state;
        // Lists left empty by the sender (ListTasks omits artifacts; historyLength 0 omits
        // history) do not erase what we hold.
        if !task.artifacts.is_empty() && !frozen {
            let mut artifacts = task.artifacts;
            (entry.cut.artifacts, entry.cut.parts) = cap_artifacts(&mut artifacts, &limits);
            if artifacts != entry.artifacts {
                entry.artifacts = artifacts;
                changed = true;
            }
        }
        if !task.history.is_empty() {
            let mut history = task.history;
            let cut = history.len().saturating_sub(limits.history);
            history.drain(..cut);
            if history != entry.history {
                history.iter_mut().for_each(compact);
                history.shrink_to_fit();
                entry.history = history;
                changed = true;
            }
        }
        if let Some(incoming) = task.metadata {
            let mut metadata = Metadata::new();
            entry.cut.metadata = merge_metadata(&mut metadata, incoming, limits.metadata);
            if entry.metadata.as_ref() != Some(&metadata) {
                entry.metadata = Some(metadata);
                changed = true;
            }
        }
        entry.snapshot_seen = true;
        let key = entry.key.clone();
        match set_status(entry, task.status, seen, limits.timeline) {
            StatusChange::Moved => Change::State(key),
            StatusChange::Refreshed => Change::Task(key),
            StatusChange::Ignored if changed => Change::Task(key),
            StatusChange::Ignored => Change::Nothing,
        }
    }

    fn apply_update(&mut self, agent: AgentId, event: StreamResponse, seen: Timestamp) -> Change {
        let limits = self.limits.clone();
        match event {
            StreamResponse::Task(task) => {
                let id = task.id.clone();
                let change = self.apply_snapshot(agent, task, seen);
                let heard = self.tasks[agent]
                    .get_mut(id.as_str())
                    .map(|t| &mut **t)
                    .is_some_and(heard);
                match change {
                    Change::Nothing if heard => Change::Task(TaskKey { agent, id: id.into() }),
                    change => change,
                }
            }
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id,
                context_id,
                status,
                metadata,
                ..
            }) => {
                if task_id.is_empty() {
                    return Change::Nothing;
                }
                let entry = self.entry(agent, &task_id, &context_id, seen);
                let key = entry.key.clone();
                let recovered = recovered(entry) | heard(entry);
                let md_changed = match metadata {
                    Some(md) => {
                        // Status metadata accumulates on the task, as the SDKs' stores do.
                        let held = entry.metadata.get_or_insert_with(Metadata::new);
                        let before = held.clone();
                        entry.cut.metadata += merge_metadata(held, md, limits.metadata);
                        *held != before
                    }
                    None => false,
                } || recovered;
                match set_status(entry, status, seen, limits.timeline) {
                    StatusChange::Moved => Change::State(key),
                    StatusChange::Refreshed => Change::Task(key),
                    StatusChange::Ignored if md_changed => Change::Task(key),
                    StatusChange::Ignored => Change::Nothing,
                }
            }
            StreamResponse::ArtifactUpdate(update) => {
                if update.task_id.is_empty() {
                    return Change::Nothing;
                }
                let entry = self.entry(agent, &update.task_id, &update.context_id, seen);
                let recovered = recovered(entry) | heard(entry);
                // An artifact snapshot after its chunks changes nothing; nor does a chunk after the
                // task ended (a late or replayed delivery): its artifacts are final.
                if is_ended(entry) || !update.apply_to(&mut entry.artifacts) {
                    return if recovered {
                        Change::Task(entry.key.clone())
                    } else {
                        Change::Nothing
                    };
                }
                let (artifacts, parts) = cap_artifacts(&mut entry.artifacts, &limits);
                entry.cut.artifacts += artifacts;
                entry.cut.parts += parts;
                entry.updated = seen;
                Change::Task(entry.key.clone())
            }
            StreamResponse::Message(m) => {
                let Some(task_id) = m.task_id.clone() else {
                    return Change::Nothing;
                };
                let entry = self.entry(agent, &task_id, m.context_id.as_deref().unwrap_or(""), seen);
                let recovered = recovered(entry) | heard(entry);
                if entry
                    .history
                    .iter()
                    .any(|h| h.message_id == m.message_id && !m.message_id.is_empty())
                {
                    return if recovered {
                        Change::Task(entry.key.clone())
                    } else {
                        Change::Nothing
                    };
                }
                let mut m = m;
                compact(&mut m);
                entry.history.push(m);
                let cut = entry.history.len().saturating_sub(limits.history);
                entry.history.drain(..cut);
                entry.updated = seen;
                Change::Task(entry.key.clone())
            }
        }
    }
}

/// The agent's one copy of `text`, made on first sight.
fn intern(seen: &mut HashSet<Arc<str>>, text: &str) -> Arc<str> {
    if let Some(held) = seen.get(text) {
        return held.clone();
    }
    let held: Arc<str> = text.into();
    seen.insert(held.clone());
    held
}

/// Whether a task was settled before an event, for `Store::recount_settled`.
enum Before {
    Known(bool),
    /// Not held yet: the id, to look for it afterwards.
    New(AgentId, String),
}

/// Clears the task's warning and not-found mark: the agent just told us about it. True if
/// there was one.
fn recovered(entry: &mut TaskEntry) -> bool {
    let had = entry.error.is_some() || entry.not_found;
    entry.error = None;
    entry.not_found = false;
    had
}

/// Gives back what decoding reserved and nothing will use: a list decoded from JSON grows to
/// room for four parts for the one a status message usually has (over 300 bytes a task).
fn compact(message: &mut Message) {
    message.parts.shrink_to_fit();
}

/// Whether the task is in a terminal state we have seen (not just created by a first event).
fn is_ended(entry: &TaskEntry) -> bool {
    !entry.timeline.is_empty() && entry.state().is_terminal()
}

/// A stream event ends a quiet spell. True if there was one.
fn heard(entry: &mut TaskEntry) -> bool {
    entry.quiet_since.take().is_some()
}

/// What taking a status did.
#[derive(Debug, PartialEq, Eq)]
enum StatusChange {
    /// Older than, or the same as, what we hold.
    Ignored,
    /// Same state, new text or time.
    Refreshed,
    /// A new state.
    Moved,
}

/// How far ahead of our clock an agent's timestamp may be and still order its statuses: more
/// is a wrong clock (or a status stamped in the year 2999 to freeze the task), and the status
/// is ordered by its arrival instead (README, "Security").
const MAX_CLOCK_AHEAD: SignedDuration = SignedDuration::from_mins(5);

/// Where a status goes among a task's statuses: the agent's timestamp, unless it is more than
/// `MAX_CLOCK_AHEAD` ahead of `seen`, its arrival; arrival when it has none.
fn order_time(status: &TaskStatus, seen: Timestamp) -> Timestamp {
    match status.timestamp {
        Some(at) if at <= seen.saturating_add(MAX_CLOCK_AHEAD).unwrap_or(seen) => at,
        _ => seen,
    }
}

/// Takes a status unless it is older than the one held. The rules (module docs): a terminal
/// state is final and never discarded as older; statuses the agent stamped are ordered by their
/// stamps (clamped by `order_time`); one without a stamp is placed by its arrival, which cannot
/// be compared with a stamp, so on a task the agent stamps it changes the state only to end it.
fn set_status(entry: &mut TaskEntry, status: TaskStatus, seen: Timestamp, limit: usize) -> StatusChange {
    let (status, ids) = entry.without_repeated_ids(status);
    let current = &entry.status;
    let first = entry.timeline.is_empty();
    let at = order_time(&status, seen);
    // Terminal is final (spec section 3.1.1): a late snapshot cannot revive a task, nor turn
    // COMPLETED into FAILED; the same terminal state again may refresh its text.
    let revives = !first && current.state.is_terminal() && status.state != current.state;
    if revives && status.state.is_terminal() {
        tracing::warn!(task = %entry.key.id, held = %current.state.short_name(), got = %status.state.short_name(),
            "a terminal task was reported in another terminal state; kept the first");
    }
    // A live task that the agent says ended has ended, whatever the stamps say (a replica's
    // clock behind, a delivery retried late): only a repeat of the terminal state is ordered.
    let ends = status.state.is_terminal() && !current.state.is_terminal();
    // Stamps are compared with stamps and arrivals with arrivals; our clock and the agent's
    // are not compared (a stamped status after an unstamped SUBMITTED is taken).
    let comparable = status.timestamp.is_some() == current.timestamp.is_some();
    let older = !ends && comparable && at < entry.status_at;
    // An unstamped status (a push payload, a returnImmediately SUBMITTED) on a task the agent
    // stamps cannot be placed among its statuses: it may say more of the same state, or end the
    // task, no more.
    let unplaced = status.timestamp.is_none() && entry.stamped && !ends && status.state != current.state;
    if !first && (older || revives || unplaced || (status == *current && ids == entry.status_ids)) {
        return StatusChange::Ignored;
    }
    entry.status_at = at;
    entry.stamped |= status.timestamp.is_some();
    let text = status.text();
    let state_moved = first || status.state != current.state;
    if state_moved {
        entry.state_since = at;
    }
    let last = entry.timeline.back();
    if last.is_none_or(|l| l.state != status.state || l.text != text) {
        // Most tasks are seen in one state or two: room for one, not the four a first push takes.
        if entry.timeline.capacity() == 0 {
            entry.timeline.reserve_exact(1);
        }
        entry.timeline.push_back(Transition {
            state: status.state.clone(),
            at,
            text,
        });
        while entry.timeline.len() > limit.max(1) {
            entry.timeline.pop_front();
            entry.timeline_dropped += 1;
        }
    }
    entry.status = status;
    entry.status_ids = ids;
    if let Some(m) = &mut entry.status.message {
        compact(m);
    }
    entry.updated = at.max(entry.updated);
    if state_moved && entry.state().is_terminal() {
        entry.error = None;
        // A finished task rarely grows again: give back what its lists reserved.
        entry.timeline.shrink_to_fit();
        entry.history.shrink_to_fit();
        entry.artifacts.shrink_to_fit();
    }
    if state_moved {
        StatusChange::Moved
    } else {
        StatusChange::Refreshed
    }
}

#[cfg(test)]
mod tests;
