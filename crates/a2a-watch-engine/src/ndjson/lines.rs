//! The lines `--json` prints, made from the store's changes: one line per change, agent health
//! lines included. Headless mode prints them and recordings carry them (`record`).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde::Serialize;

use super::{EventLine, TaskLine, push_line};
use crate::a2a::StreamResponse;
use crate::event::{Event, SignedCardAtTap};
use crate::store::{Change, Store, TaskEntry, TaskKey};

/// What `--json` prints: one line per change, and a snapshot that says again what its task's
/// last line said prints nothing. Recordings carry the same lines (`record`).
#[derive(Default)]
pub struct JsonLines {
    /// What each task's last line said.
    said: HashMap<TaskKey, u64>,
}

impl JsonLines {
    /// Applies one event and appends its line, if it makes one.
    pub fn take(&mut self, store: &mut Store, ev: Event, out: &mut Vec<u8>) -> Change {
        let kind = event_kind(&ev);
        let change = store.apply(ev);
        match &change {
            Change::Nothing | Change::Action(_) => {}
            // The card's details ride along on the next health line.
            Change::Agent(_) if kind == "info" => {}
            Change::Agent(id) => {
                let a = &store.agents[*id];
                let line = HealthLine {
                    agent: &a.name,
                    health: a.health.label(),
                    detail: a.health.detail(),
                    protocol: a
                        .info
                        .as_ref()
                        .map(|i| format!("{} {}", i.version.label(), i.binding.label())),
                    url: a.url.as_str(),
                    listing_cut: a.listing_cut,
                    push_refused: a.push_refused,
                    tap_busy: a.tap_busy,
                    push_busy: a.push_busy,
                    tap_signed_card: a.tap_signed_card,
                    push_off: a.info.as_ref().and_then(|i| i.push_off.as_deref()),
                    card_signature: a
                        .info
                        .as_ref()
                        .and_then(|i| i.card_signature.as_ref())
                        .map(|s| s.mark()),
                    missed_events: a.missed_events,
                };
                push_line(out, &line);
            }
            // How a task is watched is the dashboard's business, not a change of the task.
            // Nor is a tap's first word of it: the task's own line follows, saying it was tapped.
            Change::Task(_) if matches!(kind, "watching" | "quiet" | "tapped") => {}
            Change::Task(key) | Change::State(key) => {
                if let Some(t) = store.task(key) {
                    let now = what_it_says(t);
                    let repeat = self.said.get(key) == Some(&now);
                    self.said.insert(key.clone(), now);
                    if !(repeat && kind == "task") {
                        push_task_line(out, store, t, kind);
                    }
                }
            }
        }
        change
    }
}

/// A task's state, status text and whether it was tapped, as a fingerprint: keeping the text itself for every task
/// would cost its length per task (issue 11, memory of quiet tasks).
fn what_it_says(task: &TaskEntry) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    task.state().hash(&mut hasher);
    task.status.text().hash(&mut hasher);
    // A task listed first, then seen through a tap, says something new: that it was tapped.
    task.tapped.hash(&mut hasher);
    hasher.finish()
}

#[derive(Serialize)]
struct HealthLine<'a> {
    agent: &'a str,
    health: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<String>,
    url: &'a str,
    /// The last listing stopped at the page limit with more offered.
    listing_cut: bool,
    /// Push deliveries refused for a missing or wrong token.
    #[serde(skip_serializing_if = "is_zero")]
    push_refused: u64,
    /// Requests the agent's tap, and the push receiver, answered 503 (too many connections).
    #[serde(skip_serializing_if = "is_zero")]
    tap_busy: u64,
    #[serde(skip_serializing_if = "is_zero")]
    push_busy: u64,
    /// What the tap did with the agent's signed card: passed through (the planner goes around
    /// the tap) or stripped.
    #[serde(skip_serializing_if = "Option::is_none")]
    tap_signed_card: Option<SignedCardAtTap>,
    /// Why the agent is not asked to push.
    #[serde(skip_serializing_if = "Option::is_none")]
    push_off: Option<&'a str>,
    /// `✓ kid` or `✗ why` for a signed card (A2A 1.0 §8.4); absent for an unsigned one.
    #[serde(skip_serializing_if = "Option::is_none")]
    card_signature: Option<String>,
    /// Gaps in a subscription's event generations (A2A 1.1, draft), each checked with GetTask.
    #[serde(skip_serializing_if = "is_zero")]
    missed_events: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn push_task_line(out: &mut Vec<u8>, store: &Store, task: &TaskEntry, event: &'static str) {
    let line = TaskLine {
        task: task.key.id.to_string(),
        context: task.context.to_string(),
        state: task.state().clone(),
        text: task.status.text(),
        at: Some(task.status.timestamp.unwrap_or(task.updated)),
    };
    let mut line = EventLine::new(store.agent_name(task.key.agent), event, &line);
    line.tapped = task.tapped;
    if event == "error" || event == "not_found" {
        line.text = task.error.clone().unwrap_or_default();
    }
    push_line(out, &line);
}

fn event_kind(ev: &Event) -> &'static str {
    match ev {
        Event::Snapshot { .. } => "task",
        Event::Update { event, .. } => match event {
            StreamResponse::Task(_) => "task",
            StreamResponse::Message(_) => "message",
            StreamResponse::StatusUpdate(_) => "status",
            StreamResponse::ArtifactUpdate(_) => "artifact",
        },
        Event::TaskError { .. } => "error",
        Event::NotFound { .. } => "not_found",
        Event::Quiet { .. } => "quiet",
        Event::Tapped { .. } => "tapped",
        Event::ListingCut { .. } => "listing",
        Event::Watching { .. } => "watching",
        Event::Action { .. } => "action",
        Event::Info { .. } => "info",
        Event::Health { .. }
        | Event::PushRefused { .. }
        | Event::Busy { .. }
        | Event::TapSignedCard { .. }
        | Event::EventsMissed { .. } => "agent",
    }
}
