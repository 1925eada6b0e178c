//! Prometheus metrics (issue 22, README "Monitoring stack"): a registry the store feeds as it
//! applies events (`store::Observer`), so each event costs O(1), or O(log n) for a task that
//! starts or stops waiting on a person, and a scrape costs the series, never the tasks. The names
//! and labels are a contract that dashboards and alert rules depend on (issue 22, "Prometheus"):
//! `agent` is the name the user gave, else the card's, never a URL; no task or context id is a
//! label. `render` writes the exposition formats, `serve` answers `GET /metrics`.

mod render;
pub mod serve;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use jiff::Timestamp;

pub use render::Format;

use crate::a2a::TaskState;
use crate::event::{AgentId, Health};
use crate::store::{AgentEntry, Change, Move, Observer, Store};
use crate::traces::Queue;

/// The upper bounds of `a2a_watch_wait_duration_seconds`, in seconds (issue 22): from a quick
/// answer to a question left overnight.
pub const WAIT_BUCKETS: [f64; 12] = [
    5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, 7200.0, 14400.0,
];

/// The `state` label values: each state's lowercase short name, UNSPECIFIED and names we do
/// not know being `unknown`.
const STATES: [&str; 9] = [
    "submitted",
    "working",
    "input_required",
    "auth_required",
    "completed",
    "failed",
    "canceled",
    "rejected",
    "unknown",
];

/// The states a person answers, with their place in `STATES`: the ones whose waits are measured.
const WAITING: [usize; 2] = [2, 3];

/// Where a state's label is in `STATES`.
fn state_index(state: &TaskState) -> usize {
    match state {
        TaskState::Submitted => 0,
        TaskState::Working => 1,
        TaskState::InputRequired => 2,
        TaskState::AuthRequired => 3,
        TaskState::Completed => 4,
        TaskState::Failed => 5,
        TaskState::Canceled => 6,
        TaskState::Rejected => 7,
        TaskState::Unspecified | TaskState::Unknown(_) => 8,
    }
}

/// Where a waiting state is in `WAITING`, if it is one.
fn waiting_index(state: usize) -> Option<usize> {
    WAITING.iter().position(|&s| s == state)
}

/// Observations in `WAIT_BUCKETS`, not cumulative (rendering sums them).
#[derive(Debug, Default, Clone, PartialEq)]
struct Histogram {
    buckets: [u64; WAIT_BUCKETS.len()],
    /// Above the last bound: counted only in `count`.
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(i) = WAIT_BUCKETS.iter().position(|&le| seconds <= le) {
            self.buckets[i] += 1;
        }
        self.count += 1;
        self.sum += seconds;
    }
}

/// What one agent's series say.
#[derive(Debug, Default)]
struct AgentSeries {
    /// The name the user gave, else the card's; `None` until one of them is known.
    name: Option<String>,
    /// The label until then: the agent's host and port, which is not a URL (no scheme, path,
    /// query or credential), so that an agent down from the start still has its `agent_up`.
    host: String,
    up: bool,
    /// `protocol` and `binding` of the card, once read.
    info: Option<(&'static str, &'static str)>,
    events: u64,
    reconnects: u64,
    push_refused: u64,
    /// Tasks per state (`STATES`); `None` for a state no task has been in.
    tasks: [Option<u64>; STATES.len()],
    /// The tasks waiting in each of `WAITING`, by since when: the oldest is the first.
    waiting: [BTreeSet<(Timestamp, Arc<str>)>; WAITING.len()],
    waits: [Histogram; WAITING.len()],
    /// Moves by (from, to) in `STATES`.
    transitions: BTreeMap<(usize, usize), u64>,
}

impl AgentSeries {
    fn new(agent: &AgentEntry) -> AgentSeries {
        let url = url::Url::parse(agent.url.as_str()).ok();
        let host = url.as_ref().and_then(|u| {
            let host = u.host_str()?;
            Some(u.port().map_or(host.to_string(), |port| format!("{host}:{port}")))
        });
        let mut series = AgentSeries {
            host: host.unwrap_or_else(|| "unnamed".into()),
            ..AgentSeries::default()
        };
        series.refresh(agent);
        series
    }

    /// What the agent's row says now: its name, health, card and counts.
    fn refresh(&mut self, agent: &AgentEntry) {
        self.name = agent.given_or_card_name().map(str::to_string);
        self.reconnects = agent.reconnects;
        // The card answered, and the listing or the streams do (`watch::agent`).
        self.up = matches!(agent.health, Health::Streaming | Health::Polling { .. });
        self.info = agent.info.as_ref().map(|i| (i.version.label(), i.binding.label()));
        self.push_refused = agent.push_refused;
    }

    /// A task's state move: the counts, the waiting sets, the waits ended and the transitions.
    fn moved(&mut self, moved: &Move) {
        let (to_state, to_since) = &moved.to;
        let to = state_index(to_state);
        if let Some((from_state, from_since)) = &moved.from {
            let from = state_index(from_state);
            let held = self.tasks[from].get_or_insert(0);
            *held = held.saturating_sub(1);
            if let Some(w) = waiting_index(from) {
                self.waiting[w].remove(&(*from_since, moved.key.id.clone()));
                // A second question in a row starts a new wait without ending the person's.
                if from_state != to_state {
                    let waited = to_since.duration_since(*from_since).as_secs_f64();
                    self.waits[w].observe(waited.max(0.0));
                }
            }
            if from_state != to_state {
                *self.transitions.entry((from, to)).or_default() += 1;
            }
        }
        *self.tasks[to].get_or_insert(0) += 1;
        if let Some(w) = waiting_index(to) {
            self.waiting[w].insert((*to_since, moved.key.id.clone()));
        }
    }
}

/// Every agent's series, and the traces' queue when spans are exported.
#[derive(Debug, Default)]
pub struct Registry {
    agents: Vec<AgentSeries>,
    /// `a2a_watch_otlp_dropped_total` reads its count at each scrape (with `--otlp` only).
    otlp: Option<Arc<Queue>>,
}

impl Registry {
    /// The series of `store`'s agents, before any task is seen.
    pub fn of(store: &Store) -> Registry {
        Registry {
            agents: store.agents.iter().map(AgentSeries::new).collect(),
            otlp: None,
        }
    }

    /// One event applied to `store` (`store::Observer`).
    pub fn applied(&mut self, store: &Store, agent: AgentId, change: &Change, moved: Option<&Move>) {
        let Some(series) = self.agents.get_mut(agent) else {
            return;
        };
        series.events += 1;
        if let (Change::Agent(id), Some(entry)) = (change, store.agents.get(agent))
            && *id == agent
        {
            series.refresh(entry);
        }
        if let Some(moved) = moved {
            series.moved(moved);
        }
    }
}

/// The registry, shared by the store that feeds it and the server that renders it.
#[derive(Debug, Clone, Default)]
pub struct Metrics(Arc<Mutex<Registry>>);

impl Metrics {
    /// Metrics of `store`'s agents, fed from now on by every event it applies.
    pub fn observe(store: &mut Store) -> Metrics {
        let metrics = Metrics(Arc::new(Mutex::new(Registry::of(store))));
        store.observe(Box::new(metrics.clone()));
        metrics
    }

    /// Adds `a2a_watch_otlp_dropped_total`: the spans `queue` dropped.
    pub fn count_otlp_drops(&self, queue: Arc<Queue>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).otlp = Some(queue);
    }

    /// The exposition at `now` (the waiting gauges count up to it).
    pub fn render(&self, now: Timestamp, format: Format) -> String {
        let registry = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        render::render(&registry, now, format)
    }
}

impl Observer for Metrics {
    fn applied(&mut self, store: &Store, agent: AgentId, change: &Change, moved: Option<&Move>) {
        let mut registry = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        registry.applied(store, agent, change, moved);
    }
}
