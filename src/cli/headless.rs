//! `--json`: the dashboard's engine, store and loop (`run`) with no screen: its sink writes one
//! NDJSON line per change (the `--follow` schema, plus agent health lines), for scripts and CI.

use std::io;
use std::path::Path;

use super::{Error, out};
use crate::event::Receiver;
use crate::record::Recorder;
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

/// `--json`'s sink: the store, and the lines of each burst written out together at its end,
/// in one write (the recording's too, if `--record`: the loop flushes it).
struct Lines {
    store: Store,
    until: Option<Until>,
    given: Vec<TaskKey>,
    out: Vec<u8>,
    finished: bool,
}

impl Sink for Lines {
    /// Ctrl-C: the only input there is.
    type Input = ();

    fn done(&self) -> bool {
        self.finished
    }

    fn target(&mut self) -> (&mut Store, Option<&mut Vec<u8>>) {
        (&mut self.store, Some(&mut self.out))
    }

    fn applied(&mut self, change: Change) {
        // Only a change can end the wait.
        self.finished |= change != Change::Nothing && done(&self.store, self.until, &self.given);
    }

    fn burst_applied(&mut self, _now: jiff::Timestamp) {
        out::write(&self.out);
        self.out.clear();
    }

    /// The burst's lines still go out; then `--json` stops with the error.
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
        let _ = tokio::signal::ctrl_c().await;
        Ok(Wake::End)
    }

    fn on_input(&mut self, (): (), _clock: &mut impl Clock) -> Result<(), run::Error> {
        Ok(())
    }

    fn on_tick(&mut self, _clock: &impl Clock) {}
}

/// Prints changes until the engine stops, `until` is reached, or Ctrl-C: the dashboard's loop
/// on the live clock, with lines for a screen.
pub async fn run(
    store: Store,
    events: Receiver,
    until: Option<Until>,
    given: Vec<TaskKey>,
    recorder: Option<Recorder>,
) -> Result<(), Error> {
    let mut lines = Lines {
        store,
        until,
        given,
        out: Vec::new(),
        finished: false,
    };
    Ok(run::run(&mut Live::new(events, None), &mut lines, recorder).await?)
}
