//! Server-sent events for both bindings: one `data:` frame per StreamResponse, `event: error` for
//! an error inside a stream, a `: keep-alive` comment every 15 s (as sse-starlette pings).
//! The binding decides what wraps each frame (spec §9.4.2 envelope, §11.7 bare object).

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::Value;

use super::error::{ApiError, to_json};
use super::service::EventStream;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub trait Framing: Send + 'static {
    /// Wraps one encoded StreamResponse.
    fn result(&self, event: Value) -> Value;
    /// The body of an `event: error` frame.
    fn error(&self, error: &ApiError) -> Value;
}

pub fn respond(events: EventStream, framing: impl Framing) -> Response {
    let frames = events.map(move |event| {
        let frame = match to_json(&event) {
            Ok(value) => Event::default().data(framing.result(value).to_string()),
            Err(error) => Event::default().event("error").data(framing.error(&error).to_string()),
        };
        Ok::<_, Infallible>(frame)
    });
    Sse::new(frames)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response()
}
