//! The one event loop of every front end: events go into a store, what the user does becomes
//! actions, and the front shows the result. It is generic over where events and time come from
//! (a [`Clock`]: the engine and the wall clock (`live`), or a recording's clock with its speed,
//! pause and seek (`playback`)) and over what shows them (a [`Sink`]: the terminal, drawn only
//! when something changed and at most ~30 times a second (`screen`), or, with no screen,
//! `--json`'s NDJSON lines or `--headless`'s nothing). Recording is the loop's too: it records what it applies (`Intake`), the app
//! never sees the recorder. It sits above both `app` and `ui`: before each frame it hands the app
//! the layout `ui` computed, and it carries out the app's effects, screenshots (`shot`) included.

pub mod live;
pub mod playback;
pub mod screen;
pub mod shot;
pub mod stop;

use std::future::Future;
use std::io;
use std::path::Path;
use std::time::Duration;

use crossterm::event::KeyEvent;
use jiff::Timestamp;

use crate::app::App;
use crate::event::{AgentId, Command, Event};
use crate::ndjson::JsonLines;
use crate::record::Recorder;
use crate::store::{Change, Store};
use crate::traces::ExportStatus;

pub use screen::{Pacer, apply_burst, apply_burst_at, draw, render};

pub const FRAME: Duration = Duration::from_millis(33);
/// Events applied before the screen gets a chance to redraw.
pub const BATCH: usize = 4096;

/// Why the loop stopped short.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The terminal, or the recording being written.
    #[error("{what}: {source}")]
    Io { what: String, source: io::Error },
    /// The recording being replayed.
    #[error(transparent)]
    Recording(#[from] crate::record::ReadError),
}

/// Where the loop's events and time come from, and where what the user asks of the agents goes.
pub trait Clock {
    /// The time the app is drawn at and judges keys by.
    fn now(&self) -> Timestamp;
    /// How often the app's time is looked at: ages, answer timeouts, a replay's position.
    fn tick(&self) -> Duration;
    /// The next burst of events, once it is due; `None` once no more will come.
    fn burst(&mut self) -> impl Future<Output = Result<Option<Vec<Event>>, Error>>;
    /// Hands a command on to the agents (a clock with none drops it).
    fn send(&mut self, command: (AgentId, Command)) -> impl Future<Output = ()>;
    /// Why nothing is sent to agents, said when a key would send; `None`: commands go out.
    fn silent(&self) -> Option<&'static str> {
        None
    }
    /// The clock's own keys (a replay's pause and seek), before the app's; true if taken.
    fn on_key(&mut self, _app: &mut App, _key: &KeyEvent) -> Result<bool, Error> {
        Ok(false)
    }
    /// A note for the title line (a replay's position).
    fn banner(&self) -> Option<String> {
        None
    }
    /// How the traces export goes (`--otlp`), for the title and footer.
    fn export(&self) -> Option<ExportStatus> {
        None
    }
    /// Something to tell the user once (a replay reaching its end).
    fn take_note(&mut self) -> Option<&'static str> {
        None
    }
}

/// What the loop wakes a sink for, besides events and ticks.
pub enum Wake<I> {
    /// The user did something (a key, the mouse, a paste, a resize).
    Input(I),
    /// A frame may be drawn.
    Frame,
    /// The user is done (the terminal closed, Ctrl-C; SIGTERM or SIGINT with no screen).
    End,
}

/// What shows the store: it holds the store, takes the user's input and presents each change.
pub trait Sink {
    type Input;
    /// The loop stops once this is true.
    fn done(&self) -> bool;
    /// The store events go into, and where their `--json` lines go (`None`: none are made).
    fn target(&mut self) -> (&mut Store, Option<&mut Vec<u8>>);
    /// One event was applied.
    fn applied(&mut self, change: Change);
    /// A burst was applied (and recorded), at `now`.
    fn burst_applied(&mut self, now: Timestamp);
    /// The recording could not be written: it stops here.
    fn recording_failed(&mut self, path: &Path, error: io::Error) -> Result<(), Error>;
    /// No more events will come; the sink may be done.
    fn events_ended(&mut self);
    /// Before the loop waits: commands handed on, effects carried out, the screen drawn when due.
    fn settle(&mut self, clock: &mut impl Clock) -> impl Future<Output = Result<(), Error>>;
    /// The user's next input, or a frame due.
    fn wake(&mut self) -> impl Future<Output = Result<Wake<Self::Input>, Error>>;
    fn on_input(&mut self, input: Self::Input, clock: &mut impl Clock) -> Result<(), Error>;
    /// The clock's tick: the time moved on.
    fn on_tick(&mut self, clock: &impl Clock);
    /// How soon, at the clock's `now`, the sink needs a tick before the clock's own (a question
    /// held while the person types opens when the keyboard rested, not up to a tick later).
    fn tick_sooner(&self, _now: Timestamp) -> Option<Duration> {
        None
    }
}

/// Each event on its way into the store: applied, and recorded with `--record` (the recorder's
/// `apply` makes the `--json` line a sink asks for too).
struct Intake {
    recorder: Option<Recorder>,
    lines: JsonLines,
}

impl Intake {
    fn take(&mut self, store: &mut Store, ev: Event, echo: Option<&mut Vec<u8>>) -> Change {
        match (self.recorder.as_mut(), echo) {
            (Some(recorder), echo) => recorder.apply(store, ev, echo),
            (None, Some(out)) => self.lines.take(store, ev, out),
            (None, None) => store.apply(ev),
        }
    }

    /// Applies a burst, then writes out what it recorded (whole lines, once per burst).
    fn burst(&mut self, sink: &mut impl Sink, events: Vec<Event>, now: Timestamp) -> Result<(), Error> {
        for ev in events {
            let (store, echo) = sink.target();
            let change = self.take(store, ev, echo);
            sink.applied(change);
            if sink.done() {
                break;
            }
        }
        if let Some(recorder) = self.recorder.as_mut()
            && let Err(error) = recorder.flush()
        {
            let path = recorder.path().to_path_buf();
            self.recorder = None;
            sink.recording_failed(&path, error)?;
        }
        sink.burst_applied(now);
        Ok(())
    }
}

/// Runs until the sink is done: events in bursts from the clock, the user's input, the clock's
/// ticks and the frames, each handed to the sink; `recorder` records every event applied.
pub async fn run(clock: &mut impl Clock, sink: &mut impl Sink, recorder: Option<Recorder>) -> Result<(), Error> {
    let mut intake = Intake {
        recorder,
        lines: JsonLines::default(),
    };
    let mut tick = tokio::time::interval(clock.tick());
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut events_open = true;
    while !sink.done() {
        sink.settle(clock).await?;
        let sooner = sink.tick_sooner(clock.now());
        tokio::select! {
            burst = clock.burst(), if events_open => match burst? {
                Some(events) => intake.burst(sink, events, clock.now())?,
                None => {
                    events_open = false;
                    sink.events_ended();
                }
            },
            wake = sink.wake() => match wake? {
                Wake::Input(input) => sink.on_input(input, clock)?,
                Wake::Frame => {}
                Wake::End => return Ok(()),
            },
            _ = tick.tick() => sink.on_tick(clock),
            () = sleep_for(sooner) => sink.on_tick(clock),
        }
    }
    Ok(())
}

/// Sleeps `wait`; with none, forever.
async fn sleep_for(wait: Option<Duration>) {
    match wait {
        Some(wait) => tokio::time::sleep(wait).await,
        None => std::future::pending().await,
    }
}
