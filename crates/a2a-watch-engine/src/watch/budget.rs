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

/// Slots for quiet-stream GetTasks, handed out in groups: `per_group` slots at one instant, the
/// groups `per_group / rate` apart, so the rate holds and a thousand streams that went quiet
/// together are asked about a group at a time, never all at once. A group wakes its watchers on
/// one timer tick and their GetTasks share the wake-ups; the same checks one by one cost several
/// times the CPU on an idle machine (BENCHMARKS.md, section 5).
#[derive(Debug)]
pub(crate) struct CheckBudget {
    /// Where the groups' grid starts.
    epoch: Instant,
    per_group: u32,
    apart: Duration,
    next: Mutex<Group>,
}

/// The group that takes the next slot: when it is due and how many slots it has given.
#[derive(Debug)]
struct Group {
    at: Instant,
    taken: u32,
}

impl CheckBudget {
    /// `rate` GetTasks a second (positive and finite: `cli::specs` keeps the default otherwise),
    /// grouped by the second: `rate` rounded up at once, at most, and never less than one.
    pub fn new(rate: f64) -> CheckBudget {
        let per_group = rate.ceil().clamp(1.0, f64::from(u32::MAX)) as u32;
        let epoch = Instant::now();
        CheckBudget {
            epoch,
            per_group,
            apart: Duration::from_secs_f64(f64::from(per_group) / rate),
            next: Mutex::new(Group { at: epoch, taken: 0 }),
        }
    }

    /// Takes the first free slot from now on: when the caller may make its GetTask. O(1).
    pub fn take_slot(&self) -> Instant {
        let now = Instant::now();
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        // A group whose time has passed is over: unused slots are not saved up.
        if next.at + self.apart <= now {
            *next = Group { at: now, taken: 0 };
        }
        if next.taken == self.per_group {
            next.at += self.apart;
            next.taken = 0;
        }
        next.taken += 1;
        next.at.max(now)
    }

    /// How far apart the groups are.
    pub fn group_time(&self) -> Duration {
        self.apart
    }

    /// `at`, moved on to a grid of the groups' time, or of `finer` when that is shorter (at most
    /// one step later): watchers whose next check falls in the same step wake together, on one
    /// timer tick.
    pub fn on_grid(&self, at: Instant, finer: Duration) -> Instant {
        let step = self.apart.min(finer).as_secs_f64();
        if step <= 0.0 {
            return at;
        }
        let since = at.saturating_duration_since(self.epoch).as_secs_f64();
        self.epoch + Duration::from_secs_f64((since / step).ceil() * step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_in_groups_of_the_rate_a_second_and_idle_time_is_not_saved_up() {
        let budget = CheckBudget::new(10.0);
        let start = budget.epoch;
        let slots: Vec<Instant> = (0..25).map(|_| budget.take_slot()).collect();
        let group_of = |slot: &Instant| ((*slot - start).as_millis() + 50) / 1000;
        let groups: Vec<u128> = slots.iter().map(group_of).collect();
        assert_eq!(
            groups,
            [[0; 10], [1; 10]]
                .concat()
                .into_iter()
                .chain([2; 5])
                .collect::<Vec<_>>()
        );
        assert_eq!(slots[10] - start, Duration::from_secs(1), "a group a second");
        assert!(
            slots[10..20].iter().all(|s| *s == slots[10]),
            "a group to come is one instant"
        );
        // A budget left unused does not allow a burst later: one group at most.
        std::thread::sleep(Duration::from_millis(3100));
        let later: Vec<Instant> = (0..11).map(|_| budget.take_slot()).collect();
        assert!(later[9] <= Instant::now(), "ten now");
        assert!(
            later[10] - later[9] >= Duration::from_millis(900),
            "the eleventh in the next group"
        );
    }

    #[test]
    fn times_on_the_grid_are_group_times_at_most_one_group_later() {
        let budget = CheckBudget::new(4.0);
        let start = budget.epoch;
        for ms in [0, 1, 999, 1000, 1001, 2500] {
            let at = start + Duration::from_millis(ms);
            let on = budget.on_grid(at, Duration::from_secs(60));
            assert!(on >= at && on - at < Duration::from_secs(1), "{ms} ms");
            assert_eq!((on - start).subsec_nanos(), 0, "{ms} ms: on a whole second");
            let finer = budget.on_grid(at, Duration::from_millis(100));
            assert!(finer >= at && finer - at < Duration::from_millis(100), "{ms} ms, finer");
        }
    }

    #[test]
    fn a_rate_below_one_a_second_spaces_single_slots() {
        let budget = CheckBudget::new(0.5);
        let (a, b) = (budget.take_slot(), budget.take_slot());
        assert!(a - budget.epoch < Duration::from_millis(100), "the first at once");
        assert_eq!(b - budget.epoch, Duration::from_secs(2));
    }
}
