//! Views of the store: which tasks, in what order. The filter language is the one typed
//! after `/`: words match anywhere; `state:`, `agent:`, `context:` and `task:` narrow to one
//! field; `!` negates a term. `state:` takes a class (`active`, `interrupted`, `terminal`,
//! `unknown`, `waiting`) or a state name (`input-required`, `COMPLETED`).

use std::cmp::Ordering;

use crate::a2a::{StateClass, TaskState};

use super::{Store, TaskEntry, TaskKey};

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

fn term_matches(term: &Term, store: &Store, t: &TaskEntry) -> bool {
    let v = term.value.as_str();
    let agent = || store.agent_name(t.key.agent).to_lowercase();
    match term.field {
        Field::State => state_matches(v, t.state()),
        Field::Agent => agent().contains(v),
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

fn class_rank(c: StateClass) -> u8 {
    match c {
        StateClass::Interrupted => 0,
        StateClass::Active => 1,
        StateClass::Unknown => 2,
        StateClass::Terminal => 3,
    }
}

fn compare(store: &Store, sort: SortBy, a: &TaskEntry, b: &TaskEntry) -> Ordering {
    let newest = || b.updated.cmp(&a.updated);
    let primary = match sort {
        SortBy::StateClass => class_rank(a.class()).cmp(&class_rank(b.class())).then_with(newest),
        SortBy::Agent => store
            .agent_name(a.key.agent)
            .cmp(store.agent_name(b.key.agent))
            .then_with(newest),
        SortBy::Updated => newest(),
        SortBy::Age => a.state_since.cmp(&b.state_since),
    };
    // Ties broken by key, so the order is total and rows never swap places at random.
    primary.then_with(|| a.key.cmp(&b.key))
}

impl Store {
    /// The rows of a view, in order.
    pub fn rows(&self, spec: &ViewSpec) -> Vec<TaskKey> {
        let mut rows: Vec<&TaskEntry> = self
            .tasks()
            .filter(|t| !(spec.hide_terminal && t.class() == StateClass::Terminal))
            .filter(|t| spec.filter.matches(self, t))
            .collect();
        rows.sort_by(|a, b| compare(self, spec.sort, a, b));
        rows.into_iter().map(|t| t.key.clone()).collect()
    }
}
