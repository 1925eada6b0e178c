//! Watching one task until it is terminal. Servers disagree on when streams close (first
//! seed), so a close is never read as a state: after every close GetTask tells the truth, and
//! while the task lives we subscribe again (spec section 3.1.6), or poll where subscribing keeps
//! failing or is refused (some SDKs refuse to subscribe to an interrupted task).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use tokio::sync::mpsc;

use super::backoff;
use super::event::{AgentId, Event, WatchMode};
use crate::a2a::{Client, Error, ErrorKind, StateClass};

/// History asked for with GetTask; the store keeps no more than this either.
const HISTORY: u32 = 50;
/// Failed subscriptions in a row before we poll instead.
const MAX_FAILURES: u32 = 3;

pub(crate) struct TaskWatch {
    pub agent: AgentId,
    pub client: Arc<Client>,
    pub id: String,
    pub events: mpsc::Sender<Event>,
    pub poll: Duration,
    pub max_backoff: Duration,
}

enum Next {
    /// Terminal, or gone: stop watching.
    Stop,
    /// Subscribe again after the pause.
    Resubscribe,
    /// Poll GetTask after the pause.
    Poll,
}

impl TaskWatch {
    async fn send(&self, event: Event) -> bool {
        self.events.send(event).await.is_ok()
    }

    async fn error(&self, e: &Error) -> bool {
        self.send(Event::TaskError {
            agent: self.agent,
            task: self.id.clone(),
            message: e.to_string(),
        })
        .await
    }

    async fn mode(&self, mode: WatchMode) -> bool {
        self.send(Event::Watching {
            agent: self.agent,
            task: self.id.clone(),
            mode,
        })
        .await
    }

    /// Runs until the task is terminal, unknown to the agent, or the store is gone.
    /// Returns the task id so the agent can free its slot.
    pub async fn run(self) -> String {
        let mut failures = 0u32;
        let mut polling = !self.client.streams();
        if polling {
            self.mode(WatchMode::Polling).await;
        }
        loop {
            if !polling {
                match self.stream_once().await {
                    Ok(progressed) => failures = if progressed { 0 } else { failures + 1 },
                    Err(e) if e.is_kind(ErrorKind::TaskNotFound) => {
                        self.error(&e).await;
                        return self.id;
                    }
                    // Terminal tasks refuse subscription; so do some servers for interrupted
                    // ones. GetTask below tells which.
                    Err(e) if e.is_kind(ErrorKind::UnsupportedOperation) => failures = MAX_FAILURES,
                    Err(e) => {
                        failures += 1;
                        if !self.error(&e).await {
                            return self.id;
                        }
                    }
                }
            }
            let next = self.check().await;
            match next {
                Next::Stop => return self.id,
                // A stream that carried the task forward is picked up again at once; one that
                // failed or only repeated the snapshot waits longer each time.
                Next::Resubscribe if !polling && failures == 0 => {}
                Next::Resubscribe if !polling && failures < MAX_FAILURES => {
                    tokio::time::sleep(backoff(failures, self.max_backoff)).await;
                }
                _ => {
                    if !polling {
                        polling = true;
                        self.mode(WatchMode::Polling).await;
                    }
                    tokio::time::sleep(self.poll).await;
                }
            }
            // An interrupted task that becomes active again may accept a subscription now.
            if polling && self.client.streams() && matches!(next, Next::Resubscribe) {
                polling = false;
                failures = 0;
            }
        }
    }

    /// One subscription, read to its end. Ok(true) if it carried events past the snapshot.
    async fn stream_once(&self) -> Result<bool, Error> {
        let mut stream = self.client.subscribe(&self.id).await?;
        self.mode(WatchMode::Streaming).await;
        let mut delivered = 0usize;
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    delivered += 1;
                    let ev = Event::Update {
                        agent: self.agent,
                        event,
                        seen: Timestamp::now(),
                    };
                    if !self.send(ev).await {
                        return Ok(delivered > 1);
                    }
                }
                // An error frame ends this stream, not the task (a2a-js closes an old stream
                // with -32004 "Stream ordering violation" when the next turn starts; a2a-python
                // 0.3.26 refuses a resubscription with a TaskNotFound frame for a task that
                // exists). GetTask, next, says what is true; the frame goes to the log only.
                Err(e @ Error::Agent { .. }) => {
                    tracing::info!(agent = self.agent, task = %self.id, error = %e, "stream ended by an error frame");
                    break;
                }
                // A frame that does not decode is reported; the stream goes on.
                Err(e) => {
                    self.error(&e).await;
                }
            }
        }
        Ok(delivered > 1)
    }

    /// GetTask after a close: the truth, and what to do next.
    async fn check(&self) -> Next {
        match self.client.get_task(&self.id, Some(HISTORY)).await {
            Ok(task) => {
                let class = task.status.state.class();
                if !self
                    .send(Event::Snapshot {
                        agent: self.agent,
                        task,
                        seen: Timestamp::now(),
                    })
                    .await
                {
                    return Next::Stop;
                }
                match class {
                    StateClass::Terminal => {
                        self.mode(WatchMode::Done).await;
                        Next::Stop
                    }
                    StateClass::Active => Next::Resubscribe,
                    StateClass::Interrupted | StateClass::Unknown => Next::Poll,
                }
            }
            Err(e) if e.is_kind(ErrorKind::TaskNotFound) => {
                self.error(&e).await;
                Next::Stop
            }
            Err(e) => {
                if self.error(&e).await {
                    Next::Poll
                } else {
                    Next::Stop
                }
            }
        }
    }
}
