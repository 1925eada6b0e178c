//! The one NDJSON line schema that scripts read: `send --follow`, `list --json`, and the
//! dashboard's headless mode all print it. Fields are a contract: add, never rename.

use jiff::Timestamp;
use serde::Serialize;

use crate::a2a::{StateClass, StreamResponse, Task, TaskState, TaskStatus};

/// Where one task stands, folded from the events seen so far.
#[derive(Debug, Clone, Default)]
pub struct TaskLine {
    pub task: String,
    pub context: String,
    pub state: TaskState,
    pub text: String,
    pub at: Option<Timestamp>,
}

impl TaskLine {
    pub fn from_task(task: &Task) -> TaskLine {
        let mut line = TaskLine {
            task: task.id.clone(),
            context: task.context_id.clone(),
            ..TaskLine::default()
        };
        line.set_status(&task.status);
        line
    }

    fn set_status(&mut self, status: &TaskStatus) {
        self.state = status.state.clone();
        self.text = status.text();
        // `at` = the status timestamp, or the time we saw it (missing timestamps are common).
        self.at = Some(status.timestamp.unwrap_or_else(Timestamp::now));
    }

    /// Takes in one event; ids that an event leaves empty keep their earlier value.
    pub fn apply(&mut self, event: &StreamResponse) {
        let mut adopt = |task: &str, context: &str| {
            if !task.is_empty() {
                self.task = task.to_string();
            }
            if !context.is_empty() {
                self.context = context.to_string();
            }
        };
        match event {
            StreamResponse::Task(t) => {
                adopt(&t.id, &t.context_id);
                self.set_status(&t.status);
            }
            StreamResponse::StatusUpdate(u) => {
                adopt(&u.task_id, &u.context_id);
                self.set_status(&u.status);
            }
            StreamResponse::ArtifactUpdate(u) => adopt(&u.task_id, &u.context_id),
            StreamResponse::Message(m) => {
                adopt(
                    m.task_id.as_deref().unwrap_or(""),
                    m.context_id.as_deref().unwrap_or(""),
                );
                self.text = m.text();
                self.at = Some(Timestamp::now());
            }
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactLine {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub append: bool,
    pub last_chunk: bool,
    pub text: String,
}

/// One NDJSON line: `{"agent","task","context","state","class","text","at"}` plus the kind of
/// event (`task`, `status`, `artifact`, `message`, `closed`) and, for artifacts, the chunk.
#[derive(Debug, Clone, Serialize)]
pub struct EventLine {
    pub agent: String,
    pub event: &'static str,
    pub task: String,
    pub context: String,
    pub state: String,
    pub class: StateClass,
    pub text: String,
    pub at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactLine>,
}

impl EventLine {
    pub fn new(agent: &str, event: &'static str, line: &TaskLine) -> EventLine {
        EventLine {
            agent: agent.to_string(),
            event,
            task: line.task.clone(),
            context: line.context.clone(),
            state: line.state.short_name().to_string(),
            class: line.state.class(),
            text: line.text.clone(),
            at: line.at.map(|t| t.to_string()),
            artifact: None,
        }
    }

    /// The line for an event, after `line` has taken it in.
    pub fn for_event(agent: &str, event: &StreamResponse, line: &TaskLine) -> EventLine {
        let mut out = EventLine::new(agent, event.kind(), line);
        if let StreamResponse::ArtifactUpdate(u) = event {
            out.artifact = Some(ArtifactLine {
                id: u.artifact.artifact_id.clone(),
                name: u.artifact.name.clone(),
                append: u.append,
                last_chunk: u.last_chunk,
                text: u.artifact.text(),
            });
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an EventLine always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_carry_the_contract_fields() {
        let ev: StreamResponse = serde_json::from_value(json!({"statusUpdate":{"taskId":"t","contextId":"c",
            "status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-10-06T09:00:00.500Z",
            "message":{"role":"ROLE_AGENT","parts":[{"text":"Which base branch?"}]}}}}))
        .unwrap();
        let mut line = TaskLine::default();
        line.apply(&ev);
        let v: serde_json::Value =
            serde_json::from_str(&EventLine::for_event("code-reviewer", &ev, &line).to_json()).unwrap();
        assert_eq!(
            v,
            json!({"agent":"code-reviewer","event":"status","task":"t","context":"c","state":"INPUT_REQUIRED",
                   "class":"interrupted","text":"Which base branch?","at":"2026-10-06T09:00:00.5Z"})
        );
    }

    #[test]
    fn artifact_events_keep_the_state_and_add_the_chunk() {
        let mut line = TaskLine {
            task: "t".into(),
            state: TaskState::Working,
            ..Default::default()
        };
        let ev: StreamResponse = serde_json::from_value(json!({"artifactUpdate":{"taskId":"t","contextId":"c",
            "artifact":{"artifactId":"a","parts":[{"text":"chunk"}]},"append":true}}))
        .unwrap();
        line.apply(&ev);
        let out = EventLine::for_event("r", &ev, &line);
        assert_eq!(out.state, "WORKING");
        assert_eq!(out.context, "c");
        let a = out.artifact.unwrap();
        assert!(a.append && !a.last_chunk);
        assert_eq!(a.text, "chunk");
    }
}
