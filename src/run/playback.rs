//! A recording's clock (`a2a-watch replay`): the events come from the file at the times they
//! arrived, played at a speed, paused, and moved to any time (`seek`). The recording's clock
//! drives the app's (`app.now`), so the same recording at the same size shows the same screen at
//! the same recording time. Nothing is sent: a replay has no agents.

use std::time::Duration;

use crossterm::event::KeyEvent;
use jiff::Timestamp;
use tokio::time::Instant;

use super::{Clock, Error, apply_burst_at};
use crate::app::App;
use crate::app::keys::{Action, Mode};
use crate::app::popup::Popup;
use crate::event::{AgentId, Command, Event};
use crate::record::{Entries, Entry, Recording};

/// Events applied in one burst at most: what a replay holds beside the store and one line of
/// the file.
pub const BATCH: usize = 1024;
/// How often the replay's clock moves on while it plays.
const STEP: Duration = Duration::from_millis(50);

/// Where the replay stands: the recording's clock, and the events read from the file up to it.
/// Only what comes next is held; going back builds the store again from the start of the file
/// (a store cannot be run backwards), so a recording of any size replays in bounded memory.
pub struct Playback {
    recording: Recording,
    /// The events not read yet.
    entries: Entries,
    /// The event read but not applied yet: the next change.
    next: Option<Entry>,
    /// When the last event applied arrived; none applied: `None`.
    last_ms: Option<u64>,
    /// When the last event applied before `last_ms` arrived (0 for none): where `[` goes back to.
    before_last_ms: u64,
    /// Milliseconds into the recording.
    clock: u64,
    playing: bool,
    speed: f64,
    /// When the clock last moved on while playing.
    moved_at: Instant,
    /// Said once: the end was reached.
    note: Option<&'static str>,
}

impl Playback {
    /// At the start of the recording, playing or paused, at `speed`.
    pub fn new(recording: Recording, playing: bool, speed: f64) -> Result<Playback, Error> {
        Ok(Playback {
            entries: recording.entries()?,
            recording,
            next: None,
            last_ms: None,
            before_last_ms: 0,
            clock: 0,
            playing,
            speed,
            moved_at: Instant::now(),
            note: None,
        })
    }

    pub fn end(&self) -> u64 {
        self.recording.duration_ms()
    }

    /// The next event, read if it was not yet.
    fn upcoming(&mut self) -> Result<Option<&Entry>, Error> {
        if self.next.is_none() {
            self.next = self.entries.next().transpose()?;
        }
        Ok(self.next.as_ref())
    }

    /// The next event if it arrived by `ms`, taken.
    fn take_due(&mut self, ms: u64) -> Result<Option<Event>, Error> {
        self.upcoming()?;
        let Some(entry) = self.next.take_if(|e| e.ms <= ms) else {
            return Ok(None);
        };
        if let Some(last) = self.last_ms
            && last < entry.ms
        {
            self.before_last_ms = last;
        }
        self.last_ms = Some(entry.ms);
        Ok(Some(entry.event))
    }

    /// The events due by the clock, `BATCH` at most.
    fn due(&mut self) -> Result<Vec<Event>, Error> {
        let mut burst = Vec::new();
        while burst.len() < BATCH
            && let Some(event) = self.take_due(self.clock)?
        {
            burst.push(event);
        }
        Ok(burst)
    }

    /// Moves the clock to `ms` (forward or back) and the store with it.
    pub fn seek(&mut self, app: &mut App, ms: u64) -> Result<(), Error> {
        let ms = ms.min(self.end());
        if self.last_ms.is_some_and(|last| last > ms) {
            self.entries = self.recording.entries()?;
            self.next = None;
            self.last_ms = None;
            self.before_last_ms = 0;
            let mut store = self.recording.header.store();
            while let Some(event) = self.take_due(ms)? {
                store.apply(event);
            }
            app.replace_store(store);
        }
        self.clock = ms;
        let now = self.now();
        // Bursts of at most BATCH events, each read from the file as it is applied.
        loop {
            let burst = self.due()?;
            let full = burst.len() == BATCH;
            apply_burst_at(app, burst, now);
            if !full {
                break;
            }
        }
        app.set_now(now);
        Ok(())
    }

    /// The replay's own keys: pause, and the next or previous change.
    fn act(&mut self, app: &mut App, action: Action) -> Result<(), Error> {
        match action {
            Action::Pause if !self.playing && self.clock >= self.end() => {
                self.seek(app, 0)?;
                self.play();
            }
            Action::Pause if self.playing => self.playing = false,
            Action::Pause => self.play(),
            Action::Quit => app.handle(Action::Quit),
            Action::NextChange => {
                if let Some(next) = self.upcoming()?.map(|e| e.ms) {
                    self.seek(app, next)?;
                }
            }
            // Back to just before the last change shown: the state the one before it left.
            Action::PreviousChange if self.last_ms.is_some() => self.seek(app, self.before_last_ms)?,
            _ => {}
        }
        Ok(())
    }

    fn play(&mut self) {
        self.playing = true;
        self.moved_at = Instant::now();
    }

    /// Moves the clock on by the time since it last moved, at the speed; at the end it stops.
    fn move_on(&mut self) {
        let elapsed = self.moved_at.elapsed();
        self.moved_at = Instant::now();
        let ahead = (elapsed.as_secs_f64() * 1000.0 * self.speed) as u64;
        self.clock = self.clock.saturating_add(ahead).min(self.end());
        if self.clock >= self.end() {
            self.playing = false;
            self.note = Some("end of the recording: space plays it again");
        }
    }
}

impl Clock for Playback {
    fn now(&self) -> Timestamp {
        self.recording.time_at(self.clock)
    }

    fn tick(&self) -> Duration {
        STEP
    }

    /// What is due by the clock; while playing, the clock first moves on a `STEP`.
    async fn burst(&mut self) -> Result<Option<Vec<Event>>, Error> {
        let clock = self.clock;
        let behind = self.upcoming()?.is_some_and(|e| e.ms <= clock);
        if !behind {
            if !self.playing {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep_until(self.moved_at + STEP).await;
            self.move_on();
        }
        self.due().map(Some)
    }

    async fn send(&mut self, _command: (AgentId, Command)) {}

    fn silent(&self) -> Option<&'static str> {
        Some("replay: nothing is sent to agents (answer, approve, deny, cancel and new task are off)")
    }

    /// Its keys come before the app's, except while the user types.
    fn on_key(&mut self, app: &mut App, key: &KeyEvent) -> Result<bool, Error> {
        let typing = matches!(
            app.top(),
            Some(Popup::Filter { .. } | Popup::Answer(_) | Popup::NewTask(_))
        );
        let Some(action) = app.keys().action(Mode::Replay, key).filter(|_| !typing) else {
            return Ok(false);
        };
        self.act(app, action)?;
        Ok(true)
    }

    /// The title line's note: where the replay is, and whether it plays.
    fn banner(&self) -> Option<String> {
        let clock = |ms: u64| format!("{:02}:{:02}", ms / 60_000, ms / 1000 % 60);
        let state = if self.playing {
            format!("▶ x{}", self.speed)
        } else {
            "⏸".into()
        };
        Some(format!("replay {} / {} {state}", clock(self.clock), clock(self.end())))
    }

    fn take_note(&mut self) -> Option<&'static str> {
        self.note.take()
    }
}
