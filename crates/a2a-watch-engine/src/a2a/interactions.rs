//! The interactions/v1 extension (docs/protocol-notes.md, "interactions/v1"): structured approvals,
//! questions and connection requests on an interrupted task's status message, answered in-band on
//! the same task.

use serde_json::{Map, Value, json};

use super::INTERACTIONS_EXTENSION;
use super::types::{Message, Part, TaskStatus};

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

impl Answer {
    /// What the answer says, for its messageId: two answers that say the same get the same
    /// key, an approve and a deny never do. A value is keyed by a fingerprint of its text
    /// (trimmed, the way it is sent), not the text itself, so the id stays short.
    fn key(&self) -> String {
        match self {
            Answer::Approved(true) => "approve".into(),
            Answer::Approved(false) => "deny".into(),
            Answer::Connected(true) => "connected".into(),
            Answer::Connected(false) => "not-connected".into(),
            Answer::Value(text) => format!("value:{:016x}", fingerprint(text.trim().as_bytes())),
        }
    }
}

/// The answer's messageId, the one rule the CLI (`reply`) and the dashboard share, so the same
/// answer to the same question sent from both is answered once (the messageId is the answer's
/// idempotency key: spec section 3.4.3 and the interactions/v1 extension, "The answer"):
///
/// - an open interactions/v1 interaction: `answer:<interactionId>:<what>`, where `<what>` is
///   `approve`, `deny`, `connected`, `not-connected`, or `value:<fingerprint>` for a value;
/// - any other question (plain INPUT_REQUIRED, or an interaction without an id):
///   `reply:<taskId>:<question>:<what>`, where `<question>` is the status message's messageId,
///   else `at<status timestamp>`, else `q<fingerprint of the status message>`.
///
/// So a retry of the same answer reuses its id (answered once), while a different answer (a
/// deny after an approve, an edited text) or another question (a new interaction, a new status
/// message) gets another id and can never be swallowed as a duplicate of the first. The
/// fingerprint is 64-bit FNV-1a: stable across builds and machines, which is all it needs.
pub fn message_id(task_id: &str, status: &TaskStatus, answer: &Answer) -> String {
    let what = answer.key();
    let message = status.message.as_ref();
    if let Some(i) = message.and_then(Interaction::of).filter(|i| !i.id.is_empty()) {
        return format!("answer:{}:{what}", i.id);
    }
    let question = match (message.filter(|m| !m.message_id.is_empty()), status.timestamp) {
        (Some(m), _) => m.message_id.clone(),
        (None, Some(at)) => format!("at{}", at.as_microsecond()),
        (None, None) => format!("q{:016x}", fingerprint_of(&status.message)),
    };
    format!("reply:{task_id}:{question}:{what}")
}

/// 64-bit FNV-1a of some bytes.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut hasher = Fnv::default();
    hasher.eat(bytes);
    hasher.0
}

/// 64-bit FNV-1a of a value's JSON, written straight into the hash (nothing is allocated).
pub fn fingerprint_of(value: &impl serde::Serialize) -> u64 {
    let mut hasher = Fnv::default();
    // Writing into the hasher cannot fail; a value that does not serialize hashes what it wrote.
    let _ = serde_json::to_writer(&mut hasher, value);
    hasher.0
}

struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.eat(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The message that answers an interrupted task, the one builder the CLI and the dashboard share.
///
/// - A value to an open `question`, or an approve / deny / connected answer to any open
///   interaction, is an interactions/v1 answer to that interaction (see [`answer`]). The
///   extension reads `approved` and `value` across kinds ("The answer": `approved` on a question
///   or connection is read as its value), so a structured answer never needs the kinds to match.
/// - Any other value is plain text on the same taskId and contextId (spec section 3.4.3): text
///   never answers an approval or a connection request.
/// - With no open interaction, an approve / deny / connected answer has nowhere to go: `None`.
///
/// The messageId is `message_id` when given (an explicit override such as `reply
/// --message-id`), else [`message_id`] of the status the answer is to.
pub fn reply(
    task_id: &str,
    context_id: &str,
    status: &TaskStatus,
    answer: &Answer,
    message_id: Option<&str>,
) -> Option<Message> {
    let message_id = message_id.map_or_else(|| self::message_id(task_id, status, answer), str::to_string);
    let open = status.message.as_ref().and_then(Interaction::of);
    match (open, answer) {
        (Some(i), Answer::Value(_)) if i.kind == Kind::Question => {
            Some(self::answer(task_id, context_id, &i, answer, &message_id))
        }
        (_, Answer::Value(text)) => {
            let mut m = Message::on_task(vec![Part::text(text.clone())], task_id, context_id);
            m.message_id = message_id;
            Some(m)
        }
        (Some(i), _) => Some(self::answer(task_id, context_id, &i, answer, &message_id)),
        (None, _) => None,
    }
}

/// The answer message: on the task's taskId and contextId, the extension listed in
/// `message.extensions` and its metadata carrying the interactionId (docs/protocol-notes.md,
/// "interactions/v1"). `message_id` is the answer's idempotency key (see [`message_id`]): a retry
/// must reuse it.
fn answer(task_id: &str, context_id: &str, interaction: &Interaction, answer: &Answer, message_id: &str) -> Message {
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
    let mut m = Message::on_task(vec![part], task_id, context_id);
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
        let i = Interaction::of(&approval_message()).unwrap();
        let m = answer("t1", "ticket-4821", &i, &Answer::Approved(true), "m-2");
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
        let i = Interaction {
            id: "q".into(),
            kind: Kind::Question,
            prompt: "Which repo?".into(),
            detail: Map::new(),
        };
        let as_json = answer("t", "", &i, &Answer::Value("{\"repo\": \"a2a-watch\"}".into()), "m");
        assert_eq!(
            as_json.parts[0].content,
            PartContent::Data(json!({"repo": "a2a-watch"}))
        );
        let as_text = answer("t", "", &i, &Answer::Value("a2a-watch please".into()), "m");
        assert_eq!(as_text.parts[0].content, PartContent::Text("a2a-watch please".into()));
        let connected = answer("t", "", &i, &Answer::Connected(false), "m");
        assert_eq!(
            connected.metadata.unwrap()[INTERACTIONS_EXTENSION]["value"],
            json!({"connected": false})
        );
    }

    fn status(state: crate::a2a::TaskState, message: Message) -> TaskStatus {
        TaskStatus {
            state,
            message: Some(message),
            timestamp: None,
        }
    }

    fn question_message() -> Message {
        let mut m = approval_message();
        m.metadata = Some(
            serde_json::from_value(json!({INTERACTIONS_EXTENSION: {
            "interactionId": "q_7", "kind": "question", "prompt": "Which repo?"}}))
            .unwrap(),
        );
        m
    }

    #[test]
    fn a_value_to_an_open_question_is_an_interaction_answer() {
        let asked = status(crate::a2a::TaskState::InputRequired, question_message());
        let value = Answer::Value("{\"repo\": \"a2a-watch\"}".into());
        let m = reply("t1", "ticket-4821", &asked, &value, None).unwrap();
        assert_eq!(m.message_id, message_id("t1", &asked, &value));
        assert!(m.message_id.starts_with("answer:q_7:value:"), "{}", m.message_id);
        assert_eq!(m.extensions, [INTERACTIONS_EXTENSION]);
        let meta = &m.metadata.as_ref().unwrap()[INTERACTIONS_EXTENSION];
        assert_eq!(meta["interactionId"], "q_7");
        assert_eq!(meta["value"], json!({"repo": "a2a-watch"}));
        assert_eq!(
            (m.task_id.as_deref(), m.context_id.as_deref()),
            (Some("t1"), Some("ticket-4821"))
        );
    }

    #[test]
    fn text_to_anything_but_a_question_is_plain_text_on_the_same_task() {
        let approval = status(crate::a2a::TaskState::AuthRequired, approval_message());
        let mut plain = Message::agent(vec![Part::text("Which base branch?")]);
        plain.message_id = "s-1".into();
        let plain = status(crate::a2a::TaskState::InputRequired, plain);
        for waiting in [&approval, &plain] {
            let text = Answer::Value("true".into());
            let m = reply("t1", "c1", waiting, &text, None).unwrap();
            assert_eq!(m.parts, [Part::text("true")], "text never approves");
            assert!(m.extensions.is_empty() && m.metadata.is_none(), "{m:?}");
            assert_eq!(
                (m.task_id.as_deref(), m.context_id.as_deref()),
                (Some("t1"), Some("c1"))
            );
            assert_eq!(m.message_id, message_id("t1", waiting, &text));
        }
        let no_context = reply("t1", "", &plain, &Answer::Value("main".into()), None).unwrap();
        assert_eq!(no_context.context_id, None);
    }

    #[test]
    fn structured_answers_go_to_the_open_interaction_or_nowhere() {
        let approval = status(crate::a2a::TaskState::AuthRequired, approval_message());
        let denied = reply("t1", "c1", &approval, &Answer::Approved(false), None).unwrap();
        assert_eq!(denied.message_id, "answer:eff_01J:deny");
        assert_eq!(denied.parts, [Part::data(json!({"approved": false}))]);
        assert_eq!(
            denied.metadata.unwrap()[INTERACTIONS_EXTENSION]["interactionId"],
            "eff_01J"
        );
        let overridden = reply("t1", "c1", &approval, &Answer::Approved(true), Some("answer-1")).unwrap();
        assert_eq!(overridden.message_id, "answer-1");
        assert_eq!(overridden.parts, [Part::data(json!({"approved": true}))]);

        let working = status(crate::a2a::TaskState::Working, Message::agent(vec![Part::text("busy")]));
        assert_eq!(reply("t1", "c1", &working, &Answer::Approved(true), None), None);
        assert_eq!(reply("t1", "c1", &working, &Answer::Connected(true), None), None);
        let silent = TaskStatus {
            state: crate::a2a::TaskState::AuthRequired,
            message: None,
            timestamp: None,
        };
        assert_eq!(reply("t1", "c1", &silent, &Answer::Approved(true), None), None);
    }

    #[test]
    fn the_same_answer_to_the_same_question_has_one_id_and_anything_else_another() {
        let waiting = |message: Option<Message>, at: Option<jiff::Timestamp>| TaskStatus {
            state: crate::a2a::TaskState::AuthRequired,
            message,
            timestamp: at,
        };
        let approval = waiting(Some(approval_message()), None);
        let id = |status: &TaskStatus, a: Answer| message_id("t1", status, &a);
        assert_eq!(id(&approval, Answer::Approved(true)), "answer:eff_01J:approve");
        assert_eq!(id(&approval, Answer::Approved(false)), "answer:eff_01J:deny");
        assert_eq!(id(&approval, Answer::Connected(false)), "answer:eff_01J:not-connected");
        let value = id(&approval, Answer::Value("main".into()));
        assert!(value.starts_with("answer:eff_01J:value:"), "{value}");
        assert_eq!(value, id(&approval, Answer::Value(" main\n".into())), "trimmed as sent");
        assert_ne!(value, id(&approval, Answer::Value("dev".into())), "another answer");

        let mut question = Message::agent(vec![Part::text("Which base branch?")]);
        question.message_id = "s-1".into();
        let plain = waiting(Some(question.clone()), None);
        let main = id(&plain, Answer::Value("main".into()));
        assert!(main.starts_with("reply:t1:s-1:value:"), "{main}");
        assert_ne!(
            main,
            message_id("t2", &plain, &Answer::Value("main".into())),
            "another task"
        );
        // No message id: the status timestamp tells the questions apart, else the message itself.
        question.message_id.clear();
        let at = |secs| Some(jiff::Timestamp::from_second(secs).unwrap());
        let first = id(&waiting(Some(question.clone()), at(100)), Answer::Value("main".into()));
        assert!(first.starts_with("reply:t1:at100000000:"), "{first}");
        assert_ne!(
            first,
            id(&waiting(Some(question.clone()), at(200)), Answer::Value("main".into()))
        );
        let unstamped = id(&waiting(Some(question.clone()), None), Answer::Value("main".into()));
        question.parts = vec![Part::text("Which release branch?")];
        assert_ne!(
            unstamped,
            id(&waiting(Some(question), None), Answer::Value("main".into()))
        );
        // An interaction without an id is keyed by the task's question, never shared across tasks.
        let mut anonymous = approval_message();
        anonymous.metadata.as_mut().unwrap()[INTERACTIONS_EXTENSION]["interactionId"] = json!("");
        let key = id(&waiting(Some(anonymous), at(1)), Answer::Approved(true));
        assert!(key.starts_with("reply:t1:"), "{key}");
    }
}
