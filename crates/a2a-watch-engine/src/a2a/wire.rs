//! The operations the client performs, and the two small adapters that put them on the wire:
//! JSON-RPC (spec section 9) and HTTP+JSON (spec section 11). Everything else (headers, auth,
//! status handling, SSE) is shared in `client`.

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::card::ProtocolVersion;
use super::error::{Error, Result, WireError, excerpt};
use super::sse::Frame;
use super::types::{
    GetTaskRequest, ListTasksRequest, PushConfig, PushConfigId, SendMessageRequest, StreamResponse, TaskIdRequest,
};
use super::v03;

/// One A2A operation (spec section 3.1).
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    SendMessage(&'a SendMessageRequest),
    SendStreamingMessage(&'a SendMessageRequest),
    GetTask(&'a GetTaskRequest),
    ListTasks(&'a ListTasksRequest),
    CancelTask(&'a TaskIdRequest),
    SubscribeToTask(&'a TaskIdRequest),
    CreatePushConfig(&'a PushConfig),
    DeletePushConfig(&'a PushConfigId),
    /// The authenticated extended card (spec section 3.1.11).
    GetExtendedAgentCard {
        tenant: Option<&'a str>,
    },
}

impl Call<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            Call::SendMessage(_) => "SendMessage",
            Call::SendStreamingMessage(_) => "SendStreamingMessage",
            Call::GetTask(_) => "GetTask",
            Call::ListTasks(_) => "ListTasks",
            Call::CancelTask(_) => "CancelTask",
            Call::SubscribeToTask(_) => "SubscribeToTask",
            Call::CreatePushConfig(_) => "CreateTaskPushNotificationConfig",
            Call::DeletePushConfig(_) => "DeleteTaskPushNotificationConfig",
            Call::GetExtendedAgentCard { .. } => "GetExtendedAgentCard",
        }
    }

    pub fn is_streaming(&self) -> bool {
        matches!(self, Call::SendStreamingMessage(_) | Call::SubscribeToTask(_))
    }
}

/// The request message of a 1.0 operation in proto JSON (spec section 5.6): JSON-RPC sends it as
/// `params`, gRPC transcodes it to protobuf (`grpc`).
pub fn message(call: &Call) -> Value {
    jsonrpc::params(call, ProtocolVersion::V1_0)
}

/// An HTTP request, before headers.
#[derive(Debug)]
pub struct WireRequest {
    pub method: Method,
    /// Relative to the interface URL (REST) or empty (JSON-RPC posts to the interface URL).
    pub path: String,
    pub query: Vec<(&'static str, String)>,
    pub body: Option<Value>,
}

/// The 1.0 TaskPushNotificationConfig (spec section 4.3.1), without the tenant (a path or params
/// field of its own).
fn push_config_body(c: &PushConfig) -> Value {
    json!({"taskId": c.task_id, "id": c.id, "url": c.url, "token": c.token.expose()})
}

// ---- JSON-RPC (spec section 9) ----

pub mod jsonrpc {
    use super::*;

    fn method(call: &Call, version: ProtocolVersion) -> Result<&'static str> {
        if version == ProtocolVersion::V1_0 {
            return Ok(call.name());
        }
        // 0.3 method names (docs/protocol-notes.md, "0.3 compatibility"); 0.3 has no tasks/list.
        Ok(match call {
            Call::SendMessage(_) => "message/send",
            Call::SendStreamingMessage(_) => "message/stream",
            Call::GetTask(_) => "tasks/get",
            Call::CancelTask(_) => "tasks/cancel",
            Call::SubscribeToTask(_) => "tasks/resubscribe",
            Call::CreatePushConfig(_) => "tasks/pushNotificationConfig/set",
            Call::DeletePushConfig(_) => "tasks/pushNotificationConfig/delete",
            Call::GetExtendedAgentCard { .. } => "agent/getAuthenticatedExtendedCard",
            Call::ListTasks(_) => {
                return Err(Error::NotInVersion {
                    operation: "ListTasks",
                    version: "0.3",
                });
            }
        })
    }

    pub(super) fn params(call: &Call, version: ProtocolVersion) -> Value {
        let v03 = version == ProtocolVersion::V0_3;
        match call {
            Call::SendMessage(r) | Call::SendStreamingMessage(r) if v03 => v03::send_params(r),
            Call::SendMessage(r) | Call::SendStreamingMessage(r) => json!(r),
            Call::GetTask(r) => json!(r),
            Call::ListTasks(r) => json!(r),
            Call::CancelTask(r) | Call::SubscribeToTask(r) => json!(r),
            // 0.3 nests the config and names the task `taskId` (docs/protocol-notes.md, "0.3
            // compatibility"); 1.0 sends the flat TaskPushNotificationConfig (spec section 3.1.7).
            Call::CreatePushConfig(c) if v03 => {
                json!({"taskId": c.task_id, "pushNotificationConfig": {"id": c.id, "url": c.url, "token": c.token.expose()}})
            }
            Call::CreatePushConfig(c) => with_tenant(super::push_config_body(c), &c.tenant),
            Call::DeletePushConfig(d) if v03 => json!({"id": d.task_id, "pushNotificationConfigId": d.id}),
            Call::DeletePushConfig(d) => with_tenant(json!({"taskId": d.task_id, "id": d.id}), &d.tenant),
            Call::GetExtendedAgentCard { tenant } => with_tenant(json!({}), &tenant.map(str::to_string)),
        }
    }

    fn with_tenant(mut params: Value, tenant: &Option<String>) -> Value {
        if let (Some(fields), Some(tenant)) = (params.as_object_mut(), tenant) {
            fields.insert("tenant".into(), json!(tenant));
        }
        params
    }

    pub fn request(call: &Call, version: ProtocolVersion, id: u64) -> Result<WireRequest> {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method(call, version)?, "params": params(call, version)});
        Ok(WireRequest {
            method: Method::POST,
            path: String::new(),
            query: Vec::new(),
            body: Some(body),
        })
    }

    #[derive(serde::Deserialize)]
    struct Envelope<T> {
        result: Option<T>,
        error: Option<WireError>,
    }

    /// A JSON-RPC response body; errors arrive with HTTP 200 too (a2a-python), so the status
    /// alone decides nothing.
    pub fn decode<T: DeserializeOwned>(what: &str, body: &[u8]) -> Result<T> {
        let env = serde_json::from_slice(body).map_err(|e| Error::decode(what, body, e))?;
        settle(what, body, env)
    }

    fn settle<T>(what: &str, body: &[u8], env: Envelope<T>) -> Result<T> {
        match (env.error, env.result) {
            (Some(err), _) => Err(err.into_jsonrpc_error()),
            (None, Some(result)) => Ok(result),
            (None, None) => Err(Error::Http {
                status: 200,
                what: what.into(),
                excerpt: excerpt(body),
                retry_after: None,
            }),
        }
    }

    /// A reply whose result carries nothing (DeleteTaskPushNotificationConfig: `null` or `{}`):
    /// only an error counts.
    pub fn decode_empty(what: &str, body: &[u8]) -> Result<()> {
        let env: Envelope<Value> = serde_json::from_slice(body).map_err(|e| Error::decode(what, body, e))?;
        env.error.map_or(Ok(()), |err| Err(err.into_jsonrpc_error()))
    }

    /// Each SSE `data:` is a whole JSON-RPC response (spec section 9.4.2). Read as text: the
    /// SSE layer has already checked that it is UTF-8, so serde_json does not check it again.
    pub fn decode_frame(frame: &Frame) -> Result<StreamResponse> {
        let what = "stream event";
        let body = frame.data.as_bytes();
        let env = serde_json::from_str(&frame.data).map_err(|e| Error::decode(what, body, e))?;
        settle(what, body, env)
    }
}

// ---- HTTP+JSON (spec section 11) ----

pub mod rest {
    use super::*;
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

    /// Task ids are opaque (spec section 3.4.1): escape everything but unreserved characters.
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

    fn task_path(tenant: &Option<String>, id: &str, suffix: &str) -> String {
        format!(
            "{}/tasks/{}{suffix}",
            tenant_prefix(tenant.as_deref()),
            utf8_percent_encode(id, SEGMENT)
        )
    }

    fn tenant_prefix(tenant: Option<&str>) -> String {
        tenant
            .map(|t| format!("/{}", utf8_percent_encode(t, SEGMENT)))
            .unwrap_or_default()
    }

    /// The body of a send: the request minus the tenant, which is in the path (spec section 11).
    fn send_body(r: &SendMessageRequest) -> Value {
        let mut body = json!(r);
        if let Some(fields) = body.as_object_mut() {
            fields.remove("tenant");
        }
        body
    }

    pub fn request(call: &Call, subscribe_method: Method) -> WireRequest {
        let (method, path, query, body) = match call {
            Call::SendMessage(r) => (
                Method::POST,
                format!("{}/message:send", tenant_prefix(r.tenant.as_deref())),
                vec![],
                Some(send_body(r)),
            ),
            Call::SendStreamingMessage(r) => (
                Method::POST,
                format!("{}/message:stream", tenant_prefix(r.tenant.as_deref())),
                vec![],
                Some(send_body(r)),
            ),
            Call::GetTask(r) => {
                let query = r
                    .history_length
                    .map(|n| vec![("historyLength", n.to_string())])
                    .unwrap_or_default();
                (Method::GET, task_path(&r.tenant, &r.id, ""), query, None)
            }
            Call::ListTasks(r) => (
                Method::GET,
                format!("{}/tasks", tenant_prefix(r.tenant.as_deref())),
                list_query(r),
                None,
            ),
            Call::CancelTask(r) => {
                let body = r
                    .metadata
                    .as_ref()
                    .map_or_else(|| json!({}), |m| json!({"metadata": m}));
                (Method::POST, task_path(&r.tenant, &r.id, ":cancel"), vec![], Some(body))
            }
            // [CONFLICT] spec says POST, proto says GET: the caller retries with GET on 405.
            Call::SubscribeToTask(r) => (
                subscribe_method,
                task_path(&r.tenant, &r.id, ":subscribe"),
                vec![],
                None,
            ),
            Call::CreatePushConfig(c) => (
                Method::POST,
                task_path(&c.tenant, &c.task_id, "/pushNotificationConfigs"),
                vec![],
                Some(super::push_config_body(c)),
            ),
            Call::DeletePushConfig(d) => (
                Method::DELETE,
                task_path(
                    &d.tenant,
                    &d.task_id,
                    &format!("/pushNotificationConfigs/{}", utf8_percent_encode(&d.id, SEGMENT)),
                ),
                vec![],
                None,
            ),
            Call::GetExtendedAgentCard { tenant } => (
                Method::GET,
                format!("{}/extendedAgentCard", tenant_prefix(*tenant)),
                vec![],
                None,
            ),
        };
        WireRequest {
            method,
            path,
            query,
            body,
        }
    }

    /// Query names are the camelCase field names (spec section 11.5).
    fn list_query(r: &ListTasksRequest) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        let mut push = |k: &'static str, v: Option<String>| {
            if let Some(v) = v {
                q.push((k, v));
            }
        };
        push("contextId", r.context_id.clone());
        push("status", r.status.as_ref().map(|s| s.proto_name().to_string()));
        push("pageSize", r.page_size.map(|n| n.to_string()));
        push("pageToken", r.page_token.clone().filter(|t| !t.is_empty()));
        push("historyLength", r.history_length.map(|n| n.to_string()));
        push("statusTimestampAfter", r.status_timestamp_after.map(|t| t.to_string()));
        push("includeArtifacts", r.include_artifacts.map(|b| b.to_string()));
        q
    }

    /// The shapes REST errors come in: google.rpc.Status (spec section 11.6), RFC 9457 problem
    /// details (spec examples section 6.4), a2a-python 0.3 `{message}`, a2a-js 0.3 `{code, message}`.
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        error: Option<WireError>,
        title: Option<String>,
        detail: Option<String>,
        message: Option<String>,
        code: Option<Value>,
    }

    pub fn error_from_body(status: u16, what: &str, body: &[u8]) -> Error {
        let Ok(parsed) = serde_json::from_slice::<ErrorBody>(body) else {
            return Error::Http {
                status,
                what: what.into(),
                excerpt: excerpt(body),
                retry_after: None,
            };
        };
        if let Some(err) = parsed.error {
            return err.into_rest_error(status);
        }
        let message = match (parsed.title, parsed.detail, parsed.message) {
            (Some(t), Some(d), _) => format!("{t}: {d}"),
            (t, d, m) => match t.or(d).or(m) {
                Some(m) => m,
                None => {
                    return Error::Http {
                        status,
                        what: what.into(),
                        excerpt: excerpt(body),
                        retry_after: None,
                    };
                }
            },
        };
        WireError {
            code: parsed.code,
            message: Some(message),
            data: None,
            details: None,
            status: None,
        }
        .into_rest_error(status)
    }

    pub fn decode<T: DeserializeOwned>(what: &str, status: u16, body: &[u8]) -> Result<T> {
        if !(200..300).contains(&status) {
            return Err(error_from_body(status, what, body));
        }
        serde_json::from_slice(body).map_err(|e| Error::decode(what, body, e))
    }

    /// REST frames are the bare StreamResponse; SDKs send in-stream errors as `event: error` with
    /// an `{"error": …}` body.
    pub fn decode_frame(frame: &Frame) -> Result<StreamResponse> {
        let data = frame.data.as_bytes();
        if frame.event == "error" || frame.data.trim_start().starts_with("{\"error\"") {
            return Err(error_from_body(500, "stream", data));
        }
        // Text the SSE layer has checked: no second UTF-8 pass.
        serde_json::from_str(&frame.data).map_err(|e| Error::decode("stream event", data, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::error::ErrorKind;
    use crate::a2a::types::TaskState;

    #[test]
    fn v03_has_its_own_method_names_and_no_list() {
        let get = GetTaskRequest {
            id: "t".into(),
            ..Default::default()
        };
        let r = jsonrpc::request(&Call::GetTask(&get), ProtocolVersion::V0_3, 1).unwrap();
        assert_eq!(r.body.unwrap()["method"], "tasks/get");
        let list = ListTasksRequest::default();
        let err = jsonrpc::request(&Call::ListTasks(&list), ProtocolVersion::V0_3, 2).unwrap_err();
        assert_eq!(err.to_string(), "ListTasks does not exist in A2A 0.3");
    }

    #[test]
    fn rest_paths_escape_ids_and_carry_the_tenant() {
        let cancel = TaskIdRequest {
            id: "a/b c".into(),
            tenant: Some("acme".into()),
            metadata: None,
        };
        let r = rest::request(&Call::CancelTask(&cancel), Method::POST);
        assert_eq!(r.path, "/acme/tasks/a%2Fb%20c:cancel");
        let list = ListTasksRequest {
            context_id: Some("c-4".into()),
            status: Some(TaskState::AuthRequired),
            page_size: Some(100),
            include_artifacts: Some(false),
            ..Default::default()
        };
        let q = rest::request(&Call::ListTasks(&list), Method::GET).query;
        assert_eq!(
            q,
            vec![
                ("contextId", "c-4".to_string()),
                ("status", "TASK_STATE_AUTH_REQUIRED".into()),
                ("pageSize", "100".into()),
                ("includeArtifacts", "false".into())
            ]
        );
    }

    #[test]
    fn the_tenant_reaches_sends_on_both_bindings() {
        let send = SendMessageRequest {
            tenant: Some("acme".into()),
            ..Default::default()
        };
        let rest_send = rest::request(&Call::SendMessage(&send), Method::POST);
        assert_eq!(rest_send.path, "/acme/message:send");
        assert!(
            rest_send.body.unwrap().get("tenant").is_none(),
            "a path field is not in the body"
        );
        let rpc_send = jsonrpc::request(&Call::SendStreamingMessage(&send), ProtocolVersion::V1_0, 1).unwrap();
        assert_eq!(rpc_send.body.unwrap()["params"]["tenant"], "acme");
        let card = Call::GetExtendedAgentCard { tenant: Some("acme") };
        assert_eq!(rest::request(&card, Method::GET).path, "/acme/extendedAgentCard");
        let rpc_card = jsonrpc::request(&card, ProtocolVersion::V1_0, 2).unwrap();
        assert_eq!(rpc_card.body.unwrap()["params"], json!({"tenant": "acme"}));
        let old_card =
            jsonrpc::request(&Call::GetExtendedAgentCard { tenant: None }, ProtocolVersion::V0_3, 3).unwrap();
        assert_eq!(old_card.body.unwrap()["method"], "agent/getAuthenticatedExtendedCard");
    }

    #[test]
    fn rest_error_shapes_all_classify() {
        let status = br#"{"error":{"code":404,"status":"NOT_FOUND","message":"task t-9 not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]}}"#;
        assert!(rest::error_from_body(404, "GetTask", status).is_kind(ErrorKind::TaskNotFound));
        let problem = br#"{"type":"about:blank","title":"Not found","status":404,"detail":"no task"}"#;
        assert_eq!(
            rest::error_from_body(404, "GetTask", problem).to_string(),
            "AgentError (404): Not found: no task"
        );
        let js03 = br#"{"code":-32001,"message":"Task not found"}"#;
        assert!(rest::error_from_body(404, "GetTask", js03).is_kind(ErrorKind::TaskNotFound));
        let html = b"<html>404</html>";
        assert!(matches!(
            rest::error_from_body(404, "GetTask", html),
            Error::Http { status: 404, .. }
        ));
    }

    #[test]
    fn push_configs_on_both_bindings_and_in_0_3() {
        let create = PushConfig {
            task_id: "t/1".into(),
            id: "w".into(),
            url: "http://127.0.0.1:9/push/0".into(),
            token: crate::a2a::auth::Secret::new("tok"),
            tenant: Some("acme".into()),
        };
        let delete = PushConfigId {
            task_id: "t/1".into(),
            id: "w".into(),
            tenant: None,
        };
        let rpc = jsonrpc::request(&Call::CreatePushConfig(&create), ProtocolVersion::V1_0, 1).unwrap();
        let body = rpc.body.unwrap();
        assert_eq!(body["method"], "CreateTaskPushNotificationConfig");
        assert_eq!(
            body["params"],
            json!({"taskId": "t/1", "id": "w", "url": "http://127.0.0.1:9/push/0", "token": "tok", "tenant": "acme"})
        );
        let rpc = jsonrpc::request(&Call::DeletePushConfig(&delete), ProtocolVersion::V1_0, 2).unwrap();
        assert_eq!(
            rpc.body.unwrap(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "DeleteTaskPushNotificationConfig", "params": {"taskId": "t/1", "id": "w"}})
        );
        let old = jsonrpc::request(&Call::CreatePushConfig(&create), ProtocolVersion::V0_3, 3).unwrap();
        let body = old.body.unwrap();
        assert_eq!(body["method"], "tasks/pushNotificationConfig/set");
        assert_eq!(body["params"]["pushNotificationConfig"]["token"], "tok");
        let old = jsonrpc::request(&Call::DeletePushConfig(&delete), ProtocolVersion::V0_3, 4).unwrap();
        let body = old.body.unwrap();
        assert_eq!(body["method"], "tasks/pushNotificationConfig/delete");
        assert_eq!(body["params"], json!({"id": "t/1", "pushNotificationConfigId": "w"}));
        let rest_create = rest::request(&Call::CreatePushConfig(&create), Method::POST);
        assert_eq!(
            (rest_create.method, rest_create.path.as_str()),
            (Method::POST, "/acme/tasks/t%2F1/pushNotificationConfigs")
        );
        assert!(rest_create.body.unwrap().get("tenant").is_none());
        let rest_delete = rest::request(&Call::DeletePushConfig(&delete), Method::POST);
        assert_eq!(
            (rest_delete.method, rest_delete.path.as_str()),
            (Method::DELETE, "/tasks/t%2F1/pushNotificationConfigs/w")
        );
        assert!(format!("{create:?}").contains("Secret(***)"), "the token never prints");
    }

    #[test]
    fn an_empty_delete_reply_is_success_and_an_error_is_not() {
        assert!(jsonrpc::decode_empty("Delete", br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_ok());
        assert!(jsonrpc::decode_empty("Delete", br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_ok());
        let err = jsonrpc::decode_empty(
            "Delete",
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#,
        )
        .unwrap_err();
        assert!(err.is_kind(ErrorKind::TaskNotFound), "{err}");
    }

    #[test]
    fn jsonrpc_bodies_with_neither_result_nor_error_are_errors() {
        let r: Result<Value> = jsonrpc::decode("GetTask", br#"{"jsonrpc":"2.0","id":1}"#);
        assert!(matches!(r, Err(Error::Http { .. })));
    }
}
