//! Trace and span ids derived from what every a2a-watch sees the same way (issue 22, "OpenTelemetry
//! traces"): a context's trace id from the agent's URL origin and the contextId, a task's span id
//! from the origin and the task id. So a restart, or several a2a-watch instances on one agent, put
//! one context in one trace and name a task's span alike.

use aws_lc_rs::digest::{SHA256, digest};
use opentelemetry::trace::{SpanId, TraceId};

/// The first bytes of SHA-256 over the parts, each ended by a NUL so that ("ab", "c") and
/// ("a", "bc") differ.
fn hashed<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut input = Vec::new();
    for part in parts {
        input.extend_from_slice(part.as_bytes());
        input.push(0);
    }
    let sum = digest(&SHA256, &input);
    let mut out = [0u8; N];
    out.copy_from_slice(&sum.as_ref()[..N]);
    out
}

/// The trace of one context of one agent. All-zero ids are invalid (W3C Trace Context §3.2.2.3),
/// which a hash gives with negligible chance; it is then one bit off.
pub fn context_trace(origin: &str, context_id: &str) -> TraceId {
    let mut bytes: [u8; 16] = hashed(&["context", origin, context_id]);
    if bytes == [0; 16] {
        bytes[15] = 1;
    }
    TraceId::from_bytes(bytes)
}

/// The span of one task of one agent.
pub fn task_span(origin: &str, task_id: &str) -> SpanId {
    let mut bytes: [u8; 8] = hashed(&["task", origin, task_id]);
    if bytes == [0; 8] {
        bytes[7] = 1;
    }
    SpanId::from_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_origin_and_id_only() {
        let a = context_trace("http://127.0.0.1:9001", "ctx-1");
        assert_eq!(a, context_trace("http://127.0.0.1:9001", "ctx-1"));
        assert_ne!(a, context_trace("http://127.0.0.1:9002", "ctx-1"));
        assert_ne!(a, context_trace("http://127.0.0.1:9001", "ctx-2"));
        assert_ne!(task_span("ab", "c"), task_span("a", "bc"));
    }
}
