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

use std::sync::atomic::{AtomicUsize, Ordering};
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
pub const DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/a2a.desc"));

static POOL: LazyLock<DescriptorPool> =
    LazyLock::new(|| DescriptorPool::decode(DESCRIPTOR_SET).expect("proto/a2a.desc is a descriptor set"));

fn method(call: &Call) -> MethodDescriptor {
    POOL.get_service_by_name(SERVICE)
        .and_then(|service| service.methods().find(|m| m.name() == call.name()))
        .expect("every operation is a method of A2AService in proto/a2a.desc")
}

/// Connections a gRPC interface's streams are spread over. Proxies and load balancers commonly
/// cap the concurrent streams of one HTTP/2 connection at 100 to 128 and queue the rest without an
/// error, while the engine holds up to 256 subscriptions by default (`WatchOptions::max_streams`).
const STREAM_CONNECTIONS: usize = 4;

/// The connections to a gRPC interface: checked when the client is made, connected on first use
/// (and again after a failure), since making a channel needs the runtime. Unary calls have a
/// connection of their own, so a listing never queues behind subscriptions. TLS for https, with
/// the system's roots like the HTTP stack.
#[derive(Debug)]
pub struct Link {
    endpoint: Endpoint,
    unary: OnceLock<Channel>,
    streams: [OnceLock<Channel>; STREAM_CONNECTIONS],
    next_stream: AtomicUsize,
}

impl Link {
    pub fn new(url: &Url, connect_timeout: Duration) -> Result<Link> {
        let bad = |e: tonic::transport::Error| {
            Error::Input(format!(
                "the gRPC interface {} cannot be used: {e}",
                super::shown::ShownUrl::of(url)
            ))
        };
        let mut endpoint = Endpoint::from_shared(url.as_str().trim_end_matches('/').to_string())
            .map_err(bad)?
            .connect_timeout(connect_timeout)
            // As the HTTP stack does (reqwest's default): a connection gone half-open, which
            // would hold every stream on it silent, is found and dropped.
            .tcp_keepalive(Some(Duration::from_secs(15)));
        if url.scheme() == "https" {
            endpoint = endpoint
                .tls_config(ClientTlsConfig::new().with_native_roots())
                .map_err(bad)?;
        }
        Ok(Link {
            endpoint,
            unary: OnceLock::new(),
            streams: Default::default(),
            next_stream: AtomicUsize::new(0),
        })
    }

    fn client(&self, streaming: bool, message_limit: usize) -> tonic::client::Grpc<Channel> {
        let slot = if streaming {
            &self.streams[self.next_stream.fetch_add(1, Ordering::Relaxed) % STREAM_CONNECTIONS]
        } else {
            &self.unary
        };
        let channel = slot.get_or_init(|| self.endpoint.connect_lazy()).clone();
        tonic::client::Grpc::new(channel).max_decoding_message_size(message_limit)
    }
}

/// Where a card's gRPC interface URL points. Newer specification text writes `host:port`, older
/// cards `http(s)://host:port` (docs/protocol-notes.md, "gRPC"): without a scheme, TLS (spec
/// section 10.1) unless the host is loopback, where the SDKs serve plain HTTP/2. Any other scheme
/// (`grpc://`...) is not one we would know to secure, and a path would be dropped by the
/// channel, so neither is an interface we speak.
pub fn interface_url(written: &str) -> Option<Url> {
    let url = if written.contains("://") {
        Url::parse(written).ok()?
    } else {
        let loopback = Url::parse(&format!("http://{written}")).ok()?;
        if super::auth::is_loopback(&loopback) {
            loopback
        } else {
            Url::parse(&format!("https://{written}")).ok()?
        }
    };
    let plain = matches!(url.scheme(), "http" | "https") && url.host().is_some();
    (plain && url.path() == "/" && url.query().is_none()).then_some(url)
}

/// One request: its metadata, and how to read its refusals.
pub struct Request {
    pub metadata: MetadataMap,
    pub refusal: Refusal,
}

/// What reading a refusal needs; for a stream it lives as long as the stream.
pub struct Refusal {
    /// What to call the call in errors (`SendMessage on deployer`).
    pub what: String,
    /// The largest message taken, which tonic enforces.
    pub limit: usize,
    pub streaming: bool,
    /// UNAUTHENTICATED and PERMISSION_DENIED as the client reads a 401 or 403 (given the status):
    /// what the card asks for, how the credential was sent, which setting gave it.
    pub unauthorized: Box<dyn Fn(u16) -> Error + Send + Sync>,
}

impl Refusal {
    /// A status as our error: by the ErrorInfo reason the agent attached (spec section 10.6),
    /// else by the code where the mapping gives it to one A2A error only (spec section 5.4). A
    /// call that never reached the agent, or was cut off, is `Unreachable`, worth a retry.
    fn read(&self, status: &Status) -> Error {
        let details = details(status.details());
        let has_reason = details.iter().any(|d| d.get("reason").is_some());
        let what = self.what.clone();
        match status.code() {
            Code::Unauthenticated | Code::PermissionDenied => return (self.unauthorized)(http_status(status.code())),
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled if !has_reason => {
                return Error::Unreachable {
                    what,
                    cause: cause(status),
                };
            }
            Code::ResourceExhausted if !has_reason => {
                return Error::Http {
                    status: 429,
                    what,
                    excerpt: crate::text::one_line(status.message()),
                    retry_after: None,
                };
            }
            // No A2A error is OUT_OF_RANGE (spec section 5.4): it is tonic refusing a message
            // over our limit, as a body or frame over it is over HTTP. Not worth a retry.
            Code::OutOfRange if !has_reason && self.streaming => return Error::FrameTooLarge { limit: self.limit },
            Code::OutOfRange if !has_reason => {
                return Error::BodyTooLarge {
                    what,
                    limit: self.limit,
                };
            }
            _ => {}
        }
        let by_code = match status.code() {
            Code::NotFound => Some(ErrorKind::TaskNotFound),
            Code::Unimplemented => Some(ErrorKind::MethodNotFound),
            _ => None,
        };
        let message = crate::text::one_line(status.message());
        WireError {
            code: by_code.filter(|_| !has_reason).map(|k| Value::from(k.code())),
            message: (!message.is_empty()).then_some(message),
            data: None,
            details: Some(Value::Array(details)),
            status: Some(Value::from(format!("gRPC {:?}", status.code()))),
        }
        .into_rest_error(http_status(status.code()))
    }
}

/// Why a call failed to reach the agent: the status's message and, where tonic has one, the
/// innermost cause (`Connection refused (os error 111)`).
fn cause(status: &Status) -> String {
    let mut cause = crate::text::one_line(status.message());
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(status);
    let mut innermost = None;
    while let Some(s) = source {
        innermost = Some(s.to_string());
        source = s.source();
    }
    if let Some(inner) = innermost.filter(|i| !cause.contains(i.as_str())) {
        cause = format!("{cause} ({})", crate::text::one_line(&inner));
    }
    cause
}

/// A unary call, its reply read as `T`.
pub async fn unary<T: DeserializeOwned>(link: &Link, call: &Call<'_>, req: Request, timeout: Duration) -> Result<T> {
    let Request { metadata, refusal } = req;
    let method = method(call);
    let (request, path) = request(call, &method, metadata)?;
    let mut grpc = link.client(false, refusal.limit);
    let reply = async {
        grpc.ready().await.map_err(|e| Status::from_error(Box::new(e)))?;
        grpc.unary(request, path, RawCodec).await
    };
    match tokio::time::timeout(timeout, reply).await {
        Err(_) => Err(Error::Unreachable {
            what: refusal.what,
            cause: format!("no reply within {}s", timeout.as_secs()),
        }),
        Ok(Err(status)) => Err(refusal.read(&status)),
        Ok(Ok(resp)) => decode(&method.output(), call.name(), resp.into_inner()),
    }
}

/// A server-streaming call: the stream of StreamResponses, or the refusal that came before any.
/// A status after that (a refusal sent after the response headers, as a2a-js does, or a stream
/// cut off) ends the stream as one typed error, as an SSE error frame does; a clean end is just
/// the end, never a state (spec section 10.7).
pub async fn stream(
    link: &Link,
    call: &Call<'_>,
    req: Request,
) -> Result<impl Stream<Item = Result<StreamResponse>> + Send + 'static> {
    let Request { metadata, refusal } = req;
    let method = method(call);
    let (request, path) = request(call, &method, metadata)?;
    let mut grpc = link.client(true, refusal.limit);
    if let Err(e) = grpc.ready().await {
        return Err(refusal.read(&Status::from_error(Box::new(e))));
    }
    let output = method.output();
    match grpc.server_streaming(request, path, RawCodec).await {
        Ok(resp) => Ok(resp.into_inner().map(move |item| match item {
            Ok(bytes) => decode(&output, "stream event", bytes),
            Err(status) => Err(refusal.read(&status)),
        })),
        Err(status) => Err(refusal.read(&status)),
    }
}

fn request(
    call: &Call,
    method: &MethodDescriptor,
    metadata: MetadataMap,
) -> Result<(tonic::Request<Bytes>, http::uri::PathAndQuery)> {
    let json = super::wire::message(call);
    // Fields of ours the proto does not have are left out rather than refused: the agent would
    // not read them either. (A unit test transcodes every operation strictly.)
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
    // Most of a gRPC event's cost is here, in prost-reflect's JSON writer (BENCHMARKS.md,
    // benchmark 2, the gRPC rows); JSON text instead of a Value measured the same.
    let json = serde_json::to_value(&message).map_err(|e| undecodable(e.to_string()))?;
    T::deserialize(&json).map_err(|e| Error::decode(what, json.to_string().as_bytes(), e))
}

/// The HTTP status the specification pairs with a gRPC code (spec section 5.4, and the gRPC
/// project's own HTTP mapping for the rest), so one classification serves every binding.
fn http_status(code: Code) -> u16 {
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
    let Ok(status) = DynamicMessage::decode(status, bytes) else {
        return Vec::new();
    };
    let Some(prost_reflect::Value::List(details)) = status.get_field_by_name("details").map(|d| d.into_owned()) else {
        return Vec::new();
    };
    // One at a time: an Any of a type not in our descriptor set does not serialise, and must
    // not take the ErrorInfo beside it down with it.
    details
        .iter()
        .filter_map(|any| match any {
            prost_reflect::Value::Message(any) => serde_json::to_value(any).ok(),
            _ => None,
        })
        .collect()
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

    fn refusal(streaming: bool) -> Refusal {
        Refusal {
            what: "GetTask on runner".into(),
            limit: 1024,
            streaming,
            unauthorized: Box::new(|status| Error::Stream(format!("unauthorized {status}"))),
        }
    }

    fn error(status: &Status) -> Error {
        refusal(false).read(status)
    }

    #[test]
    fn refusals_classify_by_reason_then_by_code() {
        // Several A2A errors share FAILED_PRECONDITION (spec section 5.4): only the reason tells.
        let e = error(&status_with_reason(Code::FailedPrecondition, "TASK_NOT_CANCELABLE"));
        assert!(e.is_kind(ErrorKind::TaskNotCancelable), "{e}");
        let e = error(&status_with_reason(Code::FailedPrecondition, "UNSUPPORTED_OPERATION"));
        assert!(e.is_kind(ErrorKind::UnsupportedOperation), "{e}");
        assert!(!e.to_string().contains('\n'), "agent text is one line: {e}");
        // Without details, NOT_FOUND is TaskNotFound: the only A2A error mapped to it.
        assert!(error(&Status::not_found("no such task")).is_kind(ErrorKind::TaskNotFound));
        let down = error(&Status::unavailable("tcp connect error"));
        assert!(
            matches!(down, Error::Unreachable { .. }) && down.is_retryable(),
            "{down}"
        );
        assert!(down.to_string().contains("GetTask on runner"), "{down}");
        let other = error(&Status::failed_precondition("nope"));
        assert_eq!(other.kind(), Some(ErrorKind::Other), "{other}");
        assert!(matches!(
            error(&Status::resource_exhausted("slow down")),
            Error::Http { status: 429, .. }
        ));
        // A refused credential is the client's to read, in a stream too.
        assert_eq!(
            error(&Status::unauthenticated("no")).to_string(),
            "stream broke: unauthorized 401"
        );
        let in_stream = refusal(true).read(&Status::permission_denied("no"));
        assert_eq!(in_stream.to_string(), "stream broke: unauthorized 403");
    }

    #[test]
    fn a_message_over_our_limit_is_too_large_not_the_agents_error() {
        let over = Status::out_of_range("Error, decoded message length too large");
        let unary = error(&over);
        assert!(
            matches!(unary, Error::BodyTooLarge { limit: 1024, .. }) && !unary.is_retryable(),
            "{unary}"
        );
        let streamed = refusal(true).read(&over);
        assert!(matches!(streamed, Error::FrameTooLarge { limit: 1024 }), "{streamed}");
    }

    #[test]
    fn a_detail_of_a_type_we_do_not_know_leaves_the_reason_readable() {
        let status = POOL.get_message_by_name("google.rpc.Status").unwrap();
        let mut s = DynamicMessage::deserialize(status, json!({"code": 9, "message": "no", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_CANCELABLE", "domain": "a2a-protocol.org"}]}))
        .unwrap();
        // An Any whose type is not in our descriptor set, beside the ErrorInfo.
        let any = POOL.get_message_by_name("google.protobuf.Any").unwrap();
        let mut vendor = DynamicMessage::new(any);
        vendor.set_field_by_name(
            "type_url",
            prost_reflect::Value::String("type.example.com/vendor.Detail".into()),
        );
        vendor.set_field_by_name("value", prost_reflect::Value::Bytes(Bytes::from_static(b"\x08\x01")));
        if let Some(prost_reflect::Value::List(list)) = s.get_field_by_name_mut("details") {
            list.insert(0, prost_reflect::Value::Message(vendor));
        }
        let status = Status::with_details(Code::FailedPrecondition, "no", Bytes::from(s.encode_to_vec()));
        assert!(error(&status).is_kind(ErrorKind::TaskNotCancelable));
        let empty = error(&Status::failed_precondition(""));
        assert!(
            !empty.to_string().ends_with(": "),
            "an empty message says the code: {empty}"
        );
    }

    #[test]
    fn every_operation_transcodes_without_dropping_a_field() {
        use crate::a2a::types::*;
        let send = SendMessageRequest {
            tenant: Some("acme".into()),
            ..Default::default()
        };
        let task = TaskIdRequest {
            id: "t".into(),
            tenant: Some("acme".into()),
            metadata: None,
        };
        let list = ListTasksRequest {
            context_id: Some("c".into()),
            status: Some(crate::a2a::TaskState::Working),
            page_size: Some(100),
            page_token: Some("p".into()),
            history_length: Some(2),
            status_timestamp_after: Some(jiff::Timestamp::UNIX_EPOCH),
            include_artifacts: Some(true),
            tenant: Some("acme".into()),
        };
        let push = PushConfig {
            task_id: "t".into(),
            id: "w".into(),
            url: "http://127.0.0.1:9/push/0".into(),
            token: crate::a2a::auth::Secret::new("tok"),
            tenant: Some("acme".into()),
        };
        let delete = PushConfigId {
            task_id: "t".into(),
            id: "w".into(),
            tenant: Some("acme".into()),
        };
        let get = GetTaskRequest {
            id: "t".into(),
            history_length: Some(1),
            tenant: Some("acme".into()),
        };
        let calls = [
            Call::SendMessage(&send),
            Call::SendStreamingMessage(&send),
            Call::GetTask(&get),
            Call::ListTasks(&list),
            Call::CancelTask(&task),
            Call::SubscribeToTask(&task),
            Call::CreatePushConfig(&push),
            Call::DeletePushConfig(&delete),
            Call::GetExtendedAgentCard { tenant: Some("acme") },
        ];
        let strict = DeserializeOptions::new().deny_unknown_fields(true);
        for call in calls {
            let json = crate::a2a::wire::message(&call);
            DynamicMessage::deserialize_with_options(method(&call).input(), json.clone(), &strict)
                .unwrap_or_else(|e| panic!("{}: {json} does not fit the proto: {e}", call.name()));
        }
    }

    #[test]
    fn only_http_and_https_interfaces_without_a_path_are_dialled() {
        for odd in [
            "grpc://10.0.0.2:9",
            "grpcs://h:443",
            "ws://h:1",
            "https://gw.example/a2a",
            "http://h:1/?x=1",
        ] {
            assert_eq!(interface_url(odd), None, "{odd}");
        }
    }
}
