//! The JSON-RPC 2.0 binding at `POST /` (spec §9): envelope in, `Call` out, and back. Errors travel
//! with HTTP 200, as a2a-python sends them (docs/protocol-notes.md, "SDK quirks: a2a-python").

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::guard;
use super::service::{Agent, Call, Reply};
use super::sse::{self, Framing};
use crate::a2a::{ErrorKind, ListTasksRequest};

struct Request {
    id: Value,
    method: String,
    params: Option<Value>,
}

pub async fn handle(
    State(agent): State<Arc<Agent>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let request = match parse(&body) {
        Ok(request) => request,
        Err((id, error)) => return error_reply(id, &error),
    };
    let id = request.id.clone();
    let reply = match guard::check_version(&headers, query.as_deref())
        .and_then(|()| to_call(&request.method, request.params))
    {
        Ok(call) => agent.call(call).await,
        Err(error) => Err(error),
    };
    match reply {
        Ok(Reply::Json(result)) => Json(envelope(&id, "result", result)).into_response(),
        Ok(Reply::Events(events)) => sse::respond(events, Envelope(id)),
        Err(error) => error_reply(id, &error),
    }
}

/// Reads the envelope; an error carries the id when the request had a readable one.
fn parse(body: &[u8]) -> Result<Request, (Value, ApiError)> {
    let invalid = |id: Value, message: &str| (id, ApiError::new(ErrorKind::InvalidRequest, message));
    let value: Value =
        serde_json::from_slice(body).map_err(|e| (Value::Null, ApiError::new(ErrorKind::JsonParse, e.to_string())))?;
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => return Err(invalid(Value::Null, "batch requests are not supported")),
        _ => return Err(invalid(Value::Null, "a JSON-RPC request is an object")),
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    if !matches!(id, Value::Null | Value::String(_) | Value::Number(_)) {
        return Err(invalid(Value::Null, "id must be a string, a number or null"));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(id, "jsonrpc must be \"2.0\""));
    }
    let Some(Value::String(method)) = object.remove("method") else {
        return Err(invalid(id, "method must be a string"));
    };
    Ok(Request {
        id,
        method,
        params: object.remove("params"),
    })
}

/// Method names are the proto rpc names (spec §9.3).
fn to_call(method: &str, params: Option<Value>) -> ApiResult<Call> {
    Ok(match method {
        "SendMessage" => Call::Send(decode(params)?),
        "SendStreamingMessage" => Call::Stream(decode(params)?),
        "GetTask" => Call::Get(decode(params)?),
        "ListTasks" => Call::List(match params {
            Some(params) => decode(Some(params))?,
            None => ListTasksRequest::default(),
        }),
        "CancelTask" => Call::Cancel(decode(params)?),
        "SubscribeToTask" => Call::Subscribe(decode(params)?),
        "GetExtendedAgentCard" => Call::ExtendedCard,
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Call::PushConfig,
        other => {
            return Err(ApiError::new(
                ErrorKind::MethodNotFound,
                format!("Method not found: {other}"),
            ));
        }
    })
}

fn decode<T: DeserializeOwned>(params: Option<Value>) -> ApiResult<T> {
    let params = params.ok_or_else(|| ApiError::invalid_params("params: Field is required."))?;
    serde_json::from_value(params).map_err(|e| ApiError::invalid_params(format!("Invalid params: {e}")))
}

fn envelope(id: &Value, key: &str, value: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, key: value})
}

/// Spec §9.5: code, message, and typed details in `data`.
fn error_object(error: &ApiError) -> Value {
    json!({"code": error.kind.code(), "message": error.message, "data": [error.error_info()]})
}

fn error_reply(id: Value, error: &ApiError) -> Response {
    Json(envelope(&id, "error", error_object(error))).into_response()
}

/// Each SSE frame is a whole JSON-RPC response with the request's id (spec §9.4.2).
struct Envelope(Value);

impl Framing for Envelope {
    fn result(&self, event: Value) -> Value {
        envelope(&self.0, "result", event)
    }

    fn error(&self, error: &ApiError) -> Value {
        envelope(&self.0, "error", error_object(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_are_checked_before_methods() {
        let kind = |body: &str| parse(body.as_bytes()).err().map(|(_, e)| e.kind);
        assert_eq!(kind("{"), Some(ErrorKind::JsonParse));
        assert_eq!(kind("[]"), Some(ErrorKind::InvalidRequest));
        assert_eq!(
            kind(r#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#),
            Some(ErrorKind::InvalidRequest)
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#),
            Some(ErrorKind::InvalidRequest)
        );
        let ok = parse(br#"{"jsonrpc":"2.0","id":0,"method":"GetTask","params":{"id":"t"}}"#)
            .ok()
            .unwrap();
        assert_eq!(ok.id, json!(0), "id 0 stays 0");
        assert!(matches!(to_call(&ok.method, ok.params), Ok(Call::Get(r)) if r.id == "t"));
    }

    #[test]
    fn unknown_methods_and_bad_params_have_their_codes() {
        let code = |method: &str, params: Option<Value>| to_call(method, params).err().map(|e| e.kind.code());
        assert_eq!(code("message/send", None), Some(-32601));
        assert_eq!(code("GetTask", None), Some(-32602));
        assert_eq!(code("GetTask", Some(json!({"id": 7}))), Some(-32602));
        assert!(matches!(to_call("ListTasks", None), Ok(Call::List(_))));
    }
}
