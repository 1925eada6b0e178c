//! `assistant`: speaks interactions/v1 (docs/protocol-notes.md, "interactions/v1"). Default flow: a
//! question (INPUT_REQUIRED), an approval of github / create_pull_request (AUTH_REQUIRED), a slack
//! connection (AUTH_REQUIRED), then a summary. A request mentioning `approval` starts at the
//! approval, `connect` at the connection. Every interruption carries the open interaction in the
//! status message's metadata under the extension URI, and is answered by a message on the same
//! task.

use serde_json::{Map, Value, json};

use super::card::{Preferred, card, skill};
use super::error::{ApiError, ApiResult};
use super::scenario::{
    Next, Scenario, Step, TaskContext, Turn, artifact, json_data, lowered_text, plain_text, status, working,
};
use crate::a2a::card::{AgentCard, AgentExtension};
use crate::a2a::{INTERACTIONS_EXTENSION, Message, Part, PartContent, TaskState};

pub struct Assistant;

impl Scenario for Assistant {
    fn card(&self, base_url: &str) -> AgentCard {
        let mut card = card(
            base_url,
            "assistant",
            "Opens pull requests and posts release summaries; asks before it acts.",
            Preferred::JsonRpc,
            vec![skill(
                "open-pull-request",
                "Open a pull request",
                "Opens a pull request and posts the summary to #releases, asking first",
                &["github", "slack"],
                &[
                    "open a pull request for the release notes",
                    "approval: open the pull request",
                    "connect slack and post the summary",
                ],
            )],
        );
        card.default_input_modes.push("application/json".into());
        card.capabilities.extensions = vec![AgentExtension {
            uri: INTERACTIONS_EXTENSION.into(),
            description: Some("Structured questions, approvals and connection requests on interrupted tasks".into()),
            required: false,
            params: None,
        }];
        card
    }

    fn start(&self, _task: &TaskContext, request: &Message) -> Turn {
        let text = lowered_text(request);
        let first = if text.contains("approval") {
            Stage::Approval
        } else if text.contains("connect") {
            Stage::Connection
        } else {
            Stage::Question
        };
        ask(first, Answers::default(), working("planning the change"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    Question,
    Approval,
    Connection,
}

impl Stage {
    fn kind(self) -> &'static str {
        match self {
            Stage::Question => "question",
            Stage::Approval => "approval",
            Stage::Connection => "connection",
        }
    }

    /// The extension's table (docs/protocol-notes.md, "interactions/v1"): a question waits for
    /// input, approvals and connections for authorization.
    fn state(self) -> TaskState {
        match self {
            Stage::Question => TaskState::InputRequired,
            Stage::Approval | Stage::Connection => TaskState::AuthRequired,
        }
    }

    fn prompt(self) -> &'static str {
        match self {
            Stage::Question => "Which repository should I open the pull request against?",
            Stage::Approval => "Approve github / create_pull_request?",
            Stage::Connection => "Connect slack: post the summary to #releases",
        }
    }

    fn detail(self) -> Option<Value> {
        match self {
            Stage::Question => None,
            Stage::Approval => Some(json!({"server": "github", "tool": "create_pull_request"})),
            Stage::Connection => Some(json!({"app": "slack", "reason": "post the summary to #releases"})),
        }
    }

    fn after(self) -> Option<Stage> {
        match self {
            Stage::Question => Some(Stage::Approval),
            Stage::Approval => Some(Stage::Connection),
            Stage::Connection => None,
        }
    }
}

/// What the person said so far; `None` for a step the flow skipped.
#[derive(Clone, Debug, Default, PartialEq)]
struct Answers {
    repository: Option<String>,
    approved: Option<bool>,
    connected: Option<bool>,
}

/// Pauses on `stage`, with the open interaction on the status message (docs/protocol-notes.md,
/// "interactions/v1").
fn ask(stage: Stage, answers: Answers, lead: Step) -> Turn {
    let interaction_id = format!("{}-{}", stage.kind(), uuid::Uuid::new_v4());
    let mut open = json!({
        "interactionId": interaction_id,
        "kind": stage.kind(),
        "prompt": stage.prompt(),
    });
    if let Some(detail) = stage.detail() {
        open["detail"] = detail;
    }
    let message = Message {
        extensions: vec![INTERACTIONS_EXTENSION.into()],
        metadata: Some(Map::from_iter([(INTERACTIONS_EXTENSION.to_string(), open)])),
        ..Message::agent(vec![Part::text(stage.prompt())])
    };
    let answer = move |reply: &Message| {
        let answers = record(stage, answers.clone(), reply, &interaction_id)?;
        Ok(resume_after(stage, answers))
    };
    Turn::new(
        vec![lead, Step::Status(stage.state(), message)],
        Next::Reply(Box::new(answer)),
    )
}

/// Answered, the task goes back to WORKING on the same task (docs/protocol-notes.md,
/// "interactions/v1").
fn resume_after(stage: Stage, answers: Answers) -> Turn {
    let note = working(match stage {
        Stage::Question => format!(
            "opening the pull request against {}",
            answers.repository.as_deref().unwrap_or_default()
        ),
        Stage::Approval if answers.approved == Some(true) => "creating the pull request".into(),
        Stage::Approval => "create_pull_request was denied (tool.denied)".into(),
        Stage::Connection if answers.connected == Some(true) => "Connected: slack".into(),
        Stage::Connection => "Not connected: slack".into(),
    });
    match stage.after() {
        Some(next) => ask(next, answers, note),
        None => finish(&answers, note),
    }
}

fn finish(answers: &Answers, lead: Step) -> Turn {
    let mut lines = Vec::new();
    let mut data = Map::new();
    if let Some(repository) = &answers.repository {
        lines.push(format!("repository: {repository}"));
        data.insert("repository".into(), json!(repository));
    }
    if let Some(approved) = answers.approved {
        let outcome = if approved { "approved" } else { "tool.denied" };
        lines.push(format!("github / create_pull_request: {outcome}"));
        data.insert("createPullRequest".into(), json!(outcome));
    }
    if let Some(connected) = answers.connected {
        let outcome = if connected { "connected" } else { "not connected" };
        lines.push(format!("slack: {outcome}"));
        data.insert("slack".into(), json!(outcome));
    }
    let summary = lines.join("; ");
    Turn::last(vec![
        lead,
        artifact(
            "summary",
            "summary.json",
            vec![plain_text(summary.clone()), json_data(Value::Object(data))],
        ),
        status(TaskState::Completed, summary),
    ])
}

/// Reads the reply to the open interaction into the answers, or refuses it (task unchanged).
fn record(stage: Stage, mut answers: Answers, reply: &Message, interaction_id: &str) -> ApiResult<Answers> {
    let reading = Reading::of(reply);
    if let Some(named) = reading.interaction_id()
        && named != interaction_id
    {
        return Err(ApiError::invalid_params(format!(
            "interaction {named} is not open; {interaction_id} is"
        )));
    }
    match stage {
        Stage::Approval => answers.approved = Some(reading.approval()?),
        Stage::Question => {
            answers.repository = Some(match reading.value()? {
                Value::String(text) => text,
                other => other.to_string(),
            })
        }
        Stage::Connection => {
            // `true` or `{"connected": true}` connects; any other value declines
            // (docs/protocol-notes.md, "interactions/v1").
            let value = reading.value()?;
            let connected =
                value.as_bool() == Some(true) || value.get("connected").and_then(Value::as_bool) == Some(true);
            answers.connected = Some(connected);
        }
    }
    Ok(answers)
}

/// Where an answer can stand: metadata[URI] on the message, a data part, or text.
struct Reading<'a> {
    extension: Option<&'a Map<String, Value>>,
    data: Option<&'a Value>,
    text: String,
}

impl<'a> Reading<'a> {
    fn of(reply: &'a Message) -> Reading<'a> {
        Reading {
            extension: reply
                .metadata
                .as_ref()
                .and_then(|m| m.get(INTERACTIONS_EXTENSION))
                .and_then(Value::as_object),
            data: reply.parts.iter().find_map(|p| match &p.content {
                PartContent::Data(value) => Some(value),
                _ => None,
            }),
            text: reply.text().trim().to_string(),
        }
    }

    fn interaction_id(&self) -> Option<&'a str> {
        self.extension?.get("interactionId")?.as_str()
    }

    /// A named answer field, from the extension metadata first, then from a data part object.
    fn field(&self, name: &str) -> Option<&'a Value> {
        self.extension
            .and_then(|e| e.get(name))
            .or_else(|| self.data.and_then(|d| d.get(name)))
    }

    /// `approved`, or a boolean `value`, or a boolean data part. Text never approves.
    fn approval(&self) -> ApiResult<bool> {
        let found = [self.field("approved"), self.field("value"), self.data]
            .into_iter()
            .flatten()
            .find_map(Value::as_bool);
        match found {
            Some(approved) => Ok(approved),
            // The request is well formed but its params cannot answer this question: invalid
            // params (-32602), not an operation the agent lacks (issue 13).
            None if self.data.is_none() && self.extension.is_none() => Err(ApiError::invalid_params(
                "a text reply cannot approve: answer with approved: true or false",
            )),
            None => Err(ApiError::invalid_params(
                "an approval is answered with approved: true or false",
            )),
        }
    }

    /// `value` (or `approved`, read as the value), else the data part, else the text.
    fn value(&self) -> ApiResult<Value> {
        self.field("value")
            .or_else(|| self.field("approved"))
            .or(self.data)
            .cloned()
            .or_else(|| (!self.text.is_empty()).then(|| Value::String(self.text.clone())))
            .ok_or_else(|| ApiError::invalid_params("answer with text or a value"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::ErrorKind;
    use crate::demo::scenario::start_with;

    fn start(text: &str) -> Turn {
        start_with(&Assistant, text)
    }

    /// The open interaction of a turn's last step, and the state it pauses in.
    fn open(turn: &Turn) -> (TaskState, Value) {
        let Some(Step::Status(state, message)) = turn.steps.last() else {
            panic!("ends in a status")
        };
        assert_eq!(message.extensions, [INTERACTIONS_EXTENSION]);
        let meta = message.metadata.as_ref().expect("metadata")[INTERACTIONS_EXTENSION].clone();
        assert_eq!(message.text(), meta["prompt"].as_str().unwrap());
        (state.clone(), meta)
    }

    fn reply(turn: &Turn, message: Message) -> ApiResult<Turn> {
        let Next::Reply(answer) = &turn.then else {
            panic!("waits for a reply")
        };
        answer(&message)
    }

    fn data(value: Value) -> Message {
        Message::user(vec![Part::data(value)])
    }

    fn text(t: &str) -> Message {
        Message::user(vec![Part::text(t)])
    }

    fn summary(turn: &Turn) -> Value {
        turn.steps
            .iter()
            .find_map(|s| match s {
                Step::Artifact { artifact, .. } => match &artifact.parts[1].content {
                    PartContent::Data(v) => Some(v.clone()),
                    _ => None,
                },
                _ => None,
            })
            .expect("a summary artifact")
    }

    #[test]
    fn the_default_flow_asks_approves_connects_and_summarizes() {
        let question = start("open a pull request");
        let (state, meta) = open(&question);
        assert_eq!(state, TaskState::InputRequired);
        assert_eq!(meta["kind"], "question");

        let approval = reply(&question, text("acme/payments-api")).unwrap();
        let (state, meta) = open(&approval);
        assert_eq!(state, TaskState::AuthRequired);
        assert_eq!(
            meta["detail"],
            json!({"server": "github", "tool": "create_pull_request"})
        );

        let id = meta["interactionId"].as_str().unwrap();
        let answer = Message {
            metadata: Some(Map::from_iter([(
                INTERACTIONS_EXTENSION.to_string(),
                json!({"interactionId": id, "approved": false}),
            )])),
            ..data(json!({"approved": false}))
        };
        let connection = reply(&approval, answer).unwrap();
        let (state, meta) = open(&connection);
        assert_eq!(
            (state, meta["kind"].clone()),
            (TaskState::AuthRequired, json!("connection"))
        );

        let done = reply(&connection, data(json!({"value": {"connected": true}}))).unwrap();
        assert!(matches!(done.then, Next::End));
        assert_eq!(
            summary(&done),
            json!({"repository": "acme/payments-api", "createPullRequest": "tool.denied", "slack": "connected"})
        );
    }

    #[test]
    fn text_never_approves_and_a_wrong_interaction_is_refused() {
        let approval = start("approval: open it");
        assert_eq!(open(&approval).1["kind"], "approval");
        let refused = reply(&approval, text("yes")).err().unwrap();
        assert_eq!(refused.kind, ErrorKind::InvalidParams);
        let stale = Message {
            metadata: Some(Map::from_iter([(
                INTERACTIONS_EXTENSION.to_string(),
                json!({"interactionId": "approval-old", "approved": true}),
            )])),
            ..text("")
        };
        assert_eq!(reply(&approval, stale).err().unwrap().kind, ErrorKind::InvalidParams);
        // A boolean `value` is read as `approved`.
        let next = reply(&approval, data(json!({"value": true}))).unwrap();
        assert_eq!(open(&next).1["kind"], "connection");
    }

    #[test]
    fn connect_starts_at_the_connection_and_true_connects() {
        let connection = start("connect slack");
        assert_eq!(open(&connection).1["kind"], "connection");
        let done = reply(&connection, data(json!(true))).unwrap();
        assert_eq!(summary(&done), json!({"slack": "connected"}));
        let declined = reply(&connection, text("later")).unwrap();
        assert_eq!(summary(&declined), json!({"slack": "not connected"}));
    }
}
