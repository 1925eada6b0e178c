//! The one NDJSON line schema that scripts read: `send --follow`, `list --json`, and the
//! dashboard's headless mode all print it. Fields are a contract: add, never rename.
//!
//! Every JSON the command line prints is written by [`to_json`] or [`to_json_pretty`]: agent
//! text stays lossless, but C0, DEL, C1 and bidirectional controls are written as `\uXXXX`, so
//! a line shown in a terminal (or `jq -r`'s input) cannot carry a raw escape sequence.

use std::io;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::a2a::{StateClass, StreamResponse, Task, TaskState, TaskStatus};

mod lines;
pub use lines::JsonLines;

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
    /// The task was seen in a planner's traffic through a tap; absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tapped: bool,
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
            tapped: false,
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
        to_json(self)
    }
}

/// One line of terminal-safe JSON.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    write_json(value, CompactFormatter)
}

/// Appends one line of terminal-safe JSON and its newline to `out`, for output written in
/// batches.
pub fn push_line<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serialize_into(out, value, CompactFormatter);
    out.push(b'\n');
}

/// Indented terminal-safe JSON (`get --json`, `card --json`).
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    write_json(value, PrettyFormatter::new())
}

fn write_json<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> String {
    let mut out = Vec::new();
    serialize_into(&mut out, value, formatter);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

fn serialize_into<T: Serialize + ?Sized, F: Formatter>(out: &mut Vec<u8>, value: &T, formatter: F) {
    let mut ser = serde_json::Serializer::with_formatter(out, ControlEscaping(formatter));
    // Our types serialize to JSON objects with string keys; nothing here can fail.
    value.serialize(&mut ser).expect("our values serialize to JSON");
}

/// Characters serde_json leaves raw that a terminal acts on: DEL, the C1 controls (U+009B is
/// an 8-bit CSI) and the bidirectional controls and marks ("Trojan Source", CVE-2021-42574).
fn needs_escape(c: char) -> bool {
    matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Formatter methods that only lay out the JSON, handed to the wrapped formatter.
macro_rules! delegate_layout {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $name<W: ?Sized + io::Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(writer $(, $arg)*)
        })*
    };
}

/// serde_json escapes C0 controls, quotes and backslashes itself; this escapes the rest.
struct ControlEscaping<F>(F);

impl<F: Formatter> Formatter for ControlEscaping<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| needs_escape(c)) {
            writer.write_all(&rest.as_bytes()[..at])?;
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    // The layout is the inner formatter's.
    delegate_layout! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controls_are_escaped_losslessly() {
        let hostile =
            "a\u{1b}]52;c;aGk=\u{7}b\u{9b}31m\u{7f}\u{85}\u{202e}txt\u{2066}\u{200f}\u{61c}\u{1b}[2J \"q\" \\ 日本 ✔";
        let value = json!({"text": hostile, hostile: [hostile]});
        for out in [to_json(&value), to_json_pretty(&value)] {
            assert!(
                !out.chars().any(|c| c.is_control() && c != '\n' || needs_escape(c)),
                "raw control in {out:?}"
            );
            assert!(out.contains("\\u009b") && out.contains("\\u202e") && out.contains("\\u001b"));
            assert!(out.contains("日本 ✔"), "other text stays as it is");
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(back, value);
        }
        assert_eq!(
            to_json_pretty(&json!({"a": [1]})),
            serde_json::to_string_pretty(&json!({"a": [1]})).unwrap()
        );
    }

    #[test]
    fn pushed_lines_are_the_same_lines_one_after_another() {
        let value = json!({"text": "a\u{9b}b\u{202e}"});
        let mut out = b"{}\n".to_vec();
        push_line(&mut out, &value);
        push_line(&mut out, &value);
        let line = to_json(&value);
        assert_eq!(String::from_utf8(out).unwrap(), format!("{{}}\n{line}\n{line}\n"));
        assert!(line.contains("\\u009b") && line.contains("\\u202e"), "{line}");
    }

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
