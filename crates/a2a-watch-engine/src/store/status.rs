//! Which status a task takes, by the ordering rules in the store's module docs: a terminal state
//! is final (spec section 3.1.1), stamps are ordered by stamps clamped to our clock, and an
//! unstamped status on a stamped task may only end it (README, "Security").

use jiff::{SignedDuration, Timestamp};

use super::reduce::compact;
use super::{TaskEntry, Transition};
use crate::a2a::TaskStatus;

/// What taking a status did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum StatusChange {
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
pub(super) fn set_status(entry: &mut TaskEntry, status: TaskStatus, seen: Timestamp, limit: usize) -> StatusChange {
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
