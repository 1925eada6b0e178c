//! The HTTP+JSON binding under `/rest` (spec §11): path and query in, `Call` out, and back.
//! Paths like `tasks/{id}:cancel` hold the verb inside a segment, so a small dispatcher reads
//! them instead of the router.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::guard;
use super::service::{Agent, Call, Reply};
use super::sse::{self, Framing};
use crate::a2a::{
    ErrorKind, GetTaskRequest, ListTasksRequest, SendMessageRequest, TaskIdRequest, TaskState, parse_timestamp,
};

#[derive(Debug, PartialEq)]
enum Route {
    Send,
    Stream,
    List,
    Get(String),
    Cancel(String),
    Subscribe(String),
    ExtendedCard,
    PushConfig,
}

pub async fn handle(
    State(agent): State<Arc<Agent>>,
    method: Method,
    Path(path): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let route = match route(&method, &path) {
        Ok(route) => route,
        Err(status) => return status.into_response(),
    };
    let query = query.unwrap_or_default();
    let reply = match guard::check_version(&headers, Some(&query)).and_then(|()| to_call(route, &query, &body)) {
        Ok(call) => agent.call(call).await,
        Err(error) => Err(error),
    };
    match reply {
        Ok(Reply::Json(value)) => Json(value).into_response(),
        Ok(Reply::Events(events)) => sse::respond(events, Bare),
        Err(error) => error_reply(&error),
    }
}

/// Spec §11.3 paths, relative to the interface URL. SubscribeToTask takes POST (spec) and GET
/// (proto annotation), as the SDK servers do.
fn route(method: &Method, path: &str) -> Result<Route, StatusCode> {
    let segments: Vec<&str> = path.split('/').collect();
    let (route, verbs): (Route, &[Method]) = match segments.as_slice() {
        ["message:send"] => (Route::Send, &[Method::POST]),
        ["message:stream"] => (Route::Stream, &[Method::POST]),
        ["tasks"] => (Route::List, &[Method::GET]),
        ["extendedAgentCard"] => (Route::ExtendedCard, &[Method::GET]),
        ["tasks", _, "pushNotificationConfigs", ..] => {
            (Route::PushConfig, &[Method::GET, Method::POST, Method::DELETE])
        }
        ["tasks", task] => match task.rsplit_once(':') {
            None => (Route::Get((*task).into()), &[Method::GET]),
            Some((id, "cancel")) => (Route::Cancel(id.into()), &[Method::POST]),
            Some((id, "subscribe")) => (Route::Subscribe(id.into()), &[Method::POST, Method::GET]),
            Some(_) => return Err(StatusCode::NOT_FOUND),
        },
        _ => return Err(StatusCode::NOT_FOUND),
    };
    if verbs.contains(method) {
        Ok(route)
    } else {
        Err(StatusCode::METHOD_NOT_ALLOWED)
    }
}

fn to_call(route: Route, query: &str, body: &[u8]) -> ApiResult<Call> {
    let query = Query::parse(query);
    Ok(match route {
        Route::Send => Call::Send(send_request(body)?),
        Route::Stream => Call::Stream(send_request(body)?),
        Route::Get(id) => Call::Get(GetTaskRequest {
            id,
            history_length: query.number("historyLength")?,
            tenant: None,
        }),
        Route::List => Call::List(ListTasksRequest {
            context_id: query.text("contextId"),
            status: query.text("status").map(|s| TaskState::from_name(&s)),
            page_size: query.number("pageSize")?,
            page_token: query.text("pageToken"),
            history_length: query.number("historyLength")?,
            status_timestamp_after: query.timestamp("statusTimestampAfter")?,
            include_artifacts: query.flag("includeArtifacts")?,
            tenant: None,
        }),
        Route::Cancel(id) => Call::Cancel(task_id(id)),
        Route::Subscribe(id) => Call::Subscribe(task_id(id)),
        Route::ExtendedCard => Call::ExtendedCard,
        Route::PushConfig => Call::PushConfig,
    })
}

fn task_id(id: String) -> TaskIdRequest {
    TaskIdRequest {
        id,
        ..TaskIdRequest::default()
    }
}

/// Unreadable JSON is an invalid request, readable JSON of the wrong shape invalid params
/// (a2a-python's REST reasons).
fn send_request(body: &[u8]) -> ApiResult<SendMessageRequest> {
    serde_json::from_slice(body).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            ApiError::new(ErrorKind::InvalidRequest, format!("Failed to load JSON: {e}"))
        } else {
            ApiError::invalid_params(format!("Invalid request body: {e}"))
        }
    })
}

/// ListTasks and GetTask query parameters (spec §11.5): camelCase names, `true`/`false`, enum
/// names, ISO 8601 timestamps.
struct Query(HashMap<String, String>);

impl Query {
    fn parse(query: &str) -> Query {
        Query(url::form_urlencoded::parse(query.as_bytes()).into_owned().collect())
    }

    fn text(&self, key: &str) -> Option<String> {
        self.0.get(key).filter(|v| !v.is_empty()).cloned()
    }

    fn read<T>(&self, key: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> ApiResult<Option<T>> {
        self.text(key)
            .map(|v| parse(&v).ok_or_else(|| ApiError::invalid_params(format!("{key} must be {what}, not {v:?}"))))
            .transpose()
    }

    fn number(&self, key: &str) -> ApiResult<Option<u32>> {
        self.read(key, "a whole number", |v| v.parse().ok())
    }

    fn flag(&self, key: &str) -> ApiResult<Option<bool>> {
        self.read(key, "true or false", |v| v.parse().ok())
    }

    fn timestamp(&self, key: &str) -> ApiResult<Option<jiff::Timestamp>> {
        self.read(key, "an ISO 8601 timestamp", parse_timestamp)
    }
}

/// google.rpc.Status names (spec §11.6), as a2a-python pairs them with its HTTP statuses.
fn rpc_status(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::TaskNotFound | ErrorKind::MethodNotFound => "NOT_FOUND",
        ErrorKind::InvalidParams | ErrorKind::InvalidRequest | ErrorKind::JsonParse => "INVALID_ARGUMENT",
        ErrorKind::Internal | ErrorKind::InvalidAgentResponse | ErrorKind::Other => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    }
}

fn error_body(error: &ApiError) -> Value {
    json!({"error": {
        "code": error.kind.http_status(),
        "status": rpc_status(error.kind),
        "message": error.message,
        "details": [error.error_info()],
    }})
}

fn error_reply(error: &ApiError) -> Response {
    let status = StatusCode::from_u16(error.kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(error_body(error))).into_response()
}

/// REST frames are the bare StreamResponse (spec §11.7).
struct Bare;

impl Framing for Bare {
    fn result(&self, event: Value) -> Value {
        event
    }

    fn error(&self, error: &ApiError) -> Value {
        error_body(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_inside_segments_are_routed() {
        assert_eq!(route(&Method::POST, "message:send"), Ok(Route::Send));
        assert_eq!(
            route(&Method::POST, "tasks/t-1:cancel"),
            Ok(Route::Cancel("t-1".into()))
        );
        assert_eq!(
            route(&Method::GET, "tasks/t-1:subscribe"),
            Ok(Route::Subscribe("t-1".into()))
        );
        assert_eq!(route(&Method::GET, "tasks/t-1"), Ok(Route::Get("t-1".into())));
        assert_eq!(
            route(&Method::GET, "tasks/t-1:cancel"),
            Err(StatusCode::METHOD_NOT_ALLOWED)
        );
        assert_eq!(route(&Method::POST, "tasks/t-1:explode"), Err(StatusCode::NOT_FOUND));
        assert_eq!(route(&Method::GET, "v1/tasks"), Err(StatusCode::NOT_FOUND));
    }

    #[test]
    fn list_queries_are_read_and_checked() {
        let Ok(Call::List(request)) = to_call(
            Route::List,
            "contextId=c-4&status=TASK_STATE_AUTH_REQUIRED&pageSize=100&includeArtifacts=true&statusTimestampAfter=2026-01-05T00%3A00%3A00Z",
            b"",
        ) else {
            panic!("a list call")
        };
        assert_eq!(request.context_id.as_deref(), Some("c-4"));
        assert_eq!(request.status, Some(TaskState::AuthRequired));
        assert_eq!((request.page_size, request.include_artifacts), (Some(100), Some(true)));
        assert!(request.status_timestamp_after.is_some());
        for bad in ["pageSize=ten", "includeArtifacts=yes", "statusTimestampAfter=yesterday"] {
            assert!(
                matches!(to_call(Route::List, bad, b""), Err(e) if e.kind == ErrorKind::InvalidParams),
                "{bad}"
            );
        }
    }

    #[test]
    fn bodies_that_are_not_json_are_invalid_requests() {
        let kind = |body: &[u8]| to_call(Route::Send, "", body).err().map(|e| e.kind);
        assert_eq!(kind(b"{\"message\": "), Some(ErrorKind::InvalidRequest));
        assert_eq!(kind(b"{}"), Some(ErrorKind::InvalidParams));
    }
}
