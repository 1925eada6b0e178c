//! The gRPC binding (spec section 10): the same operations as JSON-RPC and HTTP+JSON, as protobuf
//! over HTTP/2 to `lf.a2a.v1.A2AService`.
//!
//! Messages are transcoded, not generated: a request is the operation's proto JSON (what JSON-RPC
//! sends as params) read into a message of the method's input type, and a reply is written back to
//! proto JSON (what HTTP+JSON sends) and read by the same serde types as the other bindings. One
//! model of the protocol, one set of tolerances (unknown enum values arrive as numbers, which the
//! types keep as `Unknown`), and the types come from the specification's own a2a.proto, compiled
//! into `proto/a2a.desc` (proto/README.md). Everything around the call (credentials, extensions,
//! the version, where a credential may go) is decided in `client`, as for the other bindings.

use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use futures::{Stream, StreamExt};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, MethodDescriptor};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status};
use url::Url;

use super::error::{Error, ErrorKind, Result, WireError};
use super::types::StreamResponse;
use super::wire::Call;

/// The service every A2A gRPC server implements (spec section 10.1).
const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The specification's a2a.proto with what it imports, and google.rpc's status and error details
/// for the errors (spec section 10.6); scripts/gen-proto.sh makes it, a test checks it is current.
pub const DESCRIPTOR_SET: &[u8] = include_bytes!("../../proto/a2a.desc");

static POOL: LazyLock<DescriptorPool> =
    LazyLock::new(|| DescriptorPool::decode(DESCRIPTOR_SET).expect("proto/a2a.desc is a descriptor set"));

fn method(call: &Call) -> MethodDescriptor {
    POOL.get_service_by_name(SERVICE)
        .and_then(|service| service.methods().find(|m| m.name() == call.name()))
        .expect("every operation is a method of A2AService in proto/a2a.desc")
}

/// The connection to a gRPC interface: checked when the client is made, connected on first use
/// (and again after a failure), since making the channel needs the runtime. TLS for https, with
/// the system's roots like the HTTP stack.
#[derive(Debug)]
pub struct Link {
    endpoint: Endpoint,
    channel: OnceLock<Channel>,
}

impl Link {
    pub fn new(url: &Url, connect_timeout: Duration) -> Result<Link> {
        let bad = |e: tonic::transport::Error| {
            Error::Input(format!(
                "the gRPC interface {} cannot be used: {e}",
                super::auth::shown_url(url)
            ))
        };
        let mut endpoint = Endpoint::from_shared(url.as_str().trim_end_matches('/').to_string())
            .map_err(bad)?
            .connect_timeout(connect_timeout);
        if url.scheme() == "https" {
            endpoint = endpoint
                .tls_config(ClientTlsConfig::new().with_native_roots())
                .map_err(bad)?;
        }
        Ok(Link {
            endpoint,
            channel: OnceLock::new(),
        })
    }

    fn client(&self, message_limit: usize) -> tonic::client::Grpc<Channel> {
        let channel = self.channel.get_or_init(|| self.endpoint.connect_lazy()).clone();
        tonic::client::Grpc::new(channel).max_decoding_message_size(message_limit)
    }
}

/// Where a card's gRPC interface URL points. Newer specification text writes `host:port`, older
/// cards `http(s)://host:port` (docs/protocol-notes.md, "gRPC"): without a scheme, TLS (spec
/// section 10.1) unless the host is loopback, where the SDKs serve plain HTTP/2.
pub fn interface_url(written: &str) -> Option<Url> {
    if written.contains("://") {
        return Url::parse(written).ok().filter(|u| u.host().is_some());
    }
    let loopback = Url::parse(&format!("http://{written}")).ok()?;
    if super::auth::is_loopback(&loopback) {
        return Some(loopback);
    }
    Url::parse(&format!("https://{written}")).ok()
}

/// One request: the call's message, its metadata, and a bound on what a reply may be.
pub struct Request {
    pub metadata: MetadataMap,
    pub message_limit: usize,
}

/// A unary call, its reply read as `T`. `Err(Status)` is the agent's refusal, for `client` to
/// classify (an authentication refusal needs the client's view of the credential).
pub async fn unary<T: DeserializeOwned>(
    link: &Link,
    call: &Call<'_>,
    req: Request,
    timeout: Duration,
) -> Result<std::result::Result<T, Status>> {
    let method = method(call);
    let (request, path) = request(call, &method, req.metadata)?;
    let mut grpc = link.client(req.message_limit);
    let reply = async {
        grpc.ready().await.map_err(|e| Status::unavailable(e.to_string()))?;
        grpc.unary(request, path, RawCodec).await
    };
    let reply = match tokio::time::timeout(timeout, reply).await {
        Ok(reply) => reply,
        Err(_) => {
            return Err(Error::Unreachable {
                what: call.name().to_string(),
                cause: format!("no reply within {}s", timeout.as_secs()),
            });
        }
    };
    match reply {
        Ok(resp) => Ok(Ok(decode(&method.output(), call.name(), resp.into_inner())?)),
        Err(status) => Ok(Err(status)),
    }
}

/// A server-streaming call: the stream of StreamResponses, or the status that refused it before
/// any event. A status after events ends the stream as one typed error, as an SSE error frame does.
pub async fn stream(
    link: &Link,
    call: &Call<'_>,
    req: Request,
) -> Result<std::result::Result<impl Stream<Item = Result<StreamResponse>> + Send + 'static, Status>> {
    let method = method(call);
    let (request, path) = request(call, &method, req.metadata)?;
    let mut grpc = link.client(req.message_limit);
    if let Err(e) = grpc.ready().await {
        return Ok(Err(Status::unavailable(e.to_string())));
    }
    let what = call.name();
    let output = method.output();
    Ok(match grpc.server_streaming(request, path, RawCodec).await {
        Ok(resp) => Ok(resp.into_inner().map(move |item| match item {
            Ok(bytes) => decode(&output, "stream event", bytes),
            Err(status) => Err(error(&status, what)),
        })),
        Err(status) => Err(status),
    })
}

fn request(
    call: &Call,
    method: &MethodDescriptor,
    metadata: MetadataMap,
) -> Result<(tonic::Request<Bytes>, http::uri::PathAndQuery)> {
    let json = super::wire::message(call);
    // Fields of ours the proto does not have are left out rather than refused: the agent would
    // not read them either.
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let message = DynamicMessage::deserialize_with_options(method.input(), json, &options)
        .map_err(|e| Error::Input(format!("{} cannot be put in protobuf: {e}", call.name())))?;
    let path = format!("/{SERVICE}/{}", method.name())
        .parse()
        .expect("service and method names are valid path characters");
    let mut request = tonic::Request::new(Bytes::from(message.encode_to_vec()));
    *request.metadata_mut() = metadata;
    Ok((request, path))
}

/// A reply message read as `T`, by way of its proto JSON.
fn decode<T: DeserializeOwned>(output: &MessageDescriptor, what: &str, bytes: Bytes) -> Result<T> {
    let undecodable = |e: String| Error::Stream(format!("{what}: not a {} message: {e}", output.full_name()));
    let message = DynamicMessage::decode(output.clone(), bytes).map_err(|e| undecodable(e.to_string()))?;
    let json = serde_json::to_value(&message).map_err(|e| undecodable(e.to_string()))?;
    serde_json::from_value(json.clone()).map_err(|e| Error::decode(what, json.to_string().as_bytes(), e))
}

/// The HTTP status the specification pairs with a gRPC code (spec section 5.4, and the gRPC
/// project's own HTTP mapping for the rest), so one classification serves every binding.
pub fn http_status(code: Code) -> u16 {
    match code {
        Code::Ok => 200,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
        Code::Unauthenticated => 401,
        Code::PermissionDenied => 403,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::ResourceExhausted => 429,
        Code::Cancelled => 499,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::DeadlineExceeded => 504,
        Code::Unknown | Code::Internal | Code::DataLoss => 500,
    }
}

/// A refusal as our error: by the ErrorInfo reason the agent attached (spec section 10.6), else by
/// the code where the mapping gives it to one A2A error only (spec section 5.4). A call that never
/// reached the agent, or was cut off, is `Unreachable`, which is worth retrying.
pub fn error(status: &Status, what: &str) -> Error {
    let message = crate::text::one_line(status.message());
    let details = details(status.details());
    let has_reason = details.iter().any(|d| d.get("reason").is_some());
    match status.code() {
        Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled if !has_reason => {
            return Error::Unreachable {
                what: what.to_string(),
                cause: message,
            };
        }
        Code::ResourceExhausted if !has_reason => {
            return Error::Http {
                status: 429,
                what: what.to_string(),
                excerpt: message,
                retry_after: None,
            };
        }
        _ => {}
    }
    let by_code = match status.code() {
        Code::NotFound => Some(ErrorKind::TaskNotFound),
        Code::Unimplemented => Some(ErrorKind::MethodNotFound),
        _ => None,
    };
    let code = (!has_reason)
        .then_some(by_code)
        .flatten()
        .map(|k| Value::from(k.code()));
    WireError {
        code,
        message: Some(message),
        data: None,
        details: Some(Value::Array(details)),
        status: Some(Value::from(format!("{:?}", status.code()))),
    }
    .into_rest_error(http_status(status.code()))
}

/// The `details` of the google.rpc.Status a server sends in `grpc-status-details-bin`, as proto
/// JSON (an ErrorInfo becomes `{"@type": …, "reason": …, "domain": …}`); nothing if there is none
/// or it does not decode.
fn details(bytes: &[u8]) -> Vec<Value> {
    let Some(status) = POOL.get_message_by_name("google.rpc.Status") else {
        return Vec::new();
    };
    if bytes.is_empty() {
        return Vec::new();
    }
    DynamicMessage::decode(status, bytes)
        .ok()
        .and_then(|m| serde_json::to_value(&m).ok())
        .and_then(|mut v| v.get_mut("details").map(Value::take))
        .and_then(|d| match d {
            Value::Array(items) => Some(items),
            _ => None,
        })
        .unwrap_or_default()
}

/// Bytes in, bytes out: the transcoding happens around the call, where its errors are ours.
#[derive(Clone, Copy)]
pub struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }

    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> std::result::Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> std::result::Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_operation_is_a_method_with_the_types_the_specification_names() {
        let get = crate::a2a::types::GetTaskRequest::default();
        let m = method(&Call::GetTask(&get));
        assert_eq!(
            (m.input().full_name(), m.output().full_name()),
            ("lf.a2a.v1.GetTaskRequest", "lf.a2a.v1.Task")
        );
        assert!(method(&Call::SubscribeToTask(&Default::default())).is_server_streaming());
        assert!(!method(&Call::SendMessage(&Default::default())).is_server_streaming());
        let card = method(&Call::GetExtendedAgentCard { tenant: None });
        assert_eq!(card.output().full_name(), "lf.a2a.v1.AgentCard");
    }

    #[test]
    fn interface_urls_with_and_without_a_scheme() {
        let url = |s: &str| interface_url(s).map(|u| u.to_string());
        assert_eq!(url("127.0.0.1:50051").as_deref(), Some("http://127.0.0.1:50051/"));
        assert_eq!(url("localhost:7").as_deref(), Some("http://localhost:7/"));
        assert_eq!(
            url("agents.example.com:443").as_deref(),
            Some("https://agents.example.com/")
        );
        assert_eq!(url("http://10.0.0.2:9").as_deref(), Some("http://10.0.0.2:9/"));
        assert_eq!(url("https://h:8443").as_deref(), Some("https://h:8443/"));
        assert_eq!(url("not a host"), None);
    }

    #[test]
    fn a_request_is_the_operations_proto_json_in_protobuf() {
        let get = crate::a2a::types::GetTaskRequest {
            id: "t-1".into(),
            history_length: Some(3),
            tenant: Some("acme".into()),
        };
        let call = Call::GetTask(&get);
        let (req, path) = request(&call, &method(&call), MetadataMap::new()).unwrap();
        assert_eq!(path.as_str(), "/lf.a2a.v1.A2AService/GetTask");
        let back = DynamicMessage::decode(method(&call).input(), req.into_inner()).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            json!({"tenant": "acme", "id": "t-1", "historyLength": 3})
        );
    }

    #[test]
    fn a_reply_reads_as_our_types_and_keeps_an_unknown_state() {
        let task = POOL.get_message_by_name("lf.a2a.v1.Task").unwrap();
        let mut m = DynamicMessage::deserialize(
            task.clone(),
            json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-01T10:00:00Z"},
                   "metadata": {"n": 1.5, "tags": ["a"]}}),
        )
        .unwrap();
        let decoded: crate::a2a::Task = decode(&task, "GetTask", Bytes::from(m.encode_to_vec())).unwrap();
        assert_eq!(decoded.status.state, crate::a2a::TaskState::Working);
        assert_eq!(decoded.metadata.as_ref().unwrap()["tags"], json!(["a"]));
        // A state a newer server knows and this proto does not: kept, not fatal.
        let status = m.get_field_by_name_mut("status").unwrap();
        if let prost_reflect::Value::Message(s) = status {
            s.set_field_by_name("state", prost_reflect::Value::EnumNumber(42));
        }
        let decoded: crate::a2a::Task = decode(&task, "GetTask", Bytes::from(m.encode_to_vec())).unwrap();
        assert_eq!(decoded.status.state.class(), crate::a2a::StateClass::Unknown);
    }

    fn status_with_reason(code: Code, reason: &str) -> Status {
        let status = POOL.get_message_by_name("google.rpc.Status").unwrap();
        let details = json!({"code": code as i32, "message": "refused\nhere", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}]});
        let details = DynamicMessage::deserialize(status, details).unwrap();
        Status::with_details(code, "refused\nhere", Bytes::from(details.encode_to_vec()))
    }

    #[test]
    fn refusals_classify_by_reason_then_by_code() {
        // Several A2A errors share FAILED_PRECONDITION (spec section 5.4): only the reason tells.
        let e = error(
            &status_with_reason(Code::FailedPrecondition, "TASK_NOT_CANCELABLE"),
            "CancelTask",
        );
        assert!(e.is_kind(ErrorKind::TaskNotCancelable), "{e}");
        let e = error(
            &status_with_reason(Code::FailedPrecondition, "UNSUPPORTED_OPERATION"),
            "SubscribeToTask",
        );
        assert!(e.is_kind(ErrorKind::UnsupportedOperation), "{e}");
        assert!(!e.to_string().contains('\n'), "agent text is one line: {e}");
        // Without details, NOT_FOUND is TaskNotFound: the only A2A error mapped to it.
        assert!(error(&Status::not_found("no such task"), "GetTask").is_kind(ErrorKind::TaskNotFound));
        assert!(matches!(
            error(&Status::unavailable("tcp connect error"), "GetTask"),
            Error::Unreachable { .. }
        ));
        assert!(error(&Status::unavailable("x"), "GetTask").is_retryable());
        let other = error(&Status::failed_precondition("nope"), "CancelTask");
        assert_eq!(other.kind(), Some(ErrorKind::Other), "{other}");
        assert!(matches!(
            error(&Status::resource_exhausted("slow down"), "ListTasks"),
            Error::Http { status: 429, .. }
        ));
    }
}
