use std::sync::Arc;

use jiff::Timestamp;
use opentelemetry::Value;
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use serde_json::{Value as Json, json};

use super::*;
use crate::event::Event as StoreEvent;

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn update(agent: AgentId, frame: Json, at: i64) -> StoreEvent {
    StoreEvent::Update {
        agent,
        event: serde_json::from_value(frame).unwrap(),
        seen: ts(at),
    }
}

fn status(id: &str, state: &str, text: &str, at: i64) -> StoreEvent {
    let status = json!({"state": state, "timestamp": ts(at).to_string(),
        "message": {"messageId": format!("m{at}"), "role": "ROLE_AGENT", "parts": [{"text": text}]}});
    update(
        0,
        json!({"statusUpdate": {"taskId": id, "contextId": "ctx", "status": status}}),
        at,
    )
}

fn watched(include_text: bool) -> (Store, Traces, Arc<Queue>) {
    let mut store = Store::new([(
        Some("runner".to_string()),
        "http://user:pw@127.0.0.1:9001/a2a?key=secret",
    )]);
    let queue = Arc::new(Queue::default());
    let traces = Traces::observe(&mut store, include_text, queue.clone());
    (store, traces, queue)
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| &kv.value)
}

fn sent(queue: &Queue) -> Vec<SpanData> {
    queue.take_batch()
}

#[test]
fn a_task_is_one_client_span_from_first_status_to_terminal_with_an_event_per_state() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(status("t1", "TASK_STATE_WORKING", "thinking", 0));
    store.apply(status("t1", "TASK_STATE_INPUT_REQUIRED", "Budget?", 5));
    assert!(sent(&queue).is_empty(), "no span before the task ends");
    store.apply(status("t1", "TASK_STATE_COMPLETED", "done", 9));
    let spans = sent(&queue);
    assert_eq!(spans.len(), 1);
    let span = &spans[0];
    assert_eq!(span.name, "a2a.task runner");
    assert_eq!(span.span_kind, SpanKind::Client);
    assert_eq!(span.start_time, SystemTime::try_from(ts(0)).unwrap());
    assert_eq!(span.end_time, SystemTime::try_from(ts(9)).unwrap());
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert_eq!(span.status, Status::Unset);
    let attr = |key| attribute(&span.attributes, key).map(Value::to_string);
    assert_eq!(attr(keys::TASK_ID).as_deref(), Some("t1"));
    assert_eq!(attr(keys::TASK_STATE).as_deref(), Some("TASK_STATE_COMPLETED"));
    assert_eq!(attr(keys::CONVERSATION_ID).as_deref(), Some("ctx"));
    assert_eq!(attr(keys::WATCH_AGENT).as_deref(), Some("runner"));
    assert_eq!(attr(keys::SERVER_ADDRESS).as_deref(), Some("127.0.0.1"));
    assert_eq!(attr(keys::SERVER_PORT).as_deref(), Some("9001"));
    assert_eq!(attr(keys::UNFINISHED), None);
    let states: Vec<String> = span
        .events
        .iter()
        .map(|e| attribute(&e.attributes, keys::TASK_STATE).unwrap().to_string())
        .collect();
    assert_eq!(
        states,
        [
            "TASK_STATE_WORKING",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_COMPLETED"
        ]
    );
    assert!(
        span.events
            .iter()
            .all(|e| attribute(&e.attributes, keys::STATUS_TEXT).is_none())
    );
    assert_eq!(
        span.span_context.trace_id(),
        ids::context_trace("http://127.0.0.1:9001", "ctx")
    );
    // Neither the URL's credential nor its query reach a span.
    let everything = format!("{span:?}");
    assert!(
        !everything.contains("secret") && !everything.contains("pw@"),
        "{everything}"
    );
}

#[test]
fn a_failure_is_an_error_with_the_cut_sanitised_text_and_text_events_only_when_asked() {
    let (mut store, _traces, queue) = watched(true);
    store.apply(status("t1", "TASK_STATE_WORKING", "on it", 0));
    let long = format!("\u{1b}[31mdisk full{}", "!".repeat(1000));
    store.apply(status("t1", "TASK_STATE_FAILED", &long, 3));
    let span = sent(&queue).remove(0);
    let Status::Error { description } = &span.status else {
        panic!("{:?}", span.status);
    };
    assert!(description.starts_with("disk full!"), "{description}");
    assert_eq!(description.len(), TEXT_BYTES);
    let first = &span.events[0];
    assert_eq!(
        attribute(&first.attributes, keys::STATUS_TEXT)
            .map(Value::to_string)
            .as_deref(),
        Some("on it")
    );
}

#[test]
fn a_task_first_seen_terminal_gets_one_span_a_run() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(status("t1", "TASK_STATE_REJECTED", "no", 4));
    store.apply(status("t1", "TASK_STATE_REJECTED", "no, really", 6));
    let spans = sent(&queue);
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0].start_time, spans[0].end_time);
}

#[test]
fn artifacts_are_events_with_name_and_size_never_content() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(status("t1", "TASK_STATE_WORKING", "", 0));
    let artifact = json!({"artifactId": "a1", "name": "report", "parts": [{"text": "secret findings"}]});
    store.apply(update(
        0,
        json!({"artifactUpdate": {"taskId": "t1", "contextId": "ctx", "artifact": artifact}}),
        1,
    ));
    store.apply(status("t1", "TASK_STATE_COMPLETED", "", 2));
    let span = sent(&queue).remove(0);
    let artifact = span.events.iter().find(|e| e.name == keys::ARTIFACT_EVENT).unwrap();
    assert_eq!(
        attribute(&artifact.attributes, keys::ARTIFACT_NAME)
            .map(Value::to_string)
            .as_deref(),
        Some("report")
    );
    assert_eq!(
        attribute(&artifact.attributes, keys::ARTIFACT_SIZE),
        Some(&Value::I64(15))
    );
    assert!(!format!("{span:?}").contains("secret findings"));
}

#[test]
fn a_task_referencing_another_is_its_child_in_its_trace() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(status("planner", "TASK_STATE_WORKING", "", 0));
    let child = json!({"task": {"id": "worker", "contextId": "other", "status": {"state": "TASK_STATE_WORKING", "timestamp": ts(1).to_string()},
        "history": [{"messageId": "u1", "role": "ROLE_USER", "parts": [{"text": "go"}], "referenceTaskIds": ["planner"]}]}});
    store.apply(update(0, child, 1));
    store.apply(status("planner", "TASK_STATE_COMPLETED", "", 3));
    let planner = sent(&queue).remove(0);
    let done = json!({"statusUpdate": {"taskId": "worker", "contextId": "other", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": ts(4).to_string()}}});
    store.apply(update(0, done, 4));
    let worker = sent(&queue).remove(0);
    assert_eq!(worker.span_context.trace_id(), planner.span_context.trace_id());
    assert_eq!(worker.parent_span_id, planner.span_context.span_id());
}

#[test]
fn tasks_still_going_at_shutdown_are_sent_unfinished_with_their_last_state() {
    let (mut store, traces, queue) = watched(false);
    store.apply(status("t1", "TASK_STATE_AUTH_REQUIRED", "approve?", 0));
    traces.finish_unfinished();
    let span = sent(&queue).remove(0);
    assert_eq!(attribute(&span.attributes, keys::UNFINISHED), Some(&Value::Bool(true)));
    assert_eq!(
        attribute(&span.attributes, keys::TASK_STATE)
            .map(Value::to_string)
            .as_deref(),
        Some("TASK_STATE_AUTH_REQUIRED")
    );
}

#[test]
fn a_full_queue_drops_the_oldest_and_counts_it() {
    let (mut store, _traces, queue) = watched(false);
    for i in 0..QUEUE_CAPACITY + 2 {
        store.apply(status(&format!("t{i}"), "TASK_STATE_COMPLETED", "", 0));
    }
    assert_eq!(queue.dropped(), 2);
    let first = sent(&queue).remove(0);
    assert_eq!(
        attribute(&first.attributes, keys::TASK_ID)
            .map(Value::to_string)
            .as_deref(),
        Some("t2")
    );
}
