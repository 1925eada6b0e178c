//! Views of the store: which tasks, in what order. The filter language is the one typed
//! after `/`: words match anywhere; `state:`, `agent:`, `group:`, `context:` and `task:` narrow
//! to one field; `!` negates a term. `state:` takes a class (`active`, `interrupted`, `terminal`,
//! `unknown`, `waiting`) or a state name (`input-required`, `COMPLETED`). `agent:` and `group:`
//! take a part of the name, or the whole of one: then only that one (`agent:api` is not
//! `api-2` when an agent is called `api`), so the agents view can narrow the table to one agent.

use std::collections::{BTreeSet, HashMap};

use crate::a2a::{StateClass, TaskState};

use super::{Store, TaskEntry, TaskKey};
use crate::event::AgentId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// Waiting on a person first, then active, unknown, finished; newest first within each.
    #[default]
    StateClass,
    Agent,
    /// Last update, newest first.
    Updated,
    /// Time in the current state, longest first.
    Age,
}

impl SortBy {
    pub const ALL: [SortBy; 4] = [SortBy::StateClass, SortBy::Agent, SortBy::Updated, SortBy::Age];

    pub fn label(self) -> &'static str {
        match self {
            SortBy::StateClass => "waiting first",
            SortBy::Agent => "agent",
            SortBy::Updated => "updated",
            SortBy::Age => "age in state",
        }
    }

    pub fn next(self) -> SortBy {
        let i = Self::ALL.iter().position(|s| *s == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Any,
    State,
    Agent,
    Group,
    Context,
    Task,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    field: Field,
    value: String,
    negated: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    terms: Vec<Term>,
    text: String,
}

impl Filter {
    pub fn parse(text: &str) -> Filter {
        let terms = text
            .split_whitespace()
            .filter_map(|word| {
                let (negated, word) = match word.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, word),
                };
                let (field, value) = match word.split_once(':') {
                    Some(("state" | "s", v)) => (Field::State, v),
                    Some(("agent" | "a", v)) => (Field::Agent, v),
                    Some(("group" | "g", v)) => (Field::Group, v),
                    Some(("context" | "ctx" | "c", v)) => (Field::Context, v),
                    Some(("task" | "id" | "t", v)) => (Field::Task, v),
                    _ => (Field::Any, word),
                };
                (!value.is_empty()).then(|| Term {
                    field,
                    value: value.to_lowercase(),
                    negated,
                })
            })
            .collect();
        Filter {
            terms,
            text: text.trim().to_string(),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn matches(&self, store: &Store, t: &TaskEntry) -> bool {
        self.terms
            .iter()
            .all(|term| term_matches(term, store, t) != term.negated)
    }
}

fn state_matches(value: &str, state: &TaskState) -> bool {
    let class = match value {
        "active" => Some(StateClass::Active),
        "interrupted" | "waiting" => Some(StateClass::Interrupted),
        "terminal" | "done" | "finished" => Some(StateClass::Terminal),
        "unknown" | "error" => Some(StateClass::Unknown),
        _ => None,
    };
    match class {
        Some(c) => state.class() == c,
        None => {
            let name = state.short_name().to_lowercase();
            let wanted = value.replace('-', "_");
            name == wanted || TaskState::from_name(value) == *state
        }
    }
}

/// A name term (`agent:`, `group:`, already lower case) against one name: the whole of a name
/// picks that one alone, else any part matches. `names` are all the names of that kind, looked
/// at only for a name that contains the term without being it.
fn name_matches<'a>(term: &str, name: &str, mut names: impl Iterator<Item = &'a str>) -> bool {
    let name = name.to_lowercase();
    name == term || (name.contains(term) && !names.any(|other| other.to_lowercase() == term))
}

/// Whether an agent's name and group match a term of the filter: what the agents view shows.
pub fn agent_matches(filter: &Filter, store: &Store, agent: AgentId) -> bool {
    filter.terms.iter().all(|term| {
        let matched = match term.field {
            Field::Agent => agent_name_matches(&term.value, store, agent),
            Field::Group => group_matches(&term.value, store, agent),
            Field::Any => {
                agent_name_matches(&term.value, store, agent)
                    || group_matches(&term.value, store, agent)
                    || store.agents.get(agent).is_some_and(|a| a.health.label() == term.value)
            }
            // Terms of tasks say nothing of an agent; they narrow the table it leads to.
            Field::State | Field::Context | Field::Task => true,
        };
        matched != term.negated
    })
}

fn agent_name_matches(v: &str, store: &Store, agent: AgentId) -> bool {
    let names = store.agents.iter().map(|a| a.name.as_str());
    name_matches(v, store.agent_name(agent), names)
}

fn group_matches(v: &str, store: &Store, agent: AgentId) -> bool {
    let groups = store.agents.iter().filter_map(|a| a.group.as_deref());
    (store.agents.get(agent).and_then(|a| a.group.as_deref())).is_some_and(|group| name_matches(v, group, groups))
}

fn term_matches(term: &Term, store: &Store, t: &TaskEntry) -> bool {
    let v = term.value.as_str();
    let agent = || store.agent_name(t.key.agent).to_lowercase();
    match term.field {
        Field::State => state_matches(v, t.state()),
        Field::Agent => agent_name_matches(v, store, t.key.agent),
        Field::Group => group_matches(v, store, t.key.agent),
        Field::Context => t.context.to_lowercase().contains(v),
        Field::Task => t.key.id.to_lowercase().contains(v),
        Field::Any => {
            state_matches(v, t.state())
                || agent().contains(v)
                || t.key.id.to_lowercase().contains(v)
                || t.context.to_lowercase().contains(v)
                || t.status.text().to_lowercase().contains(v)
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewSpec {
    pub sort: SortBy,
    pub filter: Filter,
    pub hide_terminal: bool,
}

impl ViewSpec {
    /// Whether the view shows a task: it matches the filter, and is not a finished one hidden.
    pub fn shows(&self, store: &Store, t: &TaskEntry) -> bool {
        !(self.hide_terminal && t.class() == StateClass::Terminal) && self.filter.matches(store, t)
    }
}

fn class_rank(c: StateClass) -> u8 {
    match c {
        StateClass::Interrupted => 0,
        StateClass::Active => 1,
        StateClass::Unknown => 2,
        StateClass::Terminal => 3,
    }
}

/// Where a task sorts in a view: a key that orders like the view, so a task can be moved by
/// taking out its old key and putting in its new one (O(log n)), never a full sort.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SortKey {
    class: u8,
    /// The agent's place in name order (by-agent view only).
    agent: u32,
    /// Nanoseconds: negated for "newest first".
    time: i128,
    /// Ties broken by key, so the order is total and rows never swap places at random.
    key: TaskKey,
}

/// The rows of one view, kept in order as tasks change.
#[derive(Debug, Clone, Default)]
pub struct OrderedView {
    spec: ViewSpec,
    order: BTreeSet<SortKey>,
    placed: HashMap<TaskKey, SortKey>,
    agent_rank: Vec<u32>,
}

impl OrderedView {
    pub fn build(store: &Store, spec: &ViewSpec) -> OrderedView {
        let mut by_name: Vec<AgentId> = (0..store.agents.len()).collect();
        by_name.sort_by(|a, b| store.agent_name(*a).cmp(store.agent_name(*b)));
        let mut agent_rank = vec![0; by_name.len()];
        for (rank, agent) in by_name.into_iter().enumerate() {
            agent_rank[agent] = rank as u32;
        }
        let mut view = OrderedView {
            spec: spec.clone(),
            agent_rank,
            ..OrderedView::default()
        };
        for t in store.tasks() {
            view.place(store, t);
        }
        view
    }

    pub fn spec(&self) -> &ViewSpec {
        &self.spec
    }

    fn sort_key(&self, t: &TaskEntry) -> SortKey {
        let newest = -t.updated.as_nanosecond();
        let (class, agent, time) = match self.spec.sort {
            SortBy::StateClass => (class_rank(t.class()), 0, newest),
            SortBy::Agent => (0, self.agent_rank.get(t.key.agent).copied().unwrap_or(u32::MAX), newest),
            SortBy::Updated => (0, 0, newest),
            SortBy::Age => (0, 0, t.state_since.as_nanosecond()),
        };
        SortKey {
            class,
            agent,
            time,
            key: t.key.clone(),
        }
    }

    fn place(&mut self, store: &Store, t: &TaskEntry) {
        if self.spec.shows(store, t) {
            let key = self.sort_key(t);
            self.order.insert(key.clone());
            self.placed.insert(t.key.clone(), key);
        }
    }

    /// Moves the tasks that changed to where they now belong (or out of the view).
    pub fn update<'a>(&mut self, store: &Store, changed: impl IntoIterator<Item = &'a TaskKey>) {
        for key in changed {
            if let Some(old) = self.placed.remove(key) {
                self.order.remove(&old);
            }
            if let Some(t) = store.task(key) {
                self.place(store, t);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The rows from `offset` on.
    pub fn from(&self, offset: usize) -> impl Iterator<Item = &TaskKey> {
        self.order.iter().skip(offset).map(|k| &k.key)
    }

    /// The row a task is on, if the view shows it.
    pub fn position(&self, key: &TaskKey) -> Option<usize> {
        let placed = self.placed.get(key)?;
        Some(self.order.range(..placed).count())
    }
}
