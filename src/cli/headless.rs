//! `--json`: the dashboard's engine and store with no screen, one NDJSON line per change (the
//! `--follow` schema, plus agent health lines), for scripts and CI.

use super::Error;
use crate::event::Receiver;
use crate::ndjson::JsonLines;
use crate::record::Recorder;
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

/// At most this many events are taken in before their lines are written out.
const BURST: usize = 4096;

/// Prints changes until the engine stops, `until` is reached, or Ctrl-C. What arrives together
/// is written together: the lines of a burst go out in one write, flushed at its end (and the
/// recording's, if `--record`).
pub async fn run(
    mut store: Store,
    mut events: Receiver,
    until: Option<Until>,
    given: Vec<TaskKey>,
    mut recorder: Option<Recorder>,
) -> Result<(), Error> {
    let mut lines = JsonLines::default();
    let mut out = Vec::new();
    loop {
        let ev = tokio::select! {
            ev = events.recv() => ev,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(ev) = ev else { return Ok(()) };
        let mut next = Some(ev);
        let mut taken = 0;
        let mut finished = false;
        while let Some(ev) = next.take() {
            let change = match recorder.as_mut() {
                Some(r) => r.apply(&mut store, ev, Some(&mut out)),
                None => lines.take(&mut store, ev, &mut out),
            };
            // Only a change can end the wait.
            if change != Change::Nothing && done(&store, until, &given) {
                finished = true;
                break;
            }
            taken += 1;
            if taken < BURST {
                next = events.try_recv().ok();
            }
        }
        super::out::write(&out);
        out.clear();
        if let Some(r) = recorder.as_mut() {
            r.flush().map_err(|source| Error::Io {
                what: r.path().display().to_string(),
                source,
            })?;
        }
        if finished {
            return Ok(());
        }
    }
}
