//! The scriptable client's commands: one function each, printing what the agent answers.

use serde::Serialize;

use super::Error;
use super::args::{ConnArgs, PartArgs, ReplyArgs};
use super::parts::message_parts;
use super::{artifacts, follow, out, print};
use crate::a2a::client::{Listing, MAX_PAGES};
use crate::a2a::interactions::{self, Answer, Interaction};
use crate::a2a::{Client, ListTasksRequest, Message, SendMessageRequest, StreamResponse, Task, TaskState};
use crate::ndjson::{self, EventLine, TaskLine};

/// `card`: the resolved agent card, summed up or as JSON; with `extended`, the authenticated
/// extended card in its place (spec section 3.1.11), where the card offers one.
pub async fn card(conn: &ConnArgs, url: &str, json: bool, extended: bool) -> Result<(), Error> {
    let mut client = conn.connect(url).await?;
    if extended {
        if !client.card.has_extended_card() {
            return Err(Error::Failed(format!(
                "{}: the card offers no extended card (capabilities.extendedAgentCard, 0.3 \
                 supportsAuthenticatedExtendedCard); nothing fetched",
                crate::text::one_line(&client.name)
            )));
        }
        client.card = client.extended_card().await?;
        client.card_source = format!(
            "GetExtendedAgentCard of {}",
            crate::a2a::shown::ShownUrl::of(&client.endpoint.url)
        );
        // The public card's verdict is not this card's; an extended card's signatures are not
        // checked (it came over the connection the credential authenticates).
        client.card_signature = None;
    }
    let mut shown = serde_json::to_value(&client.card).unwrap_or_default();
    if let (Some(signature), Some(fields)) = (&client.card_signature, shown.as_object_mut()) {
        fields.insert("card_signature".into(), signature.mark().into());
    }
    show(json, &shown, || print::card_summary(&client));
    Ok(())
}

/// `list`: every page of ListTasks, as a table or one NDJSON line per task.
pub async fn list(
    conn: &ConnArgs,
    url: &str,
    context: Option<String>,
    state: Option<String>,
    json: bool,
) -> Result<(), Error> {
    let client = conn.connect(url).await?;
    let req = ListTasksRequest {
        context_id: context,
        status: state.as_deref().map(parse_state).transpose()?,
        ..ListTasksRequest::default()
    };
    let Listing { tasks, cut } = client.list_pages(&req, MAX_PAGES).await?;
    if cut {
        let agent = crate::text::one_line(&client.name);
        out::error(&format!(
            "a2a-watch: {agent}: the listing stopped at {MAX_PAGES} pages; the agent offered more"
        ));
    }
    if json {
        for t in &tasks {
            out::line(&EventLine::new(&client.name, "task", &TaskLine::from_task(t)).to_json());
        }
    } else {
        out::print(&print::task_table(&tasks));
    }
    Ok(())
}

/// `send`: a message that starts a task.
pub async fn send(
    conn: &ConnArgs,
    url: &str,
    text: Option<String>,
    parts: &PartArgs,
    context: Option<String>,
    follow: bool,
    no_wait: bool,
) -> Result<(), Error> {
    // Read the files before connecting: a missing one is the user's to mend, not the agent's.
    let parts = message_parts(text, parts)?;
    let client = conn.connect(url).await?;
    let mut message = Message::user(parts);
    message.context_id = context;
    let req = if no_wait {
        SendMessageRequest::without_waiting(message)
    } else {
        SendMessageRequest::new(message)
    };
    deliver(&client, &req, follow, false).await
}

/// `reply`: the answer to a task waiting for input, on the same task and context.
pub async fn reply(conn: &ConnArgs, args: ReplyArgs) -> Result<(), Error> {
    let ReplyArgs {
        url,
        task_id,
        text,
        parts,
        approve,
        deny,
        connected,
        value,
        message_id,
        follow,
        force,
    } = args;
    let answer = match (approve, deny, connected, value) {
        (true, _, _, _) => Some(Answer::Approved(true)),
        (_, true, _, _) => Some(Answer::Approved(false)),
        (_, _, Some(c), _) => Some(Answer::Connected(c)),
        (_, _, _, Some(v)) => Some(Answer::Value(v)),
        _ => None,
    };
    if answer.is_some() && !(parts.data.is_empty() && parts.file.is_empty()) {
        return Err(Error::Usage(
            "--data and --file go with a text answer, not with --approve, --deny, --connected or --value".into(),
        ));
    }
    let has_text = text.is_some();
    let extra = message_parts(None, &parts)?;
    let client = conn.connect(&url).await?;
    let task = client.get_task(&task_id, Some(0)).await?;
    let mut message = reply_message(&task, text, answer, message_id, force)?;
    if !extra.is_empty() {
        // Without text, the answer is the parts alone, not an empty text part before them.
        if !has_text {
            message.parts.retain(|p| p.as_text().is_none_or(|t| !t.is_empty()));
        }
        message.parts.extend(extra);
    }
    deliver(
        &client,
        &SendMessageRequest {
            message,
            ..Default::default()
        },
        follow,
        true,
    )
    .await
}

/// `get`: one task, in detail or as JSON; with `save_to`, its artifacts written as files and
/// what was written said instead.
pub async fn get(
    conn: &ConnArgs,
    url: &str,
    task_id: &str,
    history: Option<u32>,
    json: bool,
    save_to: Option<(&std::path::Path, bool)>,
) -> Result<(), Error> {
    let client = conn.connect(url).await?;
    let task = client.get_task(task_id, history).await?;
    match save_to {
        Some((dir, force)) => {
            let saved = artifacts::save(&task.artifacts, dir, force)?;
            show(json, &saved, || saved.describe());
        }
        None => show(json, &task, || print::task_detail(&task)),
    }
    Ok(())
}

/// One value as pretty JSON (`--json`), or as text for a reader.
fn show(json: bool, value: &impl Serialize, text: impl FnOnce() -> String) {
    if json {
        out::line(&ndjson::to_json_pretty(value));
    } else {
        out::print(&text());
    }
}

/// `cancel`: CancelTask, and the task as it stands after.
pub async fn cancel(conn: &ConnArgs, url: &str, task_id: &str) -> Result<(), Error> {
    let client = conn.connect(url).await?;
    let task = client.cancel_task(task_id).await?;
    out::line(&EventLine::new(&client.name, "task", &TaskLine::from_task(&task)).to_json());
    Ok(())
}

fn parse_state(s: &str) -> Result<TaskState, Error> {
    match TaskState::from_name(s) {
        TaskState::Unknown(name) => Err(Error::Usage(format!(
            "--state {name:?} is not a task state (submitted, working, input-required, auth-required, completed, failed, canceled, rejected)"
        ))),
        state => Ok(state),
    }
}

/// The answer to an interrupted task, built by `interactions::reply` as the dashboard builds it
/// (text on the same task and context, spec section 3.4.3, or an interactions/v1 answer), so the
/// same answer sent from both gets the same messageId and is answered once; `--message-id`
/// overrides it. A task that is no longer waiting is not answered.
fn reply_message(
    task: &Task,
    text: Option<String>,
    answer: Option<Answer>,
    message_id: Option<String>,
    force: bool,
) -> Result<Message, Error> {
    let state = &task.status.state;
    let no_interaction = || {
        Error::Usage(format!(
            "task {} ({state}) has no open interactions/v1 interaction; nothing sent",
            task.id
        ))
    };
    let answer = match answer {
        None if !force && *state != TaskState::InputRequired => {
            return Err(Error::Usage(format!(
                "task {} is {state}, not waiting for input; nothing sent (--force sends anyway)",
                task.id
            )));
        }
        None => Answer::Value(text.unwrap_or_default()),
        Some(_) if task.status.message.as_ref().and_then(Interaction::of).is_none() => {
            return Err(no_interaction());
        }
        Some(_) if !force && !state.is_interrupted() => {
            return Err(Error::Usage(format!(
                "task {} is {state}, no longer waiting; nothing sent",
                task.id
            )));
        }
        Some(answer) => answer,
    };
    interactions::reply(&task.id, &task.context_id, &task.status, &answer, message_id.as_deref())
        .ok_or_else(no_interaction)
}

/// Sends a message and prints what comes back: one line, or every event with `follow`.
async fn deliver(client: &Client, req: &SendMessageRequest, follow: bool, continues_task: bool) -> Result<(), Error> {
    if follow {
        return Ok(follow::send_and_follow(client, req, continues_task).await?);
    }
    let result = client.send_message(req).await?;
    let mut line = TaskLine::default();
    line.apply(&result);
    let kind = if matches!(result, StreamResponse::Message(_)) {
        "message"
    } else {
        "task"
    };
    out::line(&EventLine::new(&client.name, kind, &line).to_json());
    Ok(())
}
