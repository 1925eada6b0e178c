//! The task-side data model (proto Task, Message, Part, Artifact and the stream events). One
//! decoder reads both 1.0 and 0.3 shapes into these types; they always encode as 1.0. `v03` in the
//! client turns them into 0.3 shapes where an agent needs it.

use std::borrow::Cow;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::lenient;
use super::state::EnumVisitor;
pub use super::state::{StateClass, TaskState};

pub type Metadata = Map<String, Value>;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Role {
    #[default]
    Unspecified,
    User,
    Agent,
    Unknown(String),
}

impl Role {
    pub fn proto_name(&self) -> &str {
        match self {
            Role::Unspecified => "ROLE_UNSPECIFIED",
            Role::User => "ROLE_USER",
            Role::Agent => "ROLE_AGENT",
            Role::Unknown(name) => name,
        }
    }

    fn from_name(name: &str) -> Role {
        match name {
            "ROLE_USER" | "user" => Role::User,
            "ROLE_AGENT" | "agent" => Role::Agent,
            "ROLE_UNSPECIFIED" | "" => Role::Unspecified,
            other => Role::Unknown(other.to_string()),
        }
    }

    fn from_number(n: i64) -> Role {
        match n {
            0 => Role::Unspecified,
            1 => Role::User,
            2 => Role::Agent,
            other => Role::Unknown(other.to_string()),
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.proto_name())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EnumVisitor(Role::from_name, Role::from_number))
    }
}

/// One piece of content: exactly one of text, raw bytes (base64), a URL, or JSON data (proto Part).
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    Text(String),
    Raw(String),
    Url(String),
    Data(Value),
    /// A content key we do not know; kept by name so it can be shown as "unsupported part".
    Unsupported(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub content: PartContent,
    pub media_type: Option<String>,
    pub filename: Option<String>,
    pub metadata: Option<Metadata>,
}

impl Part {
    pub fn text(text: impl Into<String>) -> Part {
        Part {
            content: PartContent::Text(text.into()),
            media_type: None,
            filename: None,
            metadata: None,
        }
    }

    pub fn data(value: Value) -> Part {
        Part {
            content: PartContent::Data(value),
            media_type: None,
            filename: None,
            metadata: None,
        }
    }

    pub fn url(url: impl Into<String>) -> Part {
        Part {
            content: PartContent::Url(url.into()),
            media_type: None,
            filename: None,
            metadata: None,
        }
    }

    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// Every key either dialect may put on a part; read in one pass, then sorted out.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartWire<'a> {
    text: Option<String>,
    raw: Option<String>,
    url: Option<String>,
    #[serde(default, deserialize_with = "lenient::present")]
    data: Option<Value>,
    media_type: Option<String>,
    filename: Option<String>,
    metadata: Option<Metadata>,
    /// 0.3: `{kind:"file", file:{name?, mimeType?, bytes | uri}}`. On every 0.3 part, and only
    /// looked at: borrowed from the frame where it can be.
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    file: Option<FileWire>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileWire {
    name: Option<String>,
    mime_type: Option<String>,
    bytes: Option<String>,
    uri: Option<String>,
    // a2a-python 0.3 REST (docs/protocol-notes.md, "0.3 compatibility").
    file_with_bytes: Option<String>,
    file_with_uri: Option<String>,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = PartWire::deserialize(d)?;
        let mut media_type = w.media_type.filter(|m| !m.is_empty());
        let mut filename = w.filename.filter(|f| !f.is_empty());
        let content = if let Some(text) = w.text {
            PartContent::Text(text)
        } else if let Some(raw) = w.raw {
            PartContent::Raw(raw)
        } else if let Some(url) = w.url {
            PartContent::Url(url)
        } else if let Some(file) = w.file {
            media_type = media_type.or(file.mime_type);
            filename = filename.or(file.name);
            match (file.bytes.or(file.file_with_bytes), file.uri.or(file.file_with_uri)) {
                (Some(bytes), _) => PartContent::Raw(bytes),
                (None, Some(uri)) => PartContent::Url(uri),
                (None, None) => PartContent::Unsupported("file".into()),
            }
        } else if let Some(data) = w.data {
            PartContent::Data(data)
        } else {
            PartContent::Unsupported(w.kind.map_or_else(|| "empty".into(), Cow::into_owned))
        };
        Ok(Part {
            content,
            media_type,
            filename,
            metadata: w.metadata,
        })
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = Map::new();
        let (key, value) = match &self.content {
            PartContent::Text(t) => ("text", Value::String(t.clone())),
            PartContent::Raw(r) => ("raw", Value::String(r.clone())),
            PartContent::Url(u) => ("url", Value::String(u.clone())),
            PartContent::Data(v) => ("data", v.clone()),
            PartContent::Unsupported(_) => ("data", Value::Null),
        };
        map.insert(key.into(), value);
        if let Some(m) = &self.media_type {
            map.insert("mediaType".into(), Value::String(m.clone()));
        }
        if let Some(f) = &self.filename {
            map.insert("filename".into(), Value::String(f.clone()));
        }
        if let Some(m) = &self.metadata {
            map.insert("metadata".into(), Value::Object(m.clone()));
        }
        map.serialize(s)
    }
}

/// Joins the text parts of a message or artifact, the way a person reads them.
pub fn parts_text(parts: &[Part]) -> String {
    let texts: Vec<&str> = parts.iter().filter_map(Part::as_text).collect();
    texts.join("\n")
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Spec examples omit it on status messages (spec section 6.3; docs/protocol-notes.md,
    /// "Tolerant decoding"): default, do not drop.
    #[serde(default, deserialize_with = "lenient::text")]
    pub message_id: String,
    #[serde(default)]
    pub role: Role,
    /// a2a-python 0.3 REST names the list `content` (docs/protocol-notes.md, "0.3 compatibility").
    #[serde(default, alias = "content", deserialize_with = "lenient::list")]
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A user message with a fresh id (spec section 4.4: the sender generates it).
    pub fn user(parts: Vec<Part>) -> Message {
        Message {
            message_id: uuid::Uuid::new_v4().to_string(),
            role: Role::User,
            parts,
            ..Message::default()
        }
    }

    /// A user message that continues a task: same taskId and contextId (spec section 3.4.3).
    pub fn on_task(parts: Vec<Part>, task_id: &str, context_id: &str) -> Message {
        let mut m = Message::user(parts);
        m.task_id = Some(task_id.to_string());
        m.context_id = Some(context_id.to_string()).filter(|c| !c.is_empty());
        m
    }

    pub fn agent(parts: Vec<Part>) -> Message {
        Message {
            message_id: uuid::Uuid::new_v4().to_string(),
            role: Role::Agent,
            parts,
            ..Message::default()
        }
    }

    pub fn text(&self) -> String {
        parts_text(&self.parts)
    }

    /// The links in this message: `url` parts, and http(s) URLs inside text parts (where an
    /// AUTH_REQUIRED status tells the operator to go, spec section 7.6.1).
    pub fn links(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |link: &str| {
            if !out.iter().any(|l| l == link) {
                out.push(link.to_string());
            }
        };
        for part in &self.parts {
            match &part.content {
                PartContent::Url(u) => add(u),
                PartContent::Text(t) => {
                    for word in t.split_whitespace() {
                        if word.starts_with("http://") || word.starts_with("https://") {
                            // Sentence punctuation after a link is not part of it.
                            add(word.trim_end_matches(['.', ',', ';', ':', ')', ']', '"', '\'', '>']));
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    #[serde(default)]
    pub state: TaskState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(
        default,
        deserialize_with = "lenient::timestamp",
        serialize_with = "lenient::serialize_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    pub fn new(state: TaskState, message: Option<Message>) -> TaskStatus {
        TaskStatus {
            state,
            message,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// The status message's text parts, or "" when there is none.
    pub fn text(&self) -> String {
        self.message.as_ref().map(Message::text).unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    #[serde(default, deserialize_with = "lenient::text")]
    pub artifact_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "lenient::list")]
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub context_id: String,
    #[serde(default)]
    pub status: TaskStatus,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// A2A 1.1 (draft): the task's version, 1 more with each event; 0 when not given.
    #[serde(default, deserialize_with = "lenient::whole_number", skip_serializing_if = "is_zero")]
    pub generation: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    #[serde(default, deserialize_with = "lenient::text")]
    pub task_id: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub context_id: String,
    #[serde(default)]
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// A2A 1.1 (draft): the task's version, 1 more with each event; 0 when not given.
    #[serde(default, deserialize_with = "lenient::whole_number", skip_serializing_if = "is_zero")]
    pub generation: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    #[serde(default, deserialize_with = "lenient::text")]
    pub task_id: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub context_id: String,
    #[serde(default)]
    pub artifact: Artifact,
    /// true: add these parts to the artifact with the same id; false: new or replacing.
    #[serde(default, deserialize_with = "lenient::flag", skip_serializing_if = "is_false")]
    pub append: bool,
    #[serde(default, deserialize_with = "lenient::flag", skip_serializing_if = "is_false")]
    pub last_chunk: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// A2A 1.1 (draft): the task's version, 1 more with each event; 0 when not given.
    #[serde(default, deserialize_with = "lenient::whole_number", skip_serializing_if = "is_zero")]
    pub generation: u64,
}

impl Artifact {
    /// The text parts run together: chunks of one artifact carry their own line breaks.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(Part::as_text).collect()
    }
}

impl TaskArtifactUpdateEvent {
    /// Folds this chunk into a task's artifacts (spec section 4.7): `append` adds the parts to the
    /// artifact with the same id, otherwise the artifact is new or replaced. An append for an
    /// artifact we never saw (we joined mid-stream) starts it, rather than losing the chunk.
    /// Returns whether anything changed: a replacement equal to what is held (an artifact
    /// snapshot after its chunks) changes nothing.
    pub fn apply_to(&self, artifacts: &mut Vec<Artifact>) -> bool {
        let incoming = &self.artifact;
        match artifacts.iter_mut().find(|a| a.artifact_id == incoming.artifact_id) {
            Some(existing) if self.append => {
                let mut changed = !incoming.parts.is_empty();
                existing.parts.extend(incoming.parts.iter().cloned());
                if incoming.name.is_some() && incoming.name != existing.name {
                    existing.name = incoming.name.clone();
                    changed = true;
                }
                if incoming.metadata.is_some() && incoming.metadata != existing.metadata {
                    existing.metadata = incoming.metadata.clone();
                    changed = true;
                }
                changed
            }
            Some(existing) if existing == incoming => false,
            Some(existing) => {
                *existing = incoming.clone();
                true
            }
            None => {
                artifacts.push(incoming.clone());
                true
            }
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One event of a stream, or the result of SendMessage (proto StreamResponse / SendMessageResponse).
#[derive(Debug, Clone, PartialEq)]
pub enum StreamResponse {
    Task(Task),
    Message(Message),
    StatusUpdate(TaskStatusUpdateEvent),
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    pub fn task_id(&self) -> Option<&str> {
        match self {
            StreamResponse::Task(t) => Some(&t.id),
            StreamResponse::Message(m) => m.task_id.as_deref(),
            StreamResponse::StatusUpdate(u) => Some(&u.task_id),
            StreamResponse::ArtifactUpdate(u) => Some(&u.task_id),
        }
    }

    /// The task the event names, if it names one: an empty id (0.3 messages, tolerant
    /// decoding's default) names none.
    pub fn named_task(&self) -> Option<&str> {
        self.task_id().filter(|id| !id.is_empty())
    }

    /// The task's `generation` after this event (A2A 1.1, draft); 0 when not given. A message
    /// carries none.
    pub fn generation(&self) -> u64 {
        match self {
            StreamResponse::Task(t) => t.generation,
            StreamResponse::Message(_) => 0,
            StreamResponse::StatusUpdate(u) => u.generation,
            StreamResponse::ArtifactUpdate(u) => u.generation,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            StreamResponse::Task(_) => "task",
            StreamResponse::Message(_) => "message",
            StreamResponse::StatusUpdate(_) => "status",
            StreamResponse::ArtifactUpdate(_) => "artifact",
        }
    }
}

/// The 1.0 wrapper keys and every field a 0.3 bare object (`kind` = task, message, status-update,
/// artifact-update) may carry, so one pass over the bytes reads either dialect.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StreamWire<'a> {
    task: Option<Task>,
    message: Option<Message>,
    status_update: Option<TaskStatusUpdateEvent>,
    artifact_update: Option<TaskArtifactUpdateEvent>,
    /// On every 0.3 event, and only looked at.
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    id: Option<String>,
    task_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    context_id: String,
    status: Option<TaskStatus>,
    artifact: Option<Artifact>,
    #[serde(default, deserialize_with = "lenient::list")]
    artifacts: Vec<Artifact>,
    #[serde(default, deserialize_with = "lenient::list")]
    history: Vec<Message>,
    metadata: Option<Metadata>,
    #[serde(default, deserialize_with = "lenient::flag")]
    append: bool,
    #[serde(default, deserialize_with = "lenient::flag")]
    last_chunk: bool,
    message_id: Option<String>,
    role: Option<Role>,
    #[serde(default, deserialize_with = "lenient::list")]
    parts: Vec<Part>,
    #[serde(default, deserialize_with = "lenient::list")]
    extensions: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list")]
    reference_task_ids: Vec<String>,
}

impl<'de> Deserialize<'de> for StreamResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = StreamWire::deserialize(d)?;
        if let Some(t) = w.task {
            return Ok(StreamResponse::Task(t));
        }
        if let Some(m) = w.message {
            return Ok(StreamResponse::Message(m));
        }
        if let Some(u) = w.status_update {
            return Ok(StreamResponse::StatusUpdate(u));
        }
        if let Some(u) = w.artifact_update {
            return Ok(StreamResponse::ArtifactUpdate(u));
        }
        // 0.3 bare objects, told apart by `kind`, or by shape when `kind` is missing.
        let shape = match (&w.id, &w.artifact, &w.status, &w.message_id) {
            (Some(_), _, Some(_), _) => "task",
            (_, Some(_), _, _) => "artifact-update",
            (_, _, Some(_), _) => "status-update",
            (_, _, _, Some(_)) => "message",
            _ => "",
        };
        let kind = w.kind.as_deref().unwrap_or(shape);
        match kind {
            "task" => Ok(StreamResponse::Task(Task {
                id: w.id.unwrap_or_default(),
                context_id: w.context_id,
                status: w.status.unwrap_or_default(),
                artifacts: w.artifacts,
                history: w.history,
                metadata: w.metadata,
                // 0.3 predates it.
                generation: 0,
            })),
            "status-update" => Ok(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: w.task_id.unwrap_or_default(),
                context_id: w.context_id,
                status: w.status.unwrap_or_default(),
                metadata: w.metadata,
                generation: 0,
            })),
            "artifact-update" => Ok(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: w.task_id.unwrap_or_default(),
                context_id: w.context_id,
                artifact: w.artifact.unwrap_or_default(),
                append: w.append,
                last_chunk: w.last_chunk,
                metadata: w.metadata,
                generation: 0,
            })),
            "message" => Ok(StreamResponse::Message(Message {
                message_id: w.message_id.unwrap_or_default(),
                role: w.role.unwrap_or_default(),
                parts: w.parts,
                context_id: Some(w.context_id).filter(|c| !c.is_empty()),
                task_id: w.task_id,
                metadata: w.metadata,
                extensions: w.extensions,
                reference_task_ids: w.reference_task_ids,
            })),
            other => Err(serde::de::Error::custom(format!(
                "not a stream event: expected one of task, message, statusUpdate, artifactUpdate (kind {other:?})"
            ))),
        }
    }
}

impl Serialize for StreamResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        match self {
            StreamResponse::Task(t) => map.serialize_entry("task", t)?,
            StreamResponse::Message(m) => map.serialize_entry("message", m)?,
            StreamResponse::StatusUpdate(u) => map.serialize_entry("statusUpdate", u)?,
            StreamResponse::ArtifactUpdate(u) => map.serialize_entry("artifactUpdate", u)?,
        }
        map.end()
    }
}

// ---- requests (proto *Request messages; spec sections 9 and 3.1.4) ----

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    /// false (the default) = block until terminal or interrupted (spec section 3.2.2).
    #[serde(default, deserialize_with = "lenient::flag", skip_serializing_if = "is_false")]
    pub return_immediately: bool,
    /// 0.3 had `blocking`, the inverse (docs/protocol-notes.md, "Requests"); read it so the demo
    /// agents take both.
    #[serde(default, skip_serializing)]
    pub blocking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    pub message: Message,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl SendMessageRequest {
    pub fn new(message: Message) -> SendMessageRequest {
        SendMessageRequest {
            message,
            ..SendMessageRequest::default()
        }
    }

    /// With `returnImmediately`: the reply is the task as it starts, not as it settles.
    pub fn without_waiting(message: Message) -> SendMessageRequest {
        SendMessageRequest::new(message).returning_immediately()
    }

    pub fn returning_immediately(mut self) -> SendMessageRequest {
        self.configuration
            .get_or_insert_with(SendMessageConfiguration::default)
            .return_immediately = true;
        self
    }

    pub fn returns_immediately(&self) -> bool {
        self.configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately || c.blocking == Some(false))
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

/// A webhook for one task's events (proto TaskPushNotificationConfig, spec section 4.3.1): the
/// agent POSTs each event to `url` with `token` in `X-A2A-Notification-Token`. Not Serialize:
/// the wire adapters write the token, which Debug never shows.
#[derive(Debug, Clone, PartialEq)]
pub struct PushConfig {
    pub task_id: String,
    /// Ours to choose: the same id again replaces the config rather than adding one.
    pub id: String,
    pub url: String,
    pub token: super::auth::Secret,
    pub tenant: Option<String>,
}

/// Names one push config of one task (DeleteTaskPushNotificationConfig, spec section 3.1.10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PushConfigId {
    pub task_id: String,
    pub id: String,
    pub tenant: Option<String>,
}

/// CancelTask and SubscribeToTask take the same fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdRequest {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    #[serde(
        default,
        deserialize_with = "lenient::timestamp",
        serialize_with = "lenient::serialize_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_artifacts: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    #[serde(default, deserialize_with = "lenient::list")]
    pub tasks: Vec<Task>,
    /// `""` = last page; may be missing despite spec section 3.1.4 (docs/protocol-notes.md,
    /// "Tolerant decoding").
    #[serde(default, deserialize_with = "lenient::text")]
    pub next_page_token: String,
    #[serde(default, deserialize_with = "lenient::count")]
    pub page_size: u32,
    #[serde(default, deserialize_with = "lenient::count")]
    pub total_size: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(v: Value) -> StreamResponse {
        serde_json::from_value(v).expect("decodes")
    }

    #[test]
    fn v10_and_v03_status_updates_decode_alike() {
        let v10 = decode(json!({"statusUpdate":{"taskId":"t","contextId":"c",
            "status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"Budget?"}]}}}}));
        let v03 = decode(json!({"kind":"status-update","taskId":"t","contextId":"c","final":true,
            "status":{"state":"input-required","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"Budget?"}]}}}));
        assert_eq!(v10, v03);
        let StreamResponse::StatusUpdate(u) = v10 else {
            panic!("status update")
        };
        assert_eq!(u.status.text(), "Budget?");
        assert_eq!(u.status.message.unwrap().role, Role::Agent);
    }

    #[test]
    fn v03_file_parts_become_raw_and_url() {
        let m: Message = serde_json::from_value(json!({"messageId":"m","role":"user","parts":[
            {"kind":"file","file":{"name":"a.png","mimeType":"image/png","bytes":"iVBO"}},
            {"kind":"file","file":{"uri":"https://x/y.pdf"}},
            {"kind":"data","data":{"n":1}}]}))
        .unwrap();
        assert_eq!(m.parts[0].content, PartContent::Raw("iVBO".into()));
        assert_eq!(m.parts[0].media_type.as_deref(), Some("image/png"));
        assert_eq!(m.parts[0].filename.as_deref(), Some("a.png"));
        assert_eq!(m.parts[1].content, PartContent::Url("https://x/y.pdf".into()));
        assert_eq!(m.parts[2].content, PartContent::Data(json!({"n":1})));
    }

    #[test]
    fn null_data_is_data_and_unknown_content_is_kept() {
        let p: Part = serde_json::from_value(json!({"data":null})).unwrap();
        assert_eq!(p.content, PartContent::Data(Value::Null));
        let q: Part = serde_json::from_value(json!({"hologram":{"x":1}})).unwrap();
        assert!(matches!(q.content, PartContent::Unsupported(_)));
        // Py's ListTasks prints empty strings for unset fields: they mean "absent".
        let r: Part = serde_json::from_value(json!({"text":"hi","mediaType":"","filename":""})).unwrap();
        assert_eq!(r, Part::text("hi"));
    }

    #[test]
    fn missing_required_fields_default_instead_of_failing() {
        let e = decode(json!({"artifactUpdate":{"taskId":"t","artifact":{"parts":[{"text":"x"}]}}}));
        let StreamResponse::ArtifactUpdate(a) = e else { panic!() };
        assert_eq!(a.context_id, "");
        assert_eq!(a.artifact.artifact_id, "");
        assert!(!a.append && !a.last_chunk);
    }

    #[test]
    fn artifact_chunks_assemble_and_replacements_replace() {
        let chunk = |append: bool, text: &str| TaskArtifactUpdateEvent {
            artifact: Artifact {
                artifact_id: "log".into(),
                parts: vec![Part::text(text)],
                ..Default::default()
            },
            append,
            ..Default::default()
        };
        let mut arts = Vec::new();
        chunk(true, "joined late ").apply_to(&mut arts);
        chunk(true, "a").apply_to(&mut arts);
        assert_eq!(arts[0].text(), "joined late a");
        chunk(false, "fresh").apply_to(&mut arts);
        assert!(chunk(true, "b").apply_to(&mut arts));
        let same = TaskArtifactUpdateEvent {
            artifact: arts[0].clone(),
            ..Default::default()
        };
        assert!(!same.apply_to(&mut arts), "a snapshot of what is held changes nothing");
        assert_eq!(arts.len(), 1);
        assert_eq!(arts[0].text(), "freshb");
    }

    #[test]
    fn links_come_from_url_parts_and_text() {
        let m = Message::agent(vec![
            Part::text("An operator must approve this deploy at http://localhost:41243/approve/ecf2dcb6."),
            Part::url("https://ops.example/approve?id=1"),
            Part::text("again http://localhost:41243/approve/ecf2dcb6"),
        ]);
        assert_eq!(
            m.links(),
            [
                "http://localhost:41243/approve/ecf2dcb6",
                "https://ops.example/approve?id=1"
            ]
        );
    }

    #[test]
    fn kinds_read_from_text_borrowed_or_escaped_alike() {
        // An escape in the text cannot be borrowed: the kind is then read into its own string.
        for kind in ["status-update", "status\\u002dupdate"] {
            let text = format!(r#"{{"kind":"{kind}","taskId":"t","status":{{"state":"working"}}}}"#);
            let event: StreamResponse = serde_json::from_str(&text).expect("decodes");
            assert!(matches!(event, StreamResponse::StatusUpdate(_)), "{kind}: {event:?}");
        }
        let part: Part = serde_json::from_str(r#"{"kind":"holo\u0067ram"}"#).unwrap();
        assert_eq!(part.content, PartContent::Unsupported("hologram".into()));
        let part: Part = serde_json::from_str(r#"{"kind":"hologram"}"#).unwrap();
        assert_eq!(part.content, PartContent::Unsupported("hologram".into()));
    }

    #[test]
    fn something_that_is_no_event_is_an_error() {
        assert!(serde_json::from_value::<StreamResponse>(json!({"hello":1})).is_err());
    }

    #[test]
    fn events_reencode_as_v10() {
        let e = decode(
            json!({"kind":"task","id":"t","contextId":"c","status":{"state":"working","timestamp":"2025-04-02T16:59:25.331844"}}),
        );
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-04-02T16:59:25.331844Z"}}})
        );
    }
}
