//! The load agent's gRPC face (`serve-load --grpc`): `lf.a2a.v1.A2AService` (spec section 10) on
//! a port of its own beside the JSON-RPC one, serving SubscribeToTask, GetTask and ListTasks from
//! the very same script and state. A request is read into the proto JSON the JSON-RPC handlers
//! take as params; a reply is the proto JSON they write, put in protobuf with prost-reflect from
//! the client's own descriptor set, except the status updates that are nearly every event: those
//! are written field by field, as the JSON-RPC side writes its frames (see `event`).

use std::convert::Infallible;
use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use axum::body::Bytes;
use futures::{Stream, StreamExt};
use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use serde_json::{Value, json};
use tonic::body::Body;
use tonic::server::{Grpc, ServerStreamingService, UnaryService};
use tonic::{Code, Request, Response, Status};

use a2a_watch::a2a::grpc::{DESCRIPTOR_SET, RawCodec};

use super::{
    LoadAgent, NOT_FOUND, Progress, Refusal, Step, TERMINAL, Wire, events, get_task, list, message_id, subscribable,
};

const SERVICE: &str = "lf.a2a.v1.A2AService";

static POOL: LazyLock<DescriptorPool> =
    LazyLock::new(|| DescriptorPool::decode(DESCRIPTOR_SET).expect("proto/a2a.desc is a descriptor set"));

pub(super) static STREAM_RESPONSE: LazyLock<MessageDescriptor> = LazyLock::new(|| message("lf.a2a.v1.StreamResponse"));

fn message(name: &str) -> MessageDescriptor {
    POOL.get_message_by_name(name)
        .unwrap_or_else(|| panic!("{name} is in proto/a2a.desc"))
}

fn method(name: &str) -> MethodDescriptor {
    POOL.get_service_by_name(SERVICE)
        .and_then(|s| s.methods().find(|m| m.name() == name))
        .unwrap_or_else(|| panic!("{name} is a method of {SERVICE}"))
}

/// Proto JSON the load agent wrote, as protobuf.
fn encode(message: &MessageDescriptor, json: &str) -> Bytes {
    let mut reader = serde_json::Deserializer::from_str(json);
    let m = DynamicMessage::deserialize(message.clone(), &mut reader).unwrap_or_else(|e| {
        panic!(
            "the load agent writes {} in proto JSON: {e}: {json}",
            message.full_name()
        )
    });
    Bytes::from(m.encode_to_vec())
}

/// One event of a subscription, written by `LoadAgent::step` or as the snapshot.
pub(super) fn stream_response(json: &str) -> Bytes {
    encode(&STREAM_RESPONSE, json)
}

/// A step of the script as one StreamResponse, `p` being where the task is after it. prost-reflect
/// takes about 13 µs to read a status update from proto JSON and encode it (5.5 µs reading, 7.8 µs
/// encoding, measured on the benchmarks' machine), several times what the JSON-RPC side spends on
/// a frame, which would make the load agent rather than the client the bottleneck; so status
/// updates are written field by field (`status_update`, checked against prost-reflect by a
/// test), and the rare artifact chunks go through prost-reflect.
pub(super) fn event(agent: &LoadAgent, index: usize, step: &Step, p: &Progress) -> Bytes {
    match step {
        Step::Status(_) => status_update(agent, index, p),
        Step::Chunk(_) => {
            let mut json = String::new();
            agent.event_json(index, step, p, &mut json);
            stream_response(&json)
        }
    }
}

/// The field numbers and enum values a status update needs, from the descriptor set.
struct Numbers {
    status_update: u32,
    update_task_id: u32,
    update_context_id: u32,
    update_status: u32,
    state: u32,
    message: u32,
    timestamp: u32,
    message_id: u32,
    message_context_id: u32,
    message_task_id: u32,
    role: u32,
    parts: u32,
    text: u32,
    seconds: u32,
    nanos: u32,
    working: u64,
    completed: u64,
    role_agent: u64,
}

static NUMBERS: LazyLock<Numbers> = LazyLock::new(|| {
    let field = |message_name: &str, field: &str| {
        message(message_name)
            .get_field_by_name(field)
            .unwrap_or_else(|| panic!("{message_name} has {field}"))
            .number()
    };
    let value = |enum_name: &str, value: &str| {
        let number = POOL
            .get_enum_by_name(enum_name)
            .and_then(|e| e.get_value_by_name(value))
            .unwrap_or_else(|| panic!("{enum_name} has {value}"))
            .number();
        u64::try_from(number).expect("a non-negative enum value")
    };
    let (update, status, msg) = (
        "lf.a2a.v1.TaskStatusUpdateEvent",
        "lf.a2a.v1.TaskStatus",
        "lf.a2a.v1.Message",
    );
    Numbers {
        status_update: field("lf.a2a.v1.StreamResponse", "status_update"),
        update_task_id: field(update, "task_id"),
        update_context_id: field(update, "context_id"),
        update_status: field(update, "status"),
        state: field(status, "state"),
        message: field(status, "message"),
        timestamp: field(status, "timestamp"),
        message_id: field(msg, "message_id"),
        message_context_id: field(msg, "context_id"),
        message_task_id: field(msg, "task_id"),
        role: field(msg, "role"),
        parts: field(msg, "parts"),
        text: field("lf.a2a.v1.Part", "text"),
        seconds: field("google.protobuf.Timestamp", "seconds"),
        nanos: field("google.protobuf.Timestamp", "nanos"),
        working: value("lf.a2a.v1.TaskState", "TASK_STATE_WORKING"),
        completed: value("lf.a2a.v1.TaskState", "TASK_STATE_COMPLETED"),
        role_agent: value("lf.a2a.v1.Role", "ROLE_AGENT"),
    }
});

fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A varint field; zero, proto3's default, is left out as encoders do.
fn put_varint(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        encode_key(field, WireType::Varint, out);
        encode_varint(value, out);
    }
}

/// The status update `LoadAgent::event_json` writes as proto JSON, in protobuf.
fn status_update(agent: &LoadAgent, index: usize, p: &Progress) -> Bytes {
    let n = &*NUMBERS;
    let task_id = agent.slots[index].id.as_bytes();
    let context = agent.context.as_bytes();
    let mut part = Vec::new();
    put_bytes(&mut part, n.text, agent.status_text(p).as_bytes());
    let mut message = Vec::new();
    put_bytes(
        &mut message,
        n.message_id,
        message_id(agent.index, index, p.statuses).as_bytes(),
    );
    put_bytes(&mut message, n.message_context_id, context);
    put_bytes(&mut message, n.message_task_id, task_id);
    put_varint(&mut message, n.role, n.role_agent);
    put_bytes(&mut message, n.parts, &part);
    let mut timestamp = Vec::new();
    put_varint(&mut timestamp, n.seconds, p.at.as_second().cast_unsigned());
    put_varint(
        &mut timestamp,
        n.nanos,
        u64::from(p.at.subsec_nanosecond().cast_unsigned()),
    );
    let mut status = Vec::new();
    let state = if agent.terminal(p) { n.completed } else { n.working };
    put_varint(&mut status, n.state, state);
    put_bytes(&mut status, n.message, &message);
    put_bytes(&mut status, n.timestamp, &timestamp);
    let mut update = Vec::new();
    put_bytes(&mut update, n.update_task_id, task_id);
    put_bytes(&mut update, n.update_context_id, context);
    put_bytes(&mut update, n.update_status, &status);
    let mut out = Vec::with_capacity(update.len() + 4);
    put_bytes(&mut out, n.status_update, &update);
    Bytes::from(out)
}

/// A request as the proto JSON JSON-RPC would have sent as params.
fn params(method: &MethodDescriptor, request: Request<Bytes>) -> Result<Value, Status> {
    let bad = |e: String| Status::invalid_argument(format!("not a {}: {e}", method.input().full_name()));
    let m = DynamicMessage::decode(method.input(), request.into_inner()).map_err(|e| bad(e.to_string()))?;
    serde_json::to_value(&m).map_err(|e| bad(e.to_string()))
}

/// An A2A error as gRPC: the code and the ErrorInfo reason clients classify it by (spec section
/// 10.6).
fn refusal(code: Code, reason: &str, text: &str) -> Status {
    let status = json!({"code": code as i32, "message": text, "details": [{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}]});
    Status::with_details(code, text, encode(&message("google.rpc.Status"), &status.to_string()))
}

fn not_found() -> Status {
    refusal(Code::NotFound, "TASK_NOT_FOUND", NOT_FOUND)
}

/// The service, routed by hand: three methods do not need generated code.
#[derive(Clone)]
pub(super) struct Face(pub(super) Arc<LoadAgent>);

impl tonic::codegen::Service<http::Request<Body>> for Face {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let agent = self.0.clone();
        Box::pin(async move {
            let name = req
                .uri()
                .path()
                .strip_prefix(&format!("/{SERVICE}/"))
                .map(str::to_string);
            let mut grpc = Grpc::new(RawCodec);
            Ok(match name.as_deref() {
                Some("SubscribeToTask") => grpc.server_streaming(Subscribe(agent), req).await,
                Some(op @ ("GetTask" | "ListTasks")) => {
                    let method = method(op);
                    grpc.unary(Unary { agent, method }, req).await
                }
                _ => Status::unimplemented(format!("the load agent does not serve {}", req.uri().path())).into_http(),
            })
        })
    }
}

struct Unary {
    agent: Arc<LoadAgent>,
    method: MethodDescriptor,
}

impl UnaryService<Bytes> for Unary {
    type Response = Bytes;
    type Future = Ready<Result<Response<Bytes>, Status>>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        let reply = params(&self.method, request).and_then(|params| match self.method.name() {
            "GetTask" => get_task(&self.agent, &params).ok_or_else(not_found),
            _ => list(&self.agent, &params).map_err(Status::invalid_argument),
        });
        ready(reply.map(|json| Response::new(encode(&self.method.output(), &json))))
    }
}

struct Subscribe(Arc<LoadAgent>);

type Events = Pin<Box<dyn Stream<Item = Result<Bytes, Status>> + Send>>;

impl ServerStreamingService<Bytes> for Subscribe {
    type Response = Bytes;
    type ResponseStream = Events;
    type Future = Ready<Result<Response<Events>, Status>>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        let index = params(&method("SubscribeToTask"), request).and_then(|params| {
            subscribable(&self.0, &params).map_err(|refused| match refused {
                Refusal::NotFound => not_found(),
                // UnsupportedOperation is FAILED_PRECONDITION (spec section 5.4).
                Refusal::Terminal => refusal(Code::FailedPrecondition, "UNSUPPORTED_OPERATION", TERMINAL),
            })
        });
        ready(index.map(|index| {
            let stream: Events = Box::pin(events(self.0.clone(), index, Wire::Grpc).map(Ok));
            Response::new(stream)
        }))
    }
}
