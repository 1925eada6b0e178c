//! OpenTelemetry traces (issue 22, "Proof"): the real binary, `--json --otlp http://127.0.0.1:PORT`,
//! watching the demo agents while a test client fails a test run, asks a question that is answered
//! and leaves another waiting. A tiny OTLP/HTTP receiver here decodes what it gets with the
//! official protobuf definitions (`opentelemetry-proto`) and the spans are checked: ids, final
//! states, events, ERROR for the failure, the waiting task sent unfinished on SIGTERM, and nothing
//! that was not asked for (no message text, no credential, no URL query). Through a tap, a
//! planner's send with a W3C `traceparent` makes a task in the planner's trace, every header
//! passed on as it came. In the dashboard (tmux), a cancel and an answer are `a2a.client` spans
//! under their tasks' spans, and a refused cancel is an ERROR with the A2A error's name.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_watch::a2a::{Binding, Client, SendMessageConfiguration, StreamResponse, Task, TaskState};
use a2a_watch::demo::DemoAgents;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message as _;

use crate::cli::stderr;
use crate::demo_client::{TOKEN, start_demo};
use crate::metrics::{start_watching, start_watching_with, until};
use crate::scenarios::{connect, message, reply, stream_all};
use crate::tui::{self, Scratch, quit_and_check_the_terminal, send_answer, sh_quote, start};

const WAIT: Duration = Duration::from_secs(30);

/// What the receiver got: each request's body as sent, and decoded; the requests it answered 503.
#[derive(Default)]
struct Received {
    bodies: Vec<Bytes>,
    requests: Vec<ExportTraceServiceRequest>,
    /// The headers (HTTP) or metadata (gRPC) of each request taken.
    headers: Vec<HeaderMap>,
    /// Requests still to answer 503, as a collector that is down does.
    refuse: usize,
    refused: Vec<ExportTraceServiceRequest>,
}

type Shared = Arc<Mutex<Received>>;

async fn export(State(received): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let request = ExportTraceServiceRequest::decode(body.clone()).expect("an OTLP protobuf request");
    let mut received = received.lock().unwrap();
    if received.refuse > 0 {
        received.refuse -= 1;
        received.refused.push(request);
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    received.bodies.push(body);
    received.requests.push(request);
    received.headers.push(headers);
    let response = ExportTraceServiceResponse::default().encode_to_vec();
    ([(header::CONTENT_TYPE, "application/x-protobuf")], response).into_response()
}

/// A collector's OTLP/HTTP traces endpoint on loopback that answers its first `refuse` requests
/// 503: its base URL, and what it receives.
async fn receiver(refuse: usize) -> (String, Shared) {
    let received = Shared::new(Mutex::new(Received {
        refuse,
        ..Received::default()
    }));
    let app = axum::Router::new()
        .route("/v1/traces", post(export))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{at}"), received)
}

/// Every span received so far.
fn spans(received: &Shared) -> Vec<Span> {
    spans_in(&received.lock().unwrap().requests)
}

fn spans_in(requests: &[ExportTraceServiceRequest]) -> Vec<Span> {
    (requests.iter())
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.clone())
        .collect()
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)?
        .value
        .as_ref()?
        .value
        .as_ref()
}

fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    match attribute(attributes, key)? {
        Value::StringValue(s) => Some(s.clone()),
        other => panic!("{key} is {other:?}"),
    }
}

/// The first span received that is `what` (a span's name, or how it starts) about task `id`.
async fn span_about(received: &Shared, what: &str, id: &str) -> Span {
    let start = Instant::now();
    loop {
        let found = spans(received)
            .into_iter()
            .find(|s| s.name.starts_with(what) && text(&s.attributes, "a2a.task.id").as_deref() == Some(id));
        if let Some(span) = found {
            return span;
        }
        assert!(
            start.elapsed() < WAIT,
            "no {what} span of {id} in time: {:?}",
            spans(received)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The span of task `id`, once received.
async fn span_of(received: &Shared, id: &str) -> Span {
    span_about(received, "a2a.task ", id).await
}

fn states(span: &Span) -> Vec<String> {
    (span.events.iter())
        .filter(|e| e.name == "a2a.task.status")
        .filter_map(|e| text(&e.attributes, "a2a.task.state"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_become_spans_at_a_collector_decoded_with_the_official_protobuf() {
    let (endpoint, received) = receiver(0).await;
    let demo = start_demo().await;
    let names = ["test-runner", "code-reviewer"];
    let agents: Vec<String> = names
        .iter()
        .map(|n| format!("{n}={}?key=query-s3cret", demo.url(n)))
        .collect();
    let (child, metrics) = start_watching("--json", &agents, &["--otlp", &endpoint]).await;
    for name in names {
        until(&metrics, &[(&format!("a2a_watch_agent_up{{agent=\"{name}\"}}"), 1.0)]).await;
    }

    let runner = connect(demo.url("test-runner"), Binding::JsonRpc, None).await;
    let failed = stream_all(&runner, &message("run the tests, they will fail")).await;
    assert_eq!(failed.last_state(), Some(&TaskState::Failed));
    let span = span_of(&received, &failed.task).await;
    assert_eq!(span.name, "a2a.task test-runner");
    assert_eq!(span.kind, SpanKind::Client as i32);
    assert!(span.parent_span_id.is_empty(), "a root span");
    assert_eq!(
        text(&span.attributes, "a2a.task.state").as_deref(),
        Some("TASK_STATE_FAILED")
    );
    assert_eq!(
        text(&span.attributes, "gen_ai.conversation.id"),
        Some(failed.context.clone())
    );
    assert_eq!(
        text(&span.attributes, "a2a_watch.agent").as_deref(),
        Some("test-runner")
    );
    assert_eq!(text(&span.attributes, "a2a.protocol.version").as_deref(), Some("1.0"));
    assert_eq!(text(&span.attributes, "server.address").as_deref(), Some("127.0.0.1"));
    assert!(matches!(attribute(&span.attributes, "server.port"), Some(Value::IntValue(p)) if *p > 0));
    assert!(text(&span.attributes, "gen_ai.agent.name").is_some_and(|n| !n.is_empty()));
    let status = span.status.clone().expect("a status");
    assert_eq!(status.code, SpanStatus::Error as i32);
    assert!(!status.message.is_empty(), "the failure's text as description");
    assert_eq!(states(&span).last().map(String::as_str), Some("TASK_STATE_FAILED"));
    assert!(span.start_time_unix_nano <= span.end_time_unix_nano);

    let reviewer = connect(demo.url("code-reviewer"), Binding::JsonRpc, None).await;
    let question = stream_all(&reviewer, &message("review this diff")).await;
    assert_eq!(question.last_state(), Some(&TaskState::InputRequired));
    let waiting = r#"a2a_watch_tasks{agent="code-reviewer",state="input_required"}"#;
    until(&metrics, &[(waiting, 1.0)]).await;
    stream_all(&reviewer, &reply(&question.task, &question.context, "main")).await;
    let answered = span_of(&received, &question.task).await;
    let seen = states(&answered);
    assert!(seen.contains(&"TASK_STATE_INPUT_REQUIRED".to_string()), "{seen:?}");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("TASK_STATE_COMPLETED"),
        "{seen:?}"
    );
    assert_eq!(answered.status.as_ref().map_or(0, |s| s.code), SpanStatus::Unset as i32);
    assert_ne!(answered.trace_id, span.trace_id, "another context, another trace");

    let left = stream_all(&reviewer, &message("review this other diff")).await;
    assert_eq!(left.last_state(), Some(&TaskState::InputRequired));
    until(&metrics, &[(waiting, 1.0)]).await;
    stop(child).await;
    let unfinished = span_of(&received, &left.task).await;
    assert_eq!(
        attribute(&unfinished.attributes, "a2a_watch.unfinished"),
        Some(&Value::BoolValue(true))
    );
    assert_eq!(
        text(&unfinished.attributes, "a2a.task.state").as_deref(),
        Some("TASK_STATE_INPUT_REQUIRED")
    );

    let received = received.lock().unwrap();
    for request in &received.requests {
        for resource in &request.resource_spans {
            let attributes = &resource.resource.as_ref().expect("a resource").attributes;
            assert_eq!(text(attributes, "service.name").as_deref(), Some("a2a-watch"));
        }
    }
    // Nothing that was not asked for: no message text, no credential, no URL query.
    for body in &received.bodies {
        let raw = String::from_utf8_lossy(body);
        for secret in [
            "run the tests",
            "review this",
            "query-s3cret",
            TOKEN,
            "a2a.task.status.text",
        ] {
            assert!(!raw.contains(secret), "{secret:?} was exported");
        }
    }
    assert_eq!(spans_per_task(&received.requests, &failed.task), 1, "one span a task");
}

fn spans_per_task(requests: &[ExportTraceServiceRequest], id: &str) -> usize {
    (spans_in(requests).iter())
        .filter(|s| text(&s.attributes, "a2a.task.id").as_deref() == Some(id))
        .count()
}

const PLANNER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PLANNER_SPAN: &str = "b7ad6b7169203331";
const PLANNER_TOKEN: &str = "planner-otlp-s3cret";
const PLANNED: &str = "t-planned-1";

/// What the agent got from the planner: each request's headers as they came, by (name, bytes).
type Heard = Arc<Mutex<Vec<Vec<(String, Vec<u8>)>>>>;

/// An agent written for these tests (JSON-RPC 1.0, no streaming, named `name`): each call is
/// answered with what `answer` gives for its method (the reply's `result` or `error` member), and
/// the headers of every request that carries `x-planner` are kept.
async fn rpc_agent(name: &str, answer: fn(&str) -> serde_json::Value) -> (String, Heard) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = serde_json::json!({
        "name": name, "description": "written for a test", "version": "1",
        "supportedInterfaces": [{"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    let heard = Heard::default();
    let kept = heard.clone();
    let rpc = move |headers: axum::http::HeaderMap, body: Bytes| {
        let kept = kept.clone();
        async move {
            if headers.contains_key("x-planner") {
                let all = headers.iter().map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()));
                kept.lock().unwrap().push(all.collect());
            }
            let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let mut reply = answer(request["method"].as_str().unwrap_or(""));
            reply["jsonrpc"] = "2.0".into();
            reply["id"] = request["id"].clone();
            axum::Json(reply)
        }
    };
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || async move { axum::Json(card) }),
        )
        .route("/", post(rpc));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, heard)
}

/// A send makes a finished task; a listing shows nothing, so only the tap tells a2a-watch of it.
fn planned(method: &str) -> serde_json::Value {
    let task = serde_json::json!({"id": PLANNED, "contextId": "c-planned",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-03T07:00:00Z"}});
    let result = match method {
        "SendMessage" => serde_json::json!({"task": task}),
        "GetTask" => task,
        _ => serde_json::json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}),
    };
    serde_json::json!({ "result": result })
}

/// The planner's SendMessage.
fn planner_body() -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": {
        "messageId": "m-planner", "role": "ROLE_USER", "parts": [{"text": "plan the launch party"}]}}})
    .to_string()
}

/// The planner's send, written by hand so that every header byte is known: `(name, value)` in
/// the order sent, then its length; the tap answers and closes.
async fn planner_sends(tap: &str, headers: &[(&str, &str)]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = planner_body();
    let mut request = format!("POST / HTTP/1.1\r\nhost: {tap}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ));
    let mut stream = tokio::net::TcpStream::connect(tap).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut response))
        .await
        .expect("the tap answers")
        .unwrap();
    response
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Issue 22: a planner's send through the tap carrying W3C `traceparent` makes a task whose span
/// is in the planner's trace, the child of the planner's span; the tap passes every header on as
/// it came (traceparent and tracestate included) and adds none; nothing of the planner's
/// (credential, message text) is exported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_the_planner_created_through_the_tap_joins_the_planners_trace() {
    let (endpoint, received) = receiver(0).await;
    let (agent, heard) = rpc_agent("recorder", planned).await;
    let tap = format!("recorder=127.0.0.1:0={agent}");
    let dashboard = crate::tap::Dashboard::start(&["--tap", &tap, "--otlp", &endpoint]).await;
    let at = dashboard.taps[0].trim_start_matches("http://").to_string();
    let traceparent = format!("00-{PLANNER_TRACE}-{PLANNER_SPAN}-01");
    let authorization = format!("Bearer {PLANNER_TOKEN}");
    let sent = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
        ("authorization", authorization.as_str()),
        ("a2a-version", "1.0"),
        ("traceparent", traceparent.as_str()),
        ("tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
        ("x-planner", "one"),
        ("x-planner", "Two  words"),
    ];
    let response = planner_sends(&at, &sent).await;
    assert!(
        response.starts_with("HTTP/1.1 200") && response.contains(PLANNED),
        "{response}"
    );

    let span = span_of(&received, PLANNED).await;
    assert_eq!(hex(&span.trace_id), PLANNER_TRACE, "the planner's trace");
    assert_eq!(
        hex(&span.parent_span_id),
        PLANNER_SPAN,
        "the child of the planner's span"
    );
    let remote = opentelemetry_proto::tonic::trace::v1::SpanFlags::ContextIsRemoteMask as u32;
    assert_eq!(span.flags & remote, remote, "its parent is remote");
    assert_eq!(span.name, "a2a.task recorder");

    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.len(), 1, "one request of the planner's");
    let mut got: Vec<(String, Vec<u8>)> = heard[0].iter().filter(|(n, _)| n != "host").cloned().collect();
    let mut expected: Vec<(String, Vec<u8>)> = (sent.iter())
        .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
        .chain([(
            "content-length".to_string(),
            planner_body().len().to_string().into_bytes(),
        )])
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "every header as the planner sent it, none added");

    let bodies = received.lock().unwrap().bodies.clone();
    for body in &bodies {
        let raw = String::from_utf8_lossy(body);
        for secret in [PLANNER_TOKEN, "plan the launch party", "rojo="] {
            assert!(!raw.contains(secret), "{secret:?} was exported");
        }
    }
    assert!(!dashboard.everything().contains(PLANNER_TOKEN));
}

/// A task started with `text`, the agent answering at once and working on it after.
async fn started(client: &Client, text: &str) -> Task {
    let mut request = message(text);
    request.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    match client.send_message(&request).await.unwrap() {
        StreamResponse::Task(task) => task,
        other => panic!("not a task: {other:?}"),
    }
}

/// The person selects the one task on screen, once it is working, and cancels it (`x`, then
/// `y` to confirm).
fn cancel_the_working_task(tmux: &crate::tui::Tmux) {
    tmux.wait_for("the working task", false, |s| s.contains("WORKING"));
    tmux.send_keys("Up");
    tmux.send_keys("x");
    tmux.wait_for("the confirmation", false, |s| s.contains("Cancel task"));
    tmux.send_keys("y");
}

/// Issue 22: a2a-watch's own calls in the real dashboard (tmux, `--otlp`): the person cancels a
/// slow test run and answers the reviewer's question; each call is an `a2a.client` span named by
/// its A2A method, kind CLIENT, the child of its task's span in that span's trace, and neither
/// the answer's text nor the agent URL's query is exported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboards_cancel_and_answer_are_client_spans_under_their_tasks() {
    let (endpoint, received) = receiver(0).await;
    // Steps of a second: the slow run (ten times slower) is still going when the person cancels.
    let config = a2a_watch::demo::DemoConfig {
        base_port: 0,
        token: TOKEN.into(),
        step: Duration::from_secs(1),
    };
    let agents = a2a_watch::demo::start(config).await.expect("the demo agents start");
    let runner = connect(agents.url("test-runner"), Binding::JsonRpc, None).await;
    let slow = started(&runner, "run the slow tests").await;
    let scratch = Scratch::new("otlp-calls");
    let args = format!(
        "--agent {} --agent {} --otlp {}",
        sh_quote(&format!("{}?key=query-s3cret", agents.url("test-runner"))),
        sh_quote(agents.url("code-reviewer")),
        sh_quote(&endpoint)
    );
    let tmux = start(&args, &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    cancel_the_working_task(&tmux);
    let cancel = span_about(&received, "CancelTask", &slow.id).await;
    let canceled = span_of(&received, &slow.id).await;
    assert_eq!(
        text(&canceled.attributes, "a2a.task.state").as_deref(),
        Some("TASK_STATE_CANCELED")
    );
    assert_eq!(cancel.kind, SpanKind::Client as i32);
    assert_eq!(cancel.trace_id, canceled.trace_id, "in its task's trace");
    assert_eq!(cancel.parent_span_id, canceled.span_id, "the child of its task's span");
    assert_eq!(text(&cancel.attributes, "rpc.method").as_deref(), Some("CancelTask"));
    assert_eq!(text(&cancel.attributes, "error.type"), None);
    assert!(cancel.start_time_unix_nano <= cancel.end_time_unix_nano);

    let reviewer = connect(agents.url("code-reviewer"), Binding::Rest, None).await;
    let review = started(&reviewer, "review this diff of payments-api").await;
    tmux.wait_for("the question's box", false, |s| {
        s.contains("code-reviewer asks") && s.contains("Which base branch")
    });
    tmux.send_keys("release/2026.10");
    send_answer(&tmux, "code-reviewer asks");
    let answer = span_about(&received, "Send", &review.id).await;
    let answered = span_of(&received, &review.id).await;
    assert!(
        ["SendMessage", "SendStreamingMessage"].contains(&answer.name.as_str()),
        "{}",
        answer.name
    );
    assert_eq!(answer.kind, SpanKind::Client as i32);
    assert_eq!(answer.trace_id, answered.trace_id);
    assert_eq!(answer.parent_span_id, answered.span_id);
    assert_eq!(answer.status.as_ref().map_or(0, |s| s.code), SpanStatus::Unset as i32);
    quit_and_check_the_terminal(&tmux, &before);
    drop(tmux);
    for body in &received.lock().unwrap().bodies {
        let raw = String::from_utf8_lossy(body);
        for secret in ["release/2026.10", "payments-api", "slow tests", "query-s3cret"] {
            assert!(!raw.contains(secret), "{secret:?} was exported");
        }
    }
    agents.shutdown().await;
}

const HELD: &str = "t-held-1";

/// One task working, listed and fetched; cancelling it is refused (TaskNotCancelableError, A2A
/// 1.0 section 5.4) with words that must not be exported.
fn holds_on(method: &str) -> serde_json::Value {
    let task = serde_json::json!({"id": HELD, "contextId": "c-held",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-03T07:00:00Z"}});
    match method {
        "CancelTask" => serde_json::json!({"error": {"code": -32002, "message": "past the point of no return"}}),
        "GetTask" => serde_json::json!({ "result": task }),
        _ => serde_json::json!({"result": {"tasks": [task], "nextPageToken": "", "pageSize": 1, "totalSize": 1}}),
    }
}

/// A refusal is never a success: the agent refuses the dashboard's cancel, and its span says
/// ERROR with `error.type` the A2A error's name; the agent's words stay out by default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_cancel_is_an_error_span_with_the_a2a_error_type() {
    let (endpoint, received) = receiver(0).await;
    let (agent, _) = rpc_agent("holder", holds_on).await;
    let scratch = Scratch::new("otlp-refused");
    let args = format!("--agent {} --otlp {}", sh_quote(&agent), sh_quote(&endpoint));
    let tmux = start(&args, &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    cancel_the_working_task(&tmux);
    let cancel = span_about(&received, "CancelTask", HELD).await;
    assert_eq!(
        text(&cancel.attributes, "error.type").as_deref(),
        Some("TaskNotCancelableError")
    );
    let status = cancel.status.clone().expect("a status");
    assert_eq!(status.code, SpanStatus::Error as i32);
    assert!(!status.message.contains("no return"), "{}", status.message);
    assert!(
        !cancel.parent_span_id.is_empty(),
        "the child of the held task's span, sent later"
    );
    quit_and_check_the_terminal(&tmux, &before);
    drop(tmux);
    let unfinished = span_of(&received, HELD).await;
    assert_eq!(unfinished.span_id, cancel.parent_span_id);
    assert_eq!(unfinished.trace_id, cancel.trace_id);
    for body in &received.lock().unwrap().bodies {
        assert!(!String::from_utf8_lossy(body).contains("no return"));
    }
}

/// The lines of the log at `path` that speak of the export.
fn otlp_lines(path: &std::path::Path) -> Vec<String> {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    log.lines().filter(|l| l.contains("OTLP")).map(str::to_string).collect()
}

/// Ends the child with SIGTERM; it exits 0 within the 2 s a service manager allows (issue 22).
async fn stop(child: tokio::process::Child) {
    // SAFETY: kill only sends a signal to the child we started.
    unsafe {
        libc::kill(child.id().expect("still running") as libc::pid_t, libc::SIGTERM);
    }
    let out = tokio::time::timeout(Duration::from_secs(3), child.wait_with_output())
        .await
        .expect("exits soon after SIGTERM")
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A failed test run on the demo's test runner; its task id.
async fn fail_a_run(demo: &DemoAgents) -> String {
    let runner = connect(demo.url("test-runner"), Binding::JsonRpc, None).await;
    let failed = stream_all(&runner, &message("run the tests, they will fail")).await;
    assert_eq!(failed.last_state(), Some(&TaskState::Failed));
    failed.task
}

/// `--json MORE` on the demo's test runner, named `name`, with `env`: the child, its metrics URL.
async fn watch_runner(
    demo: &DemoAgents,
    name: &str,
    more: &[&str],
    env: &[(&str, &str)],
) -> (tokio::process::Child, String) {
    let agents = [format!("{name}={}", demo.url("test-runner"))];
    let (child, metrics) = start_watching_with("--json", &agents, more, env).await;
    until(&metrics, &[(&format!("a2a_watch_agent_up{{agent=\"{name}\"}}"), 1.0)]).await;
    (child, metrics)
}

/// `--otlp ENDPOINT --log-file LOG`.
fn otlp_to(endpoint: &str, log: &std::path::Path) -> [String; 4] {
    ["--otlp", endpoint, "--log-file", log.to_str().unwrap()].map(String::from)
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_stays_down_gets_each_batch_three_times_and_three_log_lines_at_most() {
    let (endpoint, received) = receiver(usize::MAX).await;
    let demo = start_demo().await;
    let scratch = Scratch::new("otlp-down");
    let log = scratch.0.join("a2a-watch.log");
    let secret = [("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20otlp-s3cret")];
    let more = otlp_to(&endpoint, &log);
    let (child, metrics) = watch_runner(&demo, "test-runner", &strs(&more), &secret).await;
    let dropped = "a2a_watch_otlp_dropped_total";
    until(&metrics, &[(dropped, 0.0)]).await;

    let first = fail_a_run(&demo).await;
    until(&metrics, &[(dropped, 1.0)]).await;
    let second = fail_a_run(&demo).await;
    until(&metrics, &[(dropped, 2.0)]).await;
    stop(child).await;

    let received = received.lock().unwrap();
    assert!(received.requests.is_empty());
    let refused = &received.refused;
    for task in [&first, &second] {
        assert_eq!(spans_per_task(refused, task), 3, "tried three times, then dropped");
    }
    let lines = otlp_lines(&log);
    assert!(lines.len() <= 3, "{lines:#?}");
    assert!(lines[0].contains("does not take spans"), "{lines:#?}");
    assert!(lines[1].contains("spans dropped so far: 2"), "{lines:#?}");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        !log.contains("otlp-s3cret"),
        "the collector's credential is never logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_back_after_an_outage_gets_the_next_batch_on_a_retry_and_the_log_says_so() {
    // Three 503s for the first batch (dropped), two for the second (sent on its third try).
    let (endpoint, received) = receiver(5).await;
    let demo = start_demo().await;
    let scratch = Scratch::new("otlp-back");
    let log = scratch.0.join("a2a-watch.log");
    let more = otlp_to(&endpoint, &log);
    let (child, metrics) = watch_runner(&demo, "test-runner", &strs(&more), &[]).await;

    let lost = fail_a_run(&demo).await;
    until(&metrics, &[("a2a_watch_otlp_dropped_total", 1.0)]).await;
    let sent = fail_a_run(&demo).await;
    span_of(&received, &sent).await;
    stop(child).await;

    let received = received.lock().unwrap();
    assert_eq!(spans_per_task(&received.refused, &lost), 3);
    assert_eq!(spans_per_task(&received.refused, &sent), 2);
    assert_eq!(spans_per_task(&received.requests, &lost), 0);
    assert_eq!(spans_per_task(&received.requests, &sent), 1);
    let lines = otlp_lines(&log);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].contains("does not take spans"), "{lines:#?}");
    assert!(
        lines[1].contains("takes spans again (1 dropped meanwhile)"),
        "{lines:#?}"
    );
}

/// A collector's OTLP/gRPC endpoint on loopback (opentelemetry-proto's `TraceService` on tonic):
/// its URL, and what it receives.
async fn grpc_receiver() -> (String, Shared) {
    struct Collector(Shared);

    #[tonic::async_trait]
    impl TraceService for Collector {
        async fn export(
            &self,
            request: tonic::Request<ExportTraceServiceRequest>,
        ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
            let mut received = self.0.lock().unwrap();
            received.headers.push(request.metadata().clone().into_headers());
            received.requests.push(request.into_inner());
            Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
        }
    }

    let received = Shared::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .serve_with_incoming(TraceServiceServer::new(Collector(received.clone())), incoming),
    );
    (format!("http://{at}"), received)
}

/// Every request taken had header (or metadata) `name` set to `value`.
fn assert_header(received: &Shared, name: &str, value: &str) {
    let seen: Vec<String> = (received.lock().unwrap().headers.iter())
        .map(|h| h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("none").to_string())
        .collect();
    assert!(!seen.is_empty() && seen.iter().all(|v| v == value), "{name}: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_otel_exporter_otlp_protocol_grpc_spans_go_over_grpc_with_the_headers_as_metadata() {
    let (endpoint, received) = grpc_receiver().await;
    let demo = start_demo().await;
    let scratch = Scratch::new("otlp-grpc");
    let more = otlp_to(&endpoint, &scratch.0.join("a2a-watch.log"));
    let env = [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=a"),
    ];
    let (child, _) = watch_runner(&demo, "test-runner", &strs(&more), &env).await;
    let task = fail_a_run(&demo).await;
    let span = span_of(&received, &task).await;
    stop(child).await;
    assert_eq!(span.name, "a2a.task test-runner");
    assert_eq!(span.status.map(|s| s.code), Some(SpanStatus::Error as i32));
    assert_header(&received, "x-team", "a");
}

/// The collector as `--otlp`, the config's `otlp` and `OTEL_EXPORTER_OTLP_ENDPOINT` name it, three
/// runs at once, each naming the agent after where its endpoint came from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoint_is_the_flags_else_the_configs_else_the_environments_and_the_headers_arrive() {
    let demo = start_demo().await;
    let scratch = Scratch::new("otlp-priority");
    let (flag, at_flag) = receiver(0).await;
    let (configured, at_config) = receiver(0).await;
    let (env, at_env) = receiver(0).await;
    let config = scratch.0.join("config.toml");
    std::fs::write(&config, format!("otlp = \"{configured}\"\n")).unwrap();
    let config = config.to_str().unwrap();
    let environment = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", env.as_str()),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=a,authorization=Bearer%20t"),
        ("OTEL_SERVICE_NAME", "ci-watch"),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci"),
    ];
    let (flag_args, config_args) = (["--otlp", &flag, "--config", config], ["--config", config]);
    let ((by_flag, _), (by_config, _), (by_env, _)) = tokio::join!(
        watch_runner(&demo, "flag", &flag_args, &environment),
        watch_runner(&demo, "config", &config_args, &environment),
        watch_runner(&demo, "env", &[], &environment),
    );
    let task = fail_a_run(&demo).await;
    let (a, b, c) = tokio::join!(
        span_of(&at_flag, &task),
        span_of(&at_config, &task),
        span_of(&at_env, &task)
    );
    tokio::join!(stop(by_flag), stop(by_config), stop(by_env));
    assert_eq!(
        [a.name, b.name, c.name],
        ["a2a.task flag", "a2a.task config", "a2a.task env"]
    );

    for (received, from) in [(&at_flag, "flag"), (&at_config, "config"), (&at_env, "env")] {
        for span in spans(received) {
            assert_eq!(text(&span.attributes, "a2a_watch.agent").as_deref(), Some(from));
        }
        assert_header(received, "x-team", "a");
        assert_header(received, "authorization", "Bearer t");
        for request in &received.lock().unwrap().requests {
            for resource in &request.resource_spans {
                let attributes = &resource.resource.as_ref().expect("a resource").attributes;
                assert_eq!(text(attributes, "service.name").as_deref(), Some("ci-watch"));
                assert_eq!(text(attributes, "deployment.environment").as_deref(), Some("ci"));
            }
        }
    }
}

/// The dashboard in tmux: its title warns while the collector answers 503 and its footer counts
/// the span dropped; the warning goes once the collector takes a batch again, the count stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_warns_on_its_title_while_the_collector_fails_and_counts_the_drops() {
    let (endpoint, received) = receiver(usize::MAX).await;
    let demo = start_demo().await;
    let scratch = Scratch::new("otlp-tui");
    let args = format!(
        "--agent test-runner={} --otlp {}",
        sh_quote(demo.url("test-runner")),
        sh_quote(&endpoint)
    );
    let tmux = tui::start(&args, &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    tmux.wait_for("the agent streaming", false, |s| s.contains("streaming"));
    let warning = "⚠ traces: collector unreachable";
    assert!(!tmux.capture(false).contains(warning));

    fail_a_run(&demo).await;
    let screen = tmux.wait_for("the warning and the drop", false, |s| {
        s.contains(warning) && s.contains("1 span dropped")
    });
    let title = screen.lines().next().unwrap_or_default();
    assert!(title.contains(warning), "on the title: {screen}");

    received.lock().unwrap().refuse = 0;
    let sent = fail_a_run(&demo).await;
    span_of(&received, &sent).await;
    tmux.wait_for("the warning gone, the count kept", false, |s| {
        !s.contains(warning) && s.contains("1 span dropped")
    });
    quit_and_check_the_terminal(&tmux, &before);
}

/// A collector that takes the connection and never answers: on SIGTERM the task left waiting is
/// flushed, the flush gives up after 2 s, and the binary is out soon after (issue 22).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exit_the_flush_gives_up_within_two_seconds_on_a_collector_that_never_answers() {
    // Bound and never accepted: connections complete in the kernel's queue, requests hang.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let demo = start_demo().await;
    let scratch = Scratch::new("otlp-silent");
    let log = scratch.0.join("a2a-watch.log");
    let agents = [format!("code-reviewer={}", demo.url("code-reviewer"))];
    let (child, metrics) = start_watching("--json", &agents, &strs(&otlp_to(&endpoint, &log))).await;
    let reviewer = connect(demo.url("code-reviewer"), Binding::JsonRpc, None).await;
    let question = stream_all(&reviewer, &message("review this diff")).await;
    assert_eq!(question.last_state(), Some(&TaskState::InputRequired));
    let waiting = r#"a2a_watch_tasks{agent="code-reviewer",state="input_required"}"#;
    until(&metrics, &[(waiting, 1.0)]).await;

    let asked = Instant::now();
    stop(child).await;
    let took = asked.elapsed();
    // `stop` allowed it 3 s; it waited for the flush first.
    assert!(took >= Duration::from_millis(1500), "it tried to flush: {took:?}");
    let lines = otlp_lines(&log);
    assert!(
        lines.iter().any(|l| l.contains("still queued after 2s on exit")),
        "{lines:#?}"
    );
    drop(silent);
}
