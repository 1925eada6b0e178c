//! The interactions/v1 extension (third seed): structured approvals, questions and connection
//! requests on an interrupted task's status message, answered in-band on the same task.

use serde_json::{Map, Value, json};

use super::INTERACTIONS_EXTENSION;
use super::types::{Message, Part, Task};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A held tool call: answer `approved` true or false (TASK_STATE_AUTH_REQUIRED).
    Approval,
    /// Any JSON value answers it (TASK_STATE_INPUT_REQUIRED).
    Question,
    /// `{"connected": bool}` once the app is connected (TASK_STATE_AUTH_REQUIRED).
    Connection,
    Other(String),
}

/// The open interaction of a status message.
#[derive(Debug, Clone, PartialEq)]
pub struct Interaction {
    pub id: String,
    pub kind: Kind,
    pub prompt: String,
    /// A held call's `server`, `tool`, `reason`, or a connection's `app`, `reason`.
    pub detail: Map<String, Value>,
}

impl Interaction {
    /// Reads `metadata[URI]` of a status message, if it carries the extension.
    pub fn of(message: &Message) -> Option<Interaction> {
        let meta = message.metadata.as_ref()?.get(INTERACTIONS_EXTENSION)?.as_object()?;
        let text = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let kind = match text("kind").as_str() {
            "approval" => Kind::Approval,
            "question" => Kind::Question,
            "connection" => Kind::Connection,
            other => Kind::Other(other.to_string()),
        };
        let prompt = Some(text("prompt"))
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| message.text());
        Some(Interaction {
            id: text("interactionId"),
            kind,
            prompt,
            detail: meta
                .get("detail")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// `server / tool` for an approval, `app` for a connection, for one line of a pane.
    pub fn subject(&self) -> Option<String> {
        let get = |k: &str| self.detail.get(k).and_then(Value::as_str).map(str::to_string);
        match self.kind {
            Kind::Approval => match (get("server"), get("tool")) {
                (Some(s), Some(t)) => Some(format!("{s} / {t}")),
                (s, t) => s.or(t),
            },
            Kind::Connection => get("app"),
            _ => None,
        }
    }
}

/// What a person answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Approved(bool),
    Connected(bool),
    /// A question's answer: sent as JSON data when it parses as JSON, as text otherwise.
    Value(String),
}

/// The answer message: on the task's taskId and contextId, the extension listed in
/// `message.extensions` and its metadata carrying the interactionId (third seed, "The answer").
/// `message_id` is the answer's idempotency key: a retry must reuse it.
pub fn answer(task: &Task, interaction: &Interaction, answer: &Answer, message_id: &str) -> Message {
    let (part, field) = match answer {
        Answer::Approved(b) => (Part::data(json!({"approved": b})), ("approved", json!(b))),
        Answer::Connected(b) => (Part::data(json!({"connected": b})), ("value", json!({"connected": b}))),
        Answer::Value(text) => match serde_json::from_str::<Value>(text.trim()) {
            Ok(v) if !text.trim().is_empty() => (Part::data(v.clone()), ("value", v)),
            _ => (Part::text(text.clone()), ("value", Value::String(text.clone()))),
        },
    };
    let mut meta = Map::new();
    meta.insert("interactionId".into(), Value::String(interaction.id.clone()));
    meta.insert(field.0.into(), field.1);
    let mut metadata = Map::new();
    metadata.insert(INTERACTIONS_EXTENSION.into(), Value::Object(meta));
    let mut m = Message::on_task(vec![part], &task.id, &task.context_id);
    m.message_id = message_id.to_string();
    m.extensions = vec![INTERACTIONS_EXTENSION.to_string()];
    m.metadata = Some(metadata);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::PartContent;

    fn approval_message() -> Message {
        serde_json::from_value(json!({
            "role": "ROLE_AGENT",
            "parts": [{"text": "Approve github / create_pull_request?"}],
            "extensions": [INTERACTIONS_EXTENSION],
            "metadata": {INTERACTIONS_EXTENSION: {
                "interactionId": "eff_01J", "kind": "approval", "prompt": "Approve github / create_pull_request?",
                "detail": {"server": "github", "tool": "create_pull_request"}}}
        }))
        .unwrap()
    }

    #[test]
    fn the_open_interaction_is_read_from_the_status_message() {
        let i = Interaction::of(&approval_message()).unwrap();
        assert_eq!(i.kind, Kind::Approval);
        assert_eq!(i.id, "eff_01J");
        assert_eq!(i.subject().as_deref(), Some("github / create_pull_request"));
        assert!(Interaction::of(&Message::agent(vec![Part::text("plain")])).is_none());
    }

    #[test]
    fn answers_carry_the_ids_the_extension_and_the_key() {
        let task = Task {
            id: "t1".into(),
            context_id: "ticket-4821".into(),
            ..Default::default()
        };
        let i = Interaction::of(&approval_message()).unwrap();
        let m = answer(&task, &i, &Answer::Approved(true), "m-2");
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(
            v,
            json!({"messageId": "m-2", "role": "ROLE_USER", "taskId": "t1", "contextId": "ticket-4821",
                   "parts": [{"data": {"approved": true}}], "extensions": [INTERACTIONS_EXTENSION],
                   "metadata": {INTERACTIONS_EXTENSION: {"interactionId": "eff_01J", "approved": true}}})
        );
    }

    #[test]
    fn question_values_are_json_when_they_parse() {
        let task = Task {
            id: "t".into(),
            ..Default::default()
        };
        let i = Interaction {
            id: "q".into(),
            kind: Kind::Question,
            prompt: "Which repo?".into(),
            detail: Map::new(),
        };
        let as_json = answer(&task, &i, &Answer::Value("{\"repo\": \"a2a-watch\"}".into()), "m");
        assert_eq!(
            as_json.parts[0].content,
            PartContent::Data(json!({"repo": "a2a-watch"}))
        );
        let as_text = answer(&task, &i, &Answer::Value("a2a-watch please".into()), "m");
        assert_eq!(as_text.parts[0].content, PartContent::Text("a2a-watch please".into()));
        let connected = answer(&task, &i, &Answer::Connected(false), "m");
        assert_eq!(
            connected.metadata.unwrap()[INTERACTIONS_EXTENSION]["value"],
            json!({"connected": false})
        );
    }
}
