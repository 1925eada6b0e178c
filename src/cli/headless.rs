//! The dashboard's engine, store and loop (`run`) with no screen, in one sink: `--json` writes
//! one NDJSON line per change (the `--follow` schema, plus agent health lines), for scripts and
//! CI; `--headless` writes nothing, for a service (systemd, a container) that serves
//! `--metrics-listen` and `--record`. Both stop on SIGTERM, SIGINT or SIGHUP (`run::stop`), after the burst at hand is
//! applied, written and recorded (README "Monitoring stack").

use std::io;
use std::path::Path;

use super::{Error, out};
use crate::event::Receiver;
use crate::record::Recorder;
use crate::run::stop::Stop;
use crate::run::{self, Clock, Sink, Wake, live::Live};
use crate::store::{Change, Store, TaskKey};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Until {
    /// Every task seen is terminal (and at least one was seen).
    AllTerminal,
    /// Some task waits on a person.
    Interrupted,
}

/// `given`: the tasks named with `--task`; all-terminal waits until each has a row, so a task
/// the agent does not know is counted once it says so, not skipped because it came late.
fn done(store: &Store, until: Option<Until>, given: &[TaskKey]) -> bool {
    match until {
        None => false,
        // Both asked after every event: the store keeps them, so neither looks at every task.
        Some(Until::Interrupted) => store.any_interrupted(),
        Some(Until::AllTerminal) => {
            let connected = store.agents.iter().all(|a| a.info.is_some());
            // A task the agent does not know will not move again: it counts as ended.
            connected && given.iter().all(|k| store.task(k).is_some()) && store.all_settled()
        }
    }
}

/// The sink of both: the store (the metrics server observes it) and, for `--json`, the lines of
/// each burst written out together at its end, in one write (the recording's too, if `--record`:
/// the loop flushes it). `--headless` is this with no lines: nothing is made or written.
struct NoScreen {
    store: Store,
    until: Option<Until>,
    given: Vec<TaskKey>,
    /// `--json`'s lines of the burst at hand; `None` for `--headless`.
    lines: Option<Vec<u8>>,
    finished: bool,
    stop: Stop,
}

impl Sink for NoScreen {
    /// A stop signal: the only input there is.
    type Input = ();

    fn done(&self) -> bool {
        self.finished
    }

    fn target(&mut self) -> (&mut Store, Option<&mut Vec<u8>>) {
        (&mut self.store, self.lines.as_mut())
    }

    fn applied(&mut self, change: Change) {
        // Only a change can end the wait.
        self.finished |= change != Change::Nothing && done(&self.store, self.until, &self.given);
    }

    fn burst_applied(&mut self, _now: jiff::Timestamp) {
        if let Some(lines) = &mut self.lines {
            out::write(lines);
            lines.clear();
        }
    }

    /// The burst's lines still go out; then both stop with the error: a service is better
    /// restarted than left running without the recording it was asked for.
    fn recording_failed(&mut self, path: &Path, source: io::Error) -> Result<(), run::Error> {
        self.burst_applied(jiff::Timestamp::now());
        Err(run::Error::Io {
            what: path.display().to_string(),
            source,
        })
    }

    fn events_ended(&mut self) {
        self.finished = true;
    }

    async fn settle(&mut self, _clock: &mut impl Clock) -> Result<(), run::Error> {
        Ok(())
    }

    async fn wake(&mut self) -> Result<Wake<()>, run::Error> {
        self.stop.requested().await;
        Ok(Wake::End)
    }

    fn on_input(&mut self, (): (), _clock: &mut impl Clock) -> Result<(), run::Error> {
        Ok(())
    }

    fn on_tick(&mut self, _clock: &impl Clock) {}
}

/// What the loop shows without a screen.
pub enum Front {
    /// `--json`: a line per change, until `until` (if any) holds; `given`: the `--task`s.
    Json { until: Option<Until>, given: Vec<TaskKey> },
    /// `--headless`: nothing.
    Headless,
}

/// Applies (and records) events until the engine stops, `--until` is reached, or a stop signal:
/// the dashboard's loop on the live clock, with `--json`'s lines or nothing for a screen.
pub async fn run(store: Store, events: Receiver, front: Front, recorder: Option<Recorder>) -> Result<(), Error> {
    let (lines, until, given) = match front {
        Front::Json { until, given } => (Some(Vec::new()), until, given),
        Front::Headless => (None, None, Vec::new()),
    };
    let mut sink = NoScreen {
        store,
        until,
        given,
        lines,
        finished: false,
        stop: Stop::listen().map_err(|source| Error::Io {
            what: "listening for SIGTERM, SIGINT and SIGHUP".into(),
            source,
        })?,
    };
    Ok(run::run(&mut Live::new(events, None), &mut sink, recorder).await?)
}
