//! The load agent's gRPC face (`serve-load --grpc`): `lf.a2a.v1.A2AService` (spec section 10) on
//! a port of its own beside the JSON-RPC one, serving SubscribeToTask, GetTask and ListTasks from
//! the very same script and state. A request is read into the proto JSON the JSON-RPC handlers
//! take as params; a reply is the proto JSON they write, put in protobuf with prost-reflect from
//! the client's own descriptor set: once a message, as the JSON-RPC side formats once an event.

use std::convert::Infallible;
use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use axum::body::Bytes;
use futures::{Stream, StreamExt};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use serde_json::{Value, json};
use tonic::body::Body;
use tonic::server::{Grpc, ServerStreamingService, UnaryService};
use tonic::{Code, Request, Response, Status};

use a2a_watch::a2a::grpc::{DESCRIPTOR_SET, RawCodec};

use super::{LoadAgent, NOT_FOUND, Refusal, TERMINAL, Wire, events, get_task, list, subscribable};

const SERVICE: &str = "lf.a2a.v1.A2AService";

static POOL: LazyLock<DescriptorPool> =
    LazyLock::new(|| DescriptorPool::decode(DESCRIPTOR_SET).expect("proto/a2a.desc is a descriptor set"));

static STREAM_RESPONSE: LazyLock<MessageDescriptor> = LazyLock::new(|| message("lf.a2a.v1.StreamResponse"));

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
                Refusal::Terminal => refusal(Code::Unimplemented, "UNSUPPORTED_OPERATION", TERMINAL),
            })
        });
        ready(index.map(|index| {
            let stream: Events = Box::pin(events(self.0.clone(), index, Wire::Grpc).map(Ok));
            Response::new(stream)
        }))
    }
}
