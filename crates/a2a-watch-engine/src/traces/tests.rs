use std::sync::Arc;

use jiff::Timestamp;
use opentelemetry::Value;
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use serde_json::{Value as Json, json};

use super::*;
use crate::event::{ActionId, ActionOutcome, Call, Event as StoreEvent, Method, TraceParent};

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

fn call(method: Method, task: Option<&str>, sent: i64, ended: i64, error_type: Option<&str>) -> Call {
    Call {
        method,
        task: task.map(str::to_string),
        context: None,
        sent: ts(sent),
        ended: ts(ended),
        error_type: error_type.map(str::to_string),
    }
}

fn acted(store: &mut Store, action: ActionId, call: Call, outcome: ActionOutcome) {
    store.apply(StoreEvent::Action {
        agent: 0,
        action,
        outcome,
        call: Some(Box::new(call)),
    });
}

fn done(task: &str) -> ActionOutcome {
    ActionOutcome::Done {
        task: Some(task.into()),
    }
}

fn error_type(span: &SpanData) -> Option<String> {
    attribute(&span.attributes, keys::ERROR_TYPE).map(Value::to_string)
}

fn spans_named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[test]
fn a_cancel_is_a_client_span_named_by_method_and_the_child_of_its_task() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(status("t1", "TASK_STATE_WORKING", "", 0));
    acted(
        &mut store,
        1,
        call(Method::CancelTask, Some("t1"), 4, 5, None),
        done("t1"),
    );
    let cancel = sent(&queue).remove(0);
    store.apply(status("t1", "TASK_STATE_CANCELED", "", 5));
    let task = sent(&queue).remove(0);
    assert_eq!(cancel.name, "CancelTask");
    assert_eq!(cancel.span_kind, SpanKind::Client);
    assert_eq!(cancel.span_context.trace_id(), task.span_context.trace_id());
    assert_eq!(cancel.parent_span_id, task.span_context.span_id());
    assert_ne!(cancel.span_context.span_id(), task.span_context.span_id());
    assert_eq!(cancel.start_time, SystemTime::try_from(ts(4)).unwrap());
    assert_eq!(cancel.end_time, SystemTime::try_from(ts(5)).unwrap());
    assert_eq!(cancel.status, Status::Unset);
    let attr = |key| attribute(&cancel.attributes, key).map(Value::to_string);
    assert_eq!(attr(keys::TASK_ID).as_deref(), Some("t1"));
    assert_eq!(attr(keys::RPC_METHOD).as_deref(), Some("CancelTask"));
    assert_eq!(attr(keys::CONVERSATION_ID).as_deref(), Some("ctx"));
    assert_eq!(attr(keys::WATCH_AGENT).as_deref(), Some("runner"));
    assert_eq!(error_type(&cancel), None);
}

#[test]
fn a_call_on_a_task_whose_span_was_sent_is_still_its_child() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(status("t1", "TASK_STATE_COMPLETED", "", 0));
    let task = sent(&queue).remove(0);
    let refused = ActionOutcome::Failed {
        message: "the agent refused: TaskNotCancelableError (-32002): it is over".into(),
    };
    let failing = call(Method::CancelTask, Some("t1"), 3, 4, Some("TaskNotCancelableError"));
    acted(&mut store, 2, failing, refused);
    let cancel = sent(&queue).remove(0);
    assert_eq!(cancel.parent_span_id, task.span_context.span_id());
    assert_eq!(cancel.span_context.trace_id(), task.span_context.trace_id());
    assert_eq!(error_type(&cancel).as_deref(), Some("TaskNotCancelableError"));
    // The outcome's words may quote the agent: not sent unless asked for.
    assert_eq!(cancel.status, Status::error(""));
    assert!(!format!("{cancel:?}").contains("it is over"));
}

#[test]
fn a_failed_answer_says_why_in_words_only_when_text_is_asked_for() {
    let (mut store, _traces, queue) = watched(true);
    store.apply(status("t1", "TASK_STATE_INPUT_REQUIRED", "Budget?", 0));
    let refused = ActionOutcome::Failed {
        message: "HTTP 500 from SendMessage: \u{1b}[31mboom".into(),
    };
    acted(
        &mut store,
        3,
        call(Method::SendMessage, Some("t1"), 1, 2, Some("500")),
        refused,
    );
    let answer = sent(&queue).remove(0);
    assert_eq!(answer.name, "SendMessage");
    assert_eq!(answer.status, Status::error("HTTP 500 from SendMessage: boom"));
    assert_eq!(error_type(&answer).as_deref(), Some("500"));
}

#[test]
fn a_new_task_sent_is_the_child_of_the_task_it_created() {
    let (mut store, _traces, queue) = watched(false);
    let mut sending = call(Method::SendStreamingMessage, None, 0, 1, None);
    // The engine names the task its outcome reports (watch/agent.rs), the task's first event
    // applied before.
    sending.task = Some("new".into());
    store.apply(status("new", "TASK_STATE_SUBMITTED", "", 1));
    acted(&mut store, 4, sending, done("new"));
    let send = sent(&queue).remove(0);
    store.apply(status("new", "TASK_STATE_COMPLETED", "", 2));
    let task = sent(&queue).remove(0);
    assert_eq!(send.name, "SendStreamingMessage");
    assert_eq!(send.parent_span_id, task.span_context.span_id());
    assert_eq!(send.span_context.trace_id(), task.span_context.trace_id());
}

#[test]
fn a_send_that_made_no_task_is_a_root_span_in_its_context_or_its_own_trace() {
    let (mut store, _traces, queue) = watched(false);
    let failed = || ActionOutcome::Failed {
        message: "no reply".into(),
    };
    let mut in_context = call(Method::SendMessage, None, 0, 1, Some("timeout"));
    in_context.context = Some("ctx".into());
    acted(&mut store, 5, in_context, failed());
    acted(
        &mut store,
        6,
        call(Method::SendMessage, None, 0, 1, Some("timeout")),
        failed(),
    );
    let spans = sent(&queue);
    let sends = spans_named(&spans, "SendMessage");
    assert_eq!(sends.len(), 2);
    assert!(sends.iter().all(|s| s.parent_span_id == SpanId::INVALID));
    assert_eq!(
        sends[0].span_context.trace_id(),
        ids::context_trace("http://127.0.0.1:9001", "ctx")
    );
    assert_ne!(sends[1].span_context.trace_id(), sends[0].span_context.trace_id());
    assert!(sends[1].span_context.is_valid());
    assert_eq!(attribute(&sends[1].attributes, keys::TASK_ID), None);
}

#[test]
fn an_action_refused_before_sending_is_no_span() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(StoreEvent::Action {
        agent: 0,
        action: 7,
        outcome: ActionOutcome::Failed {
            message: "not connected yet".into(),
        },
        call: None,
    });
    assert!(sent(&queue).is_empty());
}

fn tapped(id: &str, trace: Option<TraceParent>, at: i64) -> StoreEvent {
    StoreEvent::Tapped {
        agent: 0,
        task: id.into(),
        seen: ts(at),
        trace,
    }
}

#[test]
fn a_task_a_planner_created_with_a_traceparent_joins_its_trace_under_its_span() {
    let (mut store, _traces, queue) = watched(false);
    let planner = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
    store.apply(tapped("t1", Some(planner), 0));
    store.apply(status("t1", "TASK_STATE_WORKING", "", 0));
    // A later send naming the task, in another trace, moves nothing.
    let other = TraceParent::parse("00-11111111111111111111111111111111-2222222222222222-01").unwrap();
    store.apply(tapped("t1", Some(other), 1));
    acted(
        &mut store,
        1,
        call(Method::CancelTask, Some("t1"), 2, 3, None),
        done("t1"),
    );
    store.apply(status("t1", "TASK_STATE_CANCELED", "", 3));
    let spans = sent(&queue);
    let task = spans_named(&spans, "a2a.task runner")[0];
    assert_eq!(task.span_context.trace_id(), TraceId::from_bytes(planner.trace_id));
    assert_eq!(task.parent_span_id, SpanId::from_bytes(planner.parent_id));
    assert!(task.parent_span_is_remote);
    let cancel = spans_named(&spans, "CancelTask")[0];
    assert_eq!(cancel.span_context.trace_id(), TraceId::from_bytes(planner.trace_id));
    assert_eq!(cancel.parent_span_id, task.span_context.span_id());
    assert!(!cancel.parent_span_is_remote);
}

#[test]
fn a_task_tapped_without_a_traceparent_stays_in_its_context_trace() {
    let (mut store, _traces, queue) = watched(false);
    store.apply(tapped("t1", None, 0));
    store.apply(status("t1", "TASK_STATE_COMPLETED", "", 0));
    let span = sent(&queue).remove(0);
    assert_eq!(
        span.span_context.trace_id(),
        ids::context_trace("http://127.0.0.1:9001", "ctx")
    );
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert!(!span.parent_span_is_remote);
}
