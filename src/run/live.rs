//! The live clock: events from the engine as they arrive, the wall clock's time, and commands
//! handed to the engine. The dashboard and `--json` both run on it.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::mpsc;

use super::{BATCH, Clock, Error};
use crate::app::App;
use crate::event::{AgentId, Command, Event, Receiver};
use crate::record::Recorder;
use crate::traces::{ExportStatus, Queue};

/// Ages on screen change once a second.
const TICK: Duration = Duration::from_secs(1);

pub struct Live {
    events: Receiver,
    /// Where the user's commands go; `--json` takes none.
    commands: Option<mpsc::Sender<(AgentId, Command)>>,
    /// The spans being exported, with `--otlp` on the dashboard.
    export: Option<Arc<Queue>>,
}

impl Live {
    pub fn new(events: Receiver, commands: Option<mpsc::Sender<(AgentId, Command)>>) -> Live {
        Live {
            events,
            commands,
            export: None,
        }
    }
}

impl Clock for Live {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn tick(&self) -> Duration {
        TICK
    }

    /// The next event, then whatever is already waiting, up to `BATCH`: the screen then draws
    /// once for all of them.
    async fn burst(&mut self) -> Result<Option<Vec<Event>>, Error> {
        let Some(first) = self.events.recv().await else {
            return Ok(None);
        };
        let mut burst = vec![first];
        burst.extend(std::iter::from_fn(|| self.events.try_recv().ok()).take(BATCH));
        Ok(Some(burst))
    }

    fn export(&self) -> Option<ExportStatus> {
        self.export.as_ref().map(|queue| queue.status())
    }

    async fn send(&mut self, command: (AgentId, Command)) {
        if let Some(commands) = &self.commands {
            // The engine only stops when we do; a send error means we are quitting anyway.
            let _ = commands.send(command).await;
        }
    }
}

/// Runs the dashboard until the user quits. `commands` carries what the user asks for
/// (answers, cancels, new tasks) to the engine; `recorder` records every event applied; `export`,
/// the spans being exported, says on screen how their export goes.
pub async fn dashboard(
    app: App,
    events: Receiver,
    commands: mpsc::Sender<(AgentId, Command)>,
    recorder: Option<Recorder>,
    export: Option<Arc<Queue>>,
) -> Result<(), Error> {
    let mut live = Live {
        export,
        ..Live::new(events, Some(commands))
    };
    super::screen::show(app, &mut live, recorder).await
}
