//! TaskState and its classes (proto TaskState; docs/protocol-notes.md, "Task states").

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The nine proto states, plus any name we do not know, kept verbatim so it can be shown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum TaskState {
    #[default]
    Unspecified,
    Submitted,
    Working,
    Completed,
    Failed,
    Canceled,
    InputRequired,
    Rejected,
    AuthRequired,
    Unknown(String),
}

/// What a watcher needs to know about a state at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StateClass {
    /// SUBMITTED, WORKING.
    Active,
    /// INPUT_REQUIRED, AUTH_REQUIRED: someone must act.
    Interrupted,
    /// COMPLETED, FAILED, CANCELED, REJECTED: no further change.
    Terminal,
    /// UNSPECIFIED and names we do not know: treated as an error, never as terminal.
    Unknown,
}

impl StateClass {
    pub fn as_str(self) -> &'static str {
        match self {
            StateClass::Active => "active",
            StateClass::Interrupted => "interrupted",
            StateClass::Terminal => "terminal",
            StateClass::Unknown => "unknown",
        }
    }
}

impl TaskState {
    /// Every state the proto defines, in proto number order.
    pub const KNOWN: [TaskState; 9] = [
        TaskState::Unspecified,
        TaskState::Submitted,
        TaskState::Working,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::InputRequired,
        TaskState::Rejected,
        TaskState::AuthRequired,
    ];

    pub fn class(&self) -> StateClass {
        match self {
            TaskState::Submitted | TaskState::Working => StateClass::Active,
            TaskState::InputRequired | TaskState::AuthRequired => StateClass::Interrupted,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected => {
                StateClass::Terminal
            }
            TaskState::Unspecified | TaskState::Unknown(_) => StateClass::Unknown,
        }
    }

    pub fn is_terminal(&self) -> bool {
        self.class() == StateClass::Terminal
    }

    pub fn is_interrupted(&self) -> bool {
        self.class() == StateClass::Interrupted
    }

    /// The proto enum name, as 1.0 puts it on the wire (spec section 5.5).
    pub fn proto_name(&self) -> &str {
        match self {
            TaskState::Unspecified => "TASK_STATE_UNSPECIFIED",
            TaskState::Submitted => "TASK_STATE_SUBMITTED",
            TaskState::Working => "TASK_STATE_WORKING",
            TaskState::Completed => "TASK_STATE_COMPLETED",
            TaskState::Failed => "TASK_STATE_FAILED",
            TaskState::Canceled => "TASK_STATE_CANCELED",
            TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskState::Rejected => "TASK_STATE_REJECTED",
            TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
            TaskState::Unknown(name) => name,
        }
    }

    /// The short name people read: `INPUT_REQUIRED` rather than `TASK_STATE_INPUT_REQUIRED`.
    pub fn short_name(&self) -> &str {
        let name = self.proto_name();
        name.strip_prefix("TASK_STATE_").unwrap_or(name)
    }

    /// Reads a state name of either dialect; anything else becomes `Unknown`, never an error.
    pub fn from_name(name: &str) -> TaskState {
        match name {
            "TASK_STATE_UNSPECIFIED" | "unknown" | "unspecified" => TaskState::Unspecified,
            "TASK_STATE_SUBMITTED" | "submitted" => TaskState::Submitted,
            "TASK_STATE_WORKING" | "working" => TaskState::Working,
            "TASK_STATE_COMPLETED" | "completed" => TaskState::Completed,
            "TASK_STATE_FAILED" | "failed" => TaskState::Failed,
            // a2a-python 0.3 REST spells it with two Ls (docs/protocol-notes.md,
            // "0.3 compatibility").
            "TASK_STATE_CANCELED" | "TASK_STATE_CANCELLED" | "canceled" | "cancelled" => TaskState::Canceled,
            "TASK_STATE_INPUT_REQUIRED" | "input-required" | "input_required" => TaskState::InputRequired,
            "TASK_STATE_REJECTED" | "rejected" => TaskState::Rejected,
            "TASK_STATE_AUTH_REQUIRED" | "auth-required" | "auth_required" => TaskState::AuthRequired,
            other => {
                // Users type short names on the command line (`--state working`).
                let upper = other.to_ascii_uppercase().replace('-', "_");
                let full = format!("TASK_STATE_{upper}");
                match Self::KNOWN
                    .iter()
                    .find(|s| s.proto_name() == full || s.proto_name() == upper)
                {
                    Some(known) => known.clone(),
                    None => TaskState::Unknown(other.to_string()),
                }
            }
        }
    }

    /// ProtoJSON (spec section 5.5) allows enums as numbers, in proto order.
    pub fn from_number(n: i64) -> TaskState {
        match usize::try_from(n).ok().and_then(|i| Self::KNOWN.get(i)) {
            Some(state) => state.clone(),
            None => TaskState::Unknown(n.to_string()),
        }
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.proto_name())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EnumVisitor(TaskState::from_name, TaskState::from_number))
    }
}

/// Reads a proto enum given as a name or as a number (integer or float); shared by the enums here.
pub(crate) struct EnumVisitor<T>(pub fn(&str) -> T, pub fn(i64) -> T);

impl<'de, T> Visitor<'de> for EnumVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an enum name or number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok((self.1)(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok((self.1)(i64::try_from(v).unwrap_or(-1)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok((self.1)(if v.fract() == 0.0 { v as i64 } else { -1 }))
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok((self.1)(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_of_both_dialects_has_its_class() {
        let cases = [
            ("TASK_STATE_SUBMITTED", "submitted", StateClass::Active),
            ("TASK_STATE_WORKING", "working", StateClass::Active),
            ("TASK_STATE_INPUT_REQUIRED", "input-required", StateClass::Interrupted),
            ("TASK_STATE_AUTH_REQUIRED", "auth-required", StateClass::Interrupted),
            ("TASK_STATE_COMPLETED", "completed", StateClass::Terminal),
            ("TASK_STATE_FAILED", "failed", StateClass::Terminal),
            ("TASK_STATE_CANCELED", "canceled", StateClass::Terminal),
            ("TASK_STATE_REJECTED", "rejected", StateClass::Terminal),
            ("TASK_STATE_UNSPECIFIED", "unknown", StateClass::Unknown),
        ];
        for (v10, v03, class) in cases {
            let a: TaskState = serde_json::from_str(&format!("\"{v10}\"")).unwrap();
            let b: TaskState = serde_json::from_str(&format!("\"{v03}\"")).unwrap();
            assert_eq!(a, b, "{v10} and {v03} are one state");
            assert_eq!(a.class(), class, "{v10}");
            assert_eq!(serde_json::to_string(&b).unwrap(), format!("\"{v10}\""));
        }
        let cancelled: TaskState = serde_json::from_str("\"TASK_STATE_CANCELLED\"").unwrap();
        assert_eq!(cancelled, TaskState::Canceled);
    }

    #[test]
    fn unknown_names_are_kept_and_classed_unknown() {
        let s: TaskState = serde_json::from_str("\"TASK_STATE_PAUSED\"").unwrap();
        assert_eq!(s, TaskState::Unknown("TASK_STATE_PAUSED".into()));
        assert_eq!(s.class(), StateClass::Unknown);
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"TASK_STATE_PAUSED\"");
        assert!(!s.is_terminal());
    }

    #[test]
    fn numbers_and_floats_are_proto_numbers() {
        let cases = [
            ("3", TaskState::Completed),
            ("6.0", TaskState::InputRequired),
            ("0", TaskState::Unspecified),
        ];
        for (json, want) in cases {
            assert_eq!(serde_json::from_str::<TaskState>(json).unwrap(), want, "{json}");
        }
        let odd: TaskState = serde_json::from_str("42").unwrap();
        assert_eq!(odd, TaskState::Unknown("42".into()));
    }

    #[test]
    fn short_names_typed_by_people_are_understood() {
        assert_eq!(TaskState::from_name("working"), TaskState::Working);
        assert_eq!(TaskState::from_name("INPUT_REQUIRED"), TaskState::InputRequired);
        assert_eq!(TaskState::from_name("auth-required"), TaskState::AuthRequired);
        assert_eq!(TaskState::InputRequired.short_name(), "INPUT_REQUIRED");
    }
}
