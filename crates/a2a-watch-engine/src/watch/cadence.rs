//! How often one agent is listed (issue 23). While every live task of the agent is followed by an
//! open stream (and it has some: an idle agent's listing is one small response), the listing is
//! only a safety net and the way new tasks are found: it runs every
//! `streamed` (`WatchOptions::streamed_list_interval`) instead of every `poll`. Anything that may
//! have let a change slip by (the agent just connected, a task not streamed, a stream that ended
//! or skipped events, a listing that failed or was cut, a new task found) brings back `poll`
//! until things have been calm for a whole `streamed` again. An agent that ignores `statusTimestampAfter` (ListTasks,
//! A2A 1.0 section 3.1.4) sends every task at each listing, so it is listed at `poll` as before.

use std::time::Duration;

use tokio::time::Instant;

/// What the agent's loop sees of its tasks at a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Coverage {
    /// The agent has live tasks and every one has its subscription open (none waits for a
    /// stream slot, rests after a hang, polls or is being subscribed again).
    pub all_streamed: bool,
    /// Times a subscription of the agent ended or skipped events so far (`OpenStreams::tally`).
    pub lapses: u64,
}

/// Whether a listing may have missed something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listing {
    /// Every page read, nothing new.
    Calm,
    /// It failed, was cut, or found a live task nobody followed yet.
    Missed,
}

#[derive(Debug)]
pub(crate) struct Cadence {
    poll: Duration,
    streamed: Duration,
    /// When something last may have slipped by: `streamed` must pass calmly after it.
    upset: Instant,
    last_listing: Option<Instant>,
    lapses_seen: u64,
    ignores_filter: bool,
}

impl Cadence {
    /// The agent just connected: listed at `poll` until it has been calm for `streamed`.
    pub fn new(poll: Duration, streamed: Duration, now: Instant) -> Cadence {
        Cadence {
            poll,
            streamed,
            upset: now,
            last_listing: None,
            lapses_seen: 0,
            ignores_filter: false,
        }
    }

    /// At a tick of the `poll` ticker: whether to list now.
    pub fn due(&mut self, now: Instant, coverage: Coverage) -> bool {
        if !coverage.all_streamed || coverage.lapses != self.lapses_seen {
            self.upset = now;
        }
        self.lapses_seen = coverage.lapses;
        let interval = self.interval(now);
        self.last_listing.is_none_or(|at| now.duration_since(at) >= interval)
    }

    /// How long after the last listing the next is due, as things stand at `now`.
    pub fn interval(&self, now: Instant) -> Duration {
        let calm = !self.ignores_filter && now.duration_since(self.upset) >= self.streamed;
        if calm { self.streamed.max(self.poll) } else { self.poll }
    }

    /// A listing begins at `now`.
    pub fn began(&mut self, now: Instant) {
        self.last_listing = Some(now);
    }

    /// A listing ended at `now`.
    pub fn ended(&mut self, now: Instant, listing: Listing) {
        if listing == Listing::Missed {
            self.upset = now;
        }
    }

    /// An incremental listing held rows older than the `statusTimestampAfter` it asked: the agent
    /// ignores the filter. True the first time, to say so once.
    pub fn filter_ignored(&mut self) -> bool {
        !std::mem::replace(&mut self.ignores_filter, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLL: Duration = Duration::from_secs(3);
    const STREAMED: Duration = Duration::from_secs(30);

    fn streamed(lapses: u64) -> Coverage {
        Coverage {
            all_streamed: true,
            lapses,
        }
    }

    /// Ticks every `POLL` from `from` for `ticks` ticks, listing when due; the seconds (from
    /// `start`) at which it listed.
    fn run(c: &mut Cadence, start: Instant, from: u64, ticks: u64, coverage: impl Fn(u64) -> Coverage) -> Vec<u64> {
        let mut listed = Vec::new();
        for i in 0..ticks {
            let secs = from + i * POLL.as_secs();
            let now = start + Duration::from_secs(secs);
            if c.due(now, coverage(secs)) {
                c.began(now);
                c.ended(now, Listing::Calm);
                listed.push(secs);
            }
        }
        listed
    }

    #[test]
    fn every_task_streamed_lists_at_poll_until_calm_for_the_streamed_interval_then_rarely() {
        let start = Instant::now();
        let mut c = Cadence::new(POLL, STREAMED, start);
        let listed = run(&mut c, start, 0, 31, |_| streamed(0));
        // 0, 3, ..., 27 at poll; calm from 30 s on, so the next is 30 s after the last.
        let fast: Vec<u64> = (0..10).map(|i| i * 3).collect();
        assert_eq!(listed, [fast, vec![57, 87]].concat());
    }

    #[test]
    fn a_task_without_its_stream_keeps_the_poll_interval() {
        let start = Instant::now();
        let mut c = Cadence::new(POLL, STREAMED, start);
        let uncovered = Coverage {
            all_streamed: false,
            lapses: 0,
        };
        let listed = run(&mut c, start, 0, 30, |_| uncovered);
        assert_eq!(listed.len(), 30, "every tick lists");
    }

    #[test]
    fn a_stream_that_ends_or_skips_events_brings_back_the_poll_interval_for_a_while() {
        let start = Instant::now();
        let mut c = Cadence::new(POLL, STREAMED, start);
        run(&mut c, start, 0, 11, |_| streamed(0));
        assert_eq!(c.interval(start + Duration::from_secs(33)), STREAMED);
        // A stream closed between 60 s and 63 s (its task was subscribed again at once), or
        // skipped events.
        let listed = run(&mut c, start, 36, 30, |secs| streamed(u64::from(secs >= 63)));
        assert_eq!(listed[0], 57, "calm until then: 30 s after the last listing");
        let fast: Vec<u64> = (21..=30).map(|i| i * 3).collect();
        assert_eq!(
            listed,
            [vec![57], fast, vec![120]].concat(),
            "calm again 30 s after the close"
        );
    }

    #[test]
    fn a_listing_that_missed_something_brings_back_the_poll_interval() {
        let start = Instant::now();
        let mut c = Cadence::new(POLL, STREAMED, start);
        run(&mut c, start, 0, 11, |_| streamed(0));
        let at = start + Duration::from_secs(60);
        assert!(c.due(at, streamed(0)));
        c.began(at);
        c.ended(at, Listing::Missed);
        assert_eq!(c.interval(at + POLL), POLL);
        assert!(c.due(at + POLL, streamed(0)), "listed again at the next tick");
        assert_eq!(
            c.interval(at + STREAMED),
            STREAMED,
            "calm once the streamed interval passed"
        );
    }

    #[test]
    fn an_agent_that_ignores_the_filter_is_listed_at_poll_and_said_so_once() {
        let start = Instant::now();
        let mut c = Cadence::new(POLL, STREAMED, start);
        assert!(c.filter_ignored());
        assert!(!c.filter_ignored(), "said once");
        let listed = run(&mut c, start, 0, 30, |_| streamed(0));
        assert_eq!(listed.len(), 30, "every tick lists");
    }

    #[test]
    fn a_streamed_interval_shorter_than_poll_changes_nothing() {
        let start = Instant::now();
        let mut c = Cadence::new(POLL, Duration::from_secs(1), start);
        let listed = run(&mut c, start, 0, 10, |_| streamed(0));
        assert_eq!(listed.len(), 10);
    }
}
