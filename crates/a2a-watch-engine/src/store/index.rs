//! The indexes the store keeps as tasks move, so the header, the inbox, the approvals pane and
//! "all settled" cost nothing per frame: counts per agent and class, the waiting and approval
//! sets ordered by since when, the count of unsettled tasks, and the journal of changed tasks the
//! views read.

use jiff::Timestamp;

use super::{Change, Counts, Journal, Move, Store, TaskKey};
use crate::a2a::{StateClass, TaskState};
use crate::event::AgentId;

/// Changed tasks remembered between two looks of the views; more means a rebuild.
const JOURNAL_MAX: usize = 8192;

/// Whether a task was settled before an event, for `Store::recount_settled`.
pub(super) enum Before {
    Known(bool),
    /// Not held yet: the id, to look for it afterwards.
    New(AgentId, String),
}

impl Store {
    pub(super) fn settled(&self, agent: AgentId, id: &str) -> Option<bool> {
        let t = self.tasks.get(agent)?.get(id)?;
        Some(t.class() == StateClass::Terminal || t.not_found)
    }

    /// Keeps `unsettled` after an event on a task that was `before` it.
    pub(super) fn recount_settled(&mut self, change: &Change, before: Option<Before>) {
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
    pub(super) fn indexed(&self, agent: AgentId, id: &str) -> Option<(TaskState, Timestamp)> {
        self.tasks
            .get(agent)?
            .get(id)
            .filter(|t| !t.timeline.is_empty())
            .map(|t| (t.state().clone(), t.state_since))
    }

    /// Only a state move can change where a task is counted or whether it waits.
    pub(super) fn reindex_moved(&mut self, change: &Change, before: Option<(TaskState, Timestamp)>) {
        if let Change::State(key) = change {
            let key = key.clone();
            self.reindex(&key, before);
        }
    }

    /// Moves a task between the counts and the waiting list after its state changed.
    pub(super) fn reindex(&mut self, key: &TaskKey, before: Option<(TaskState, Timestamp)>) {
        let Some(now) = self.indexed(key.agent, &key.id) else {
            return;
        };
        if before.as_ref() == Some(&now) {
            return;
        }
        if self.counts.len() <= key.agent {
            self.counts.resize(key.agent + 1, Counts::default());
        }
        if let Some((state, since)) = &before {
            self.counts[key.agent].remove(state);
            self.waiting.remove(&(*since, key.clone()));
            self.approvals.remove(&(*since, key.clone()));
        }
        self.counts[key.agent].add(&now.0);
        if now.0.is_interrupted() {
            self.waiting.insert((now.1, key.clone()));
        }
        if now.0 == TaskState::AuthRequired {
            self.approvals.insert((now.1, key.clone()));
        }
        // Kept only for an observer, which `apply` hands it to.
        if !self.observers.is_empty() {
            self.moved = Some(Move {
                key: key.clone(),
                from: before,
                to: now,
            });
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

    pub(super) fn note(&mut self, change: &Change) {
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
}
