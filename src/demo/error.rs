//! The one error the demo agents answer with, before either binding encodes it (JSON-RPC error
//! object, spec §9.5; google.rpc.Status, spec §11.6). The kind decides code, reason and status.

use serde_json::{Value, json};

use crate::a2a::{ErrorKind, TaskState};

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub kind: ErrorKind,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
        }
    }

    pub fn task_not_found() -> ApiError {
        // Same words for "never existed" and "not yours" (spec §3.3.2).
        ApiError::new(ErrorKind::TaskNotFound, "Task not found")
    }

    pub fn invalid_params(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::InvalidParams, message)
    }

    pub fn unsupported(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::UnsupportedOperation, message)
    }

    /// A terminal task takes no message and no subscription (spec §3.1.6, §3.4.3).
    pub fn terminal(task_id: &str, state: &TaskState) -> ApiError {
        ApiError::unsupported(format!("Task {task_id} is in terminal state: {}", state.proto_name()))
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Internal, message)
    }

    /// The typed detail both bindings carry: `data` in JSON-RPC, `details` in REST.
    pub fn error_info(&self) -> Value {
        json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.kind.reason(),
            "domain": "a2a-protocol.org",
            "metadata": {},
        })
    }
}

/// Serializes a reply body; our types always serialize, but a failure is an error, not a panic.
pub fn to_json<T: serde::Serialize>(value: &T) -> ApiResult<Value> {
    serde_json::to_value(value).map_err(|e| ApiError::internal(format!("cannot encode reply: {e}")))
}
