//! The A2A protocol: data model, tolerant decoding of 1.0 and 0.3, and a client for the JSON-RPC,
//! HTTP+JSON and gRPC bindings. Knows nothing of the dashboard.

pub mod auth;
pub mod card;
pub mod client;
pub mod discovery;
pub mod error;
pub mod grpc;
pub mod interactions;
mod lenient;
pub mod shown;
pub mod signature;
pub mod sse;
pub mod state;
pub mod types;
mod v03;
pub mod wire;

pub use card::{AgentCard, Binding, ProtocolVersion};
pub use client::{Client, ClientOptions, EventStream};
pub use error::{Error, ErrorKind, Result};
pub use lenient::parse_timestamp;
pub use state::{StateClass, TaskState};
pub use types::*;

/// The interactions/v1 extension (docs/protocol-notes.md, "interactions/v1").
pub const INTERACTIONS_EXTENSION: &str = "https://docs.nylorun.com/a2a/interactions/v1";
