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
//!
//! The store's parts, each in its own file: `types` (what it holds and hands out), `reduce` (how
//! an event changes it), `status` (the status ordering rules above), `index` (the counts, waiting
//! sets and journal kept as tasks move), `ids` (the sorted task ids) and `query` (views over it).

mod ids;
mod index;
pub mod query;
mod reduce;
mod status;
pub mod tree;
mod types;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;

use crate::a2a::shown::ShownUrl;
use crate::event::{ActionId, ActionOutcome, AgentId, Call, Health};

pub use types::{AgentEntry, Change, Counts, Cut, Journal, Limits, Move, Observer, TaskEntry, TaskKey, Transition};

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
    /// What became of the actions the user took, by id, and the call each made (if one was sent).
    actions: HashMap<ActionId, (AgentId, ActionOutcome, Option<Box<Call>>)>,
    /// Tasks changed since the views last looked, so they move only those.
    journal: Vec<TaskKey>,
    /// Too much changed (or an agent was renamed): views rebuild.
    journal_overflowed: bool,
    pub limits: Limits,
    /// Told of every event applied (`observe`), with the state move it made (`moved`).
    /// Metrics and traces, each told of every event (`Observer`).
    observers: Vec<Box<dyn Observer>>,
    moved: Option<Move>,
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
                    group: None,
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
                    reconnects: 0,
                    streams: 0,
                    last_event: None,
                })
                .collect(),
            ..Store::default()
        }
    }

    /// From now on, `observer` is told of every event applied (`Observer`), after those
    /// already observing.
    pub fn observe(&mut self, observer: Box<dyn Observer>) {
        self.observers.push(observer);
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
        self.actions.get(&id).map(|(_, outcome, _)| outcome)
    }

    /// The call an action made, once its outcome is known.
    pub fn call(&self, id: ActionId) -> Option<&Call> {
        self.actions.get(&id)?.2.as_deref()
    }

    pub fn len(&self) -> usize {
        self.tasks.iter().map(HashMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.iter().all(HashMap::is_empty)
    }

    /// The agents' groups (the config's `group`) in the order they are first named, and `None`
    /// last for the agents in none; empty when no agent has a group.
    pub fn groups(&self) -> Vec<Option<&str>> {
        let mut groups: Vec<Option<&str>> = Vec::new();
        if self.agents.iter().all(|a| a.group.is_none()) {
            return groups;
        }
        for group in self.agents.iter().map(|a| a.group.as_deref()) {
            if group.is_some() && !groups.contains(&group) {
                groups.push(group);
            }
        }
        if self.agents.iter().any(|a| a.group.is_none()) {
            groups.push(None);
        }
        groups
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
}

#[cfg(test)]
mod tests;
