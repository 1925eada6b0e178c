//! `--follow`: print every event of one task until it is terminal or interrupted. Servers disagree
//! on when streams close (docs/protocol-notes.md, "Stream closes"), so a close is printed as what
//! it is, then GetTask tells the truth and SubscribeToTask picks the task up again
//! (spec section 3.1.6).

use std::time::Duration;

use futures::StreamExt;

use super::out;
use crate::a2a::{Client, Error, ErrorKind, EventStream, SendMessageRequest, StreamResponse, TaskState};
use crate::ndjson::{EventLine, TaskLine};
use crate::text::one_line;

/// Resubscribing after this many closes in a row falls back to polling GetTask.
const MAX_RESUBSCRIBES: u32 = 5;

fn settled(state: &TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

fn emit(client: &Client, event: &StreamResponse, line: &mut TaskLine) {
    line.apply(event);
    out::line(&EventLine::for_event(&client.name, event, line).to_json());
}

enum Outcome {
    /// Terminal, interrupted, or a direct message: nothing more to follow.
    Done,
    /// The server ended the stream before that.
    Closed,
}

/// Prints events until the task settles or the stream ends.
async fn consume(client: &Client, mut stream: EventStream, line: &mut TaskLine, mut continuing: bool) -> Outcome {
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => {
                emit(client, &event, line);
                // A stream that continues a task may open with a snapshot still showing the
                // question just answered (docs/protocol-notes.md, "SDK quirks: a2a-js"): that is
                // not a new question.
                let stale_snapshot = continuing && matches!(event, StreamResponse::Task(_));
                continuing = false;
                if matches!(event, StreamResponse::Message(_)) || (settled(&line.state) && !stale_snapshot) {
                    return Outcome::Done;
                }
            }
            // An error frame ends this stream, not the task (a2a-js ends an old stream with
            // -32004 "Stream ordering violation" when the next turn starts).
            Err(e @ Error::Agent { .. }) => {
                out::error(&one_line(&format!("a2a-watch: {}: stream error: {e}", client.name)));
                return Outcome::Closed;
            }
            Err(e) => out::error(&one_line(&format!("a2a-watch: {}: {e}", client.name))),
        }
    }
    Outcome::Closed
}

pub async fn send_and_follow(client: &Client, req: &SendMessageRequest, continues_task: bool) -> Result<(), Error> {
    let mut line = TaskLine::default();
    if !client.streams() {
        // No streaming capability: both streaming calls would fail (spec section 3.3.4). Poll.
        let quick = req.clone().returning_immediately();
        let first = client.send_message(&quick).await?;
        emit(client, &first, &mut line);
        if matches!(first, StreamResponse::Message(_)) || settled(&line.state) {
            return Ok(());
        }
        return poll(client, &mut line).await;
    }
    let stream = taken(client, client.send_streaming_message(req).await?).await?;
    let mut outcome = consume(client, stream, &mut line, continues_task).await;
    let mut resubscribes = 0;
    while let Outcome::Closed = outcome {
        out::line(&EventLine::new(&client.name, "closed", &line).to_json());
        if line.task.is_empty() {
            return Err(Error::Stream(
                "the server closed the stream before naming a task".into(),
            ));
        }
        let task = client.get_task(&line.task, Some(0)).await?;
        emit(client, &StreamResponse::Task(task), &mut line);
        if settled(&line.state) {
            return Ok(());
        }
        resubscribes += 1;
        if resubscribes > MAX_RESUBSCRIBES {
            return poll(client, &mut line).await;
        }
        tokio::time::sleep(Duration::from_millis(100 * 2u64.pow(resubscribes.min(5)))).await;
        match client.subscribe(&line.task).await {
            Ok(stream) => outcome = consume(client, stream, &mut line, false).await,
            // Some servers refuse to subscribe to an interrupted task (a2a-go;
            // docs/protocol-notes.md, "SDK quirks: other servers").
            Err(e) if e.is_kind(ErrorKind::UnsupportedOperation) => {
                return poll(client, &mut line).await;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The stream of a send, once it has shown that the agent took the message: its first item is
/// an event. An error first, a first frame that does not decode, or no event at all is the
/// agent's refusal, reported as a failure (nothing is printed on stdout).
async fn taken(client: &Client, mut stream: EventStream) -> Result<EventStream, Error> {
    let refused = |cause: String| Error::Refused {
        agent: client.name.clone(),
        cause,
    };
    match stream.next().await {
        Some(Ok(first)) => Ok(Box::pin(futures::stream::iter([Ok(first)]).chain(stream))),
        Some(Err(e)) => Err(refused(e.to_string())),
        None => Err(refused("the stream ended before any event".into())),
    }
}

/// Polls GetTask, printing each change, until the task settles.
async fn poll(client: &Client, line: &mut TaskLine) -> Result<(), Error> {
    let mut wait = Duration::from_millis(250);
    loop {
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(2));
        let task = client.get_task(&line.task, Some(0)).await?;
        let changed = task.status.state != line.state || task.status.text() != line.text;
        if changed {
            emit(client, &StreamResponse::Task(task), line);
            wait = Duration::from_millis(250);
        }
        if settled(&line.state) {
            return Ok(());
        }
    }
}
