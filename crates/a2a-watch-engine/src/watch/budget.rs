//! How often one agent is asked about its quiet streams (issue 20, "Stalls, re-checked"): every
//! quiet stream is re-checked with GetTask, whatever the listing says (an index that updates
//! late keeps showing a finished task WORKING), and a fleet of them is spread over time. One
//! schedule per agent, no timer of its own: a watcher whose stream went quiet takes the next
//! free slot and waits for it on the timer it already has.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// GetTasks a second per agent for quiet streams, unless the config's `check_rate` says.
pub const DEFAULT_CHECK_RATE: f64 = 10.0;

/// Slots for quiet-stream GetTasks, `1 / rate` apart: a token bucket that holds one token, so
/// a thousand streams that went quiet together are asked about one after another, never at once.
#[derive(Debug)]
pub(crate) struct CheckBudget {
    interval: Duration,
    next_free: Mutex<Instant>,
}

impl CheckBudget {
    /// `rate` GetTasks a second (positive and finite: `cli::specs` keeps the default otherwise).
    pub fn new(rate: f64) -> CheckBudget {
        CheckBudget {
            interval: Duration::from_secs_f64(1.0 / rate),
            next_free: Mutex::new(Instant::now()),
        }
    }

    /// Takes the first free slot from now on: when the caller may make its GetTask. O(1).
    pub fn take_slot(&self) -> Instant {
        let now = Instant::now();
        let mut next_free = self.next_free.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = (*next_free).max(now);
        *next_free = slot + self.interval;
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_taken_together_are_spread_at_the_rate_and_idle_time_is_not_saved_up() {
        let budget = CheckBudget::new(10.0);
        let start = Instant::now();
        let slots: Vec<Instant> = (0..5).map(|_| budget.take_slot()).collect();
        for (i, pair) in slots.windows(2).enumerate() {
            assert_eq!(pair[1] - pair[0], Duration::from_millis(100), "slot {i} to {}", i + 1);
        }
        assert!(slots[0] - start < Duration::from_millis(50), "the first is now");
        // A budget left unused does not allow a burst later.
        std::thread::sleep(Duration::from_millis(700));
        let later: Vec<Instant> = (0..2).map(|_| budget.take_slot()).collect();
        assert_eq!(later[1] - later[0], Duration::from_millis(100));
    }
}
