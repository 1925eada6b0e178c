//! The reducer: how each event changes the store. Snapshots and stream events fill in a task as
//! far as the limits allow, agent events set what an agent's row shows, and every change is
//! reported as a `Change` (the rules that order statuses are in `status`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use jiff::Timestamp;

use super::index::Before;
use super::status::{StatusChange, set_status};
use super::types::RepeatedIds;
use super::{AgentEntry, Change, Cut, Limits, Store, TaskEntry, TaskKey};
use crate::a2a::{
    Artifact, Message, Metadata, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use crate::event::{AgentId, AgentInfo, Event, Health, LocalServer, TraceParent, WatchMode};

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

impl Store {
    pub fn apply(&mut self, event: Event) -> Change {
        let agent = event.agent();
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
        if !self.observers.is_empty() {
            let mut observers = std::mem::take(&mut self.observers);
            let moved = self.moved.take();
            for observer in &mut observers {
                observer.applied(self, agent, &change, moved.as_ref());
            }
            self.observers = observers;
        }
        change
    }

    fn apply_event(&mut self, event: Event) -> Change {
        match event {
            Event::Info { agent, info } => self.set_info(agent, info),
            Event::Health { agent, health } => {
                let reconnect = matches!(health, Health::Reconnecting { .. });
                let change = self.set_on_agent(agent, |a| &mut a.health, health);
                if reconnect && change != Change::Nothing {
                    self.agents[agent].reconnects += 1;
                }
                change
            }
            Event::Snapshot { agent, task, seen } => {
                self.saw_event(agent, seen);
                let before = self.indexed(agent, &task.id);
                let change = self.apply_snapshot(agent, task, seen);
                self.reindex_moved(&change, before);
                change
            }
            Event::Update { agent, event, seen } => {
                self.saw_event(agent, seen);
                let before = event.task_id().and_then(|id| self.indexed(agent, id));
                let change = self.apply_update(agent, event, seen);
                self.reindex_moved(&change, before);
                change
            }
            Event::Watching { agent, task, mode } => self.set_watching(agent, &task, mode),
            Event::PushRefused { agent } => self.count_on_agent(agent, |a| &mut a.push_refused),
            Event::EventsMissed { agent } => self.count_on_agent(agent, |a| &mut a.missed_events),
            Event::Busy { agent, server } => self.count_on_agent(agent, |a| match server {
                LocalServer::Tap => &mut a.tap_busy,
                LocalServer::Push => &mut a.push_busy,
            }),
            Event::TapSignedCard { agent, card } => self.set_on_agent(agent, |a| &mut a.tap_signed_card, Some(card)),
            Event::ListingCut { agent, cut } => self.set_on_agent(agent, |a| &mut a.listing_cut, cut),
            Event::NotFound {
                agent,
                task,
                message,
                seen,
            } => self.mark_not_found(agent, &task, message, seen),
            Event::Tapped {
                agent,
                task,
                seen,
                trace,
            } => self.mark_tapped(agent, &task, seen, trace),
            Event::Quiet { agent, task, since } => self.set_on_task(agent, &task, |t| &mut t.quiet_since, Some(since)),
            Event::TaskError { agent, task, message } => {
                self.set_on_task(agent, &task, |t| &mut t.error, Some(message))
            }
            Event::Action {
                agent,
                action,
                outcome,
                call,
            } => {
                self.actions.insert(action, (agent, outcome, call));
                Change::Action(action)
            }
        }
    }

    /// The agent's card as read: a new name can reorder the by-agent view.
    fn set_info(&mut self, agent: AgentId, info: AgentInfo) -> Change {
        match self.agents.get_mut(agent) {
            Some(a) if a.info.as_ref() != Some(&info) => {
                self.journal_overflowed = true;
                if !a.named_by_user && !info.name.is_empty() {
                    a.name = info.name.clone();
                }
                a.info = Some(info);
                Change::Agent(agent)
            }
            _ => Change::Nothing,
        }
    }

    /// Sets one thing shown on the agent's row; a change only when it differs.
    fn set_on_agent<T: PartialEq>(
        &mut self,
        agent: AgentId,
        field: impl FnOnce(&mut AgentEntry) -> &mut T,
        value: T,
    ) -> Change {
        match self.agents.get_mut(agent).map(field) {
            Some(held) if *held != value => {
                *held = value;
                Change::Agent(agent)
            }
            _ => Change::Nothing,
        }
    }

    /// Sets one mark of a task we hold (never creates one); a change only when it differs.
    fn set_on_task<T: PartialEq>(
        &mut self,
        agent: AgentId,
        task: &str,
        field: impl FnOnce(&mut TaskEntry) -> &mut T,
        value: T,
    ) -> Change {
        let Some(t) = self.tasks.get_mut(agent).and_then(|m| m.get_mut(task)) else {
            return Change::Nothing;
        };
        let held = field(t);
        if *held == value {
            return Change::Nothing;
        }
        *held = value;
        Change::Task(t.key.clone())
    }

    /// When an agent last sent a task snapshot or update: the latest seen, whatever order they
    /// are applied in.
    fn saw_event(&mut self, agent: AgentId, seen: Timestamp) {
        if let Some(a) = self.agents.get_mut(agent) {
            a.last_event = a.last_event.max(Some(seen));
        }
    }

    /// How a task we hold is watched now, and how many streams its agent has open.
    fn set_watching(&mut self, agent: AgentId, task: &str, mode: WatchMode) -> Change {
        match self.tasks.get_mut(agent).and_then(|m| m.get_mut(task)) {
            Some(t) if t.watch != Some(mode) => {
                if let Some(a) = self.agents.get_mut(agent) {
                    let streaming = |m: Option<WatchMode>| usize::from(m == Some(WatchMode::Streaming));
                    a.streams = (a.streams + streaming(Some(mode))).saturating_sub(streaming(t.watch));
                }
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

    /// The agent does not know the task (any more).
    fn mark_not_found(&mut self, agent: AgentId, task: &str, message: String, seen: Timestamp) -> Change {
        let entry = self.entry(agent, task, "", seen);
        if entry.not_found && entry.error.as_deref() == Some(&message) {
            Change::Nothing
        } else {
            entry.not_found = true;
            entry.error = Some(message);
            Change::Task(entry.key.clone())
        }
    }

    /// A row from the first word of it: what the planner saw of the task follows.
    fn mark_tapped(&mut self, agent: AgentId, task: &str, seen: Timestamp, trace: Option<TraceParent>) -> Change {
        let entry = self.entry(agent, task, "", seen);
        if entry.planner_trace.is_none() {
            entry.planner_trace = trace.map(Box::new);
        }
        if entry.tapped {
            Change::Nothing
        } else {
            entry.tapped = true;
            Change::Task(entry.key.clone())
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
                planner_trace: None,
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
            StreamResponse::StatusUpdate(update) => self.apply_status_update(agent, update, seen),
            StreamResponse::ArtifactUpdate(update) => self.apply_artifact_update(agent, update, seen),
            StreamResponse::Message(m) => self.apply_message(agent, m, seen),
        }
    }

    fn apply_status_update(&mut self, agent: AgentId, update: TaskStatusUpdateEvent, seen: Timestamp) -> Change {
        let limits = self.limits.clone();
        let TaskStatusUpdateEvent {
            task_id,
            context_id,
            status,
            metadata,
            ..
        } = update;
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

    fn apply_artifact_update(&mut self, agent: AgentId, update: TaskArtifactUpdateEvent, seen: Timestamp) -> Change {
        let limits = self.limits.clone();
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

    fn apply_message(&mut self, agent: AgentId, m: Message, seen: Timestamp) -> Change {
        let limits = self.limits.clone();
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

/// The agent's one copy of `text`, made on first sight.
fn intern(seen: &mut HashSet<Arc<str>>, text: &str) -> Arc<str> {
    if let Some(held) = seen.get(text) {
        return held.clone();
    }
    let held: Arc<str> = text.into();
    seen.insert(held.clone());
    held
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
pub(super) fn compact(message: &mut Message) {
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
