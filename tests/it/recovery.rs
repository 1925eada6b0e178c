//! The watch engine against small misbehaving agents on loopback (issue 9): refusals reported as
//! failures, quiet and stuck streams, foreign events, tight loops, Retry-After, HTTP errors,
//! bounds, terminal states, unknown tasks, and the watcher's recovery paths. Each fake agent is
//! an axum server written here, speaking JSON-RPC 1.0 with real SSE.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_watch::a2a::TaskState;
use a2a_watch::event::{ActionOutcome, Command, Health, WatchMode};
use a2a_watch::store::{Store, TaskEntry};
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::engine::Watched;
use crate::scenarios::message;

/// One JSON-RPC call as the fake agent saw it; `n` counts earlier calls of the same method.
pub(crate) struct Call {
    pub(crate) method: String,
    pub(crate) params: Value,
    id: Value,
    n: usize,
}

/// What the fake agent does with a call.
pub(crate) enum Out {
    Reply(Response),
    /// Never answers, not even with headers.
    Hang,
}

type Script = Arc<dyn Fn(&Call) -> Out + Send + Sync>;

#[derive(Clone)]
pub(crate) struct Fake {
    script: Script,
    pub(crate) card: Arc<Mutex<Value>>,
    /// Calls per method, and when each came.
    calls: Arc<Mutex<HashMap<String, Vec<Instant>>>>,
}

impl Fake {
    pub(crate) fn count(&self, method: &str) -> usize {
        self.calls.lock().unwrap().get(method).map_or(0, Vec::len)
    }

    pub(crate) fn times(&self, method: &str) -> Vec<Instant> {
        self.calls.lock().unwrap().get(method).cloned().unwrap_or_default()
    }
}

/// Starts a fake agent; returns its URL and its call log.
pub(crate) async fn fake(streaming: bool, script: impl Fn(&Call) -> Out + Send + Sync + 'static) -> (String, Fake) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "fake", "description": "misbehaves", "version": "1",
        "supportedInterfaces": [{"url": format!("{url}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": streaming},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    let state = Fake {
        script: Arc::new(script),
        card: Arc::new(Mutex::new(card)),
        calls: Arc::default(),
    };
    let app = Router::new()
        .route("/.well-known/agent-card.json", get(card_handler))
        .route("/rpc", post(rpc))
        .with_state(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, state)
}

async fn card_handler(State(fake): State<Fake>) -> Response {
    let card = fake.card.lock().unwrap().clone();
    match card {
        Value::String(raw) => raw.into_response(),
        card => axum::Json(card).into_response(),
    }
}

async fn rpc(State(fake): State<Fake>, body: String) -> Response {
    let v: Value = serde_json::from_str(&body).unwrap();
    let method = v["method"].as_str().unwrap_or_default().to_string();
    let n = {
        let mut calls = fake.calls.lock().unwrap();
        let log = calls.entry(method.clone()).or_default();
        log.push(Instant::now());
        log.len() - 1
    };
    let call = Call {
        method,
        params: v["params"].clone(),
        id: v["id"].clone(),
        n,
    };
    match (fake.script)(&call) {
        Out::Reply(r) => r,
        Out::Hang => futures::future::pending().await,
    }
}

pub(crate) fn result(call: &Call, result: Value) -> Out {
    Out::Reply(axum::Json(json!({"jsonrpc": "2.0", "id": call.id, "result": result})).into_response())
}

fn rpc_error(call: &Call, code: i64, message: &str) -> Out {
    Out::Reply(
        axum::Json(json!({"jsonrpc": "2.0", "id": call.id, "error": {"code": code, "message": message}}))
            .into_response(),
    )
}

pub(crate) fn not_found(call: &Call) -> Out {
    rpc_error(call, -32001, "no such task")
}

fn no_tasks(call: &Call) -> Out {
    result(
        call,
        json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}),
    )
}

pub(crate) fn task(id: &str, state: &str, text: &str) -> Value {
    json!({"id": id, "contextId": "ctx", "status": {"state": state,
        "message": {"messageId": format!("{id}-{text}"), "role": "ROLE_AGENT", "parts": [{"text": text}]}}})
}

fn status(id: &str, state: &str, text: &str) -> Value {
    json!({"statusUpdate": {"taskId": id, "contextId": "ctx", "status": task(id, state, text)["status"]}})
}

fn chunk(id: &str, text: &str) -> Value {
    json!({"artifactUpdate": {"taskId": id, "contextId": "ctx", "append": true,
        "artifact": {"artifactId": "log", "parts": [{"text": text}]}}})
}

/// One SSE `data:` line carrying a JSON-RPC result.
pub(crate) fn frame(call: &Call, event: Value) -> String {
    json!({"jsonrpc": "2.0", "id": call.id, "result": event}).to_string()
}

/// An event stream of `frames` (raw `data:` payloads, each after `gap`), then a close or a hang.
pub(crate) fn sse(frames: Vec<String>, gap: Duration, hang: bool) -> Out {
    let body = futures::stream::iter(frames)
        .then(move |f| async move {
            tokio::time::sleep(gap).await;
            Ok::<_, Infallible>(format!("data: {f}\n\n"))
        })
        .chain(futures::stream::iter(hang.then_some(())).then(|()| futures::future::pending()));
    Out::Reply(
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(body))
            .unwrap(),
    )
}

/// An agent with one WORKING task `t1` and nothing to list; `subscribe` answers SubscribeToTask.
fn working_t1(subscribe: impl Fn(&Call) -> Out + Send + Sync + 'static) -> impl Fn(&Call) -> Out + Send + Sync {
    move |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "GetTask" => result(call, task("t1", "TASK_STATE_WORKING", "")),
        "SubscribeToTask" => subscribe(call),
        _ => not_found(call),
    }
}

/// A subscription to `t1`: its WORKING snapshot, then `frames`.
fn t1_then(call: &Call, frames: Vec<String>, gap: Duration, hang: bool) -> Out {
    let snapshot = frame(call, json!({"task": task("t1", "TASK_STATE_WORKING", "")}));
    sse([snapshot].into_iter().chain(frames).collect(), gap, hang)
}

pub(crate) fn listing(call: &Call, tasks: Vec<Value>) -> Out {
    result(
        call,
        json!({"tasks": tasks, "nextPageToken": "", "pageSize": 50, "totalSize": 0}),
    )
}

pub(crate) fn opts() -> WatchOptions {
    WatchOptions {
        max_backoff: Duration::from_millis(500),
        first_byte_timeout: Duration::from_secs(1),
        ..WatchOptions::default()
    }
}

pub(crate) fn spec(url: &str, tasks: &[&str]) -> AgentSpec {
    let mut spec = AgentSpec::new(url);
    spec.name = Some("fake".into());
    spec.poll_interval = Duration::from_millis(200);
    spec.tasks = tasks.iter().map(|t| t.to_string()).collect();
    spec
}

pub(crate) fn watch(spec: AgentSpec, opts: WatchOptions) -> Watched {
    let store = Store::new([(spec.name.clone(), spec.url.clone())]);
    let (tx, events) = a2a_watch::event::channel(256);
    Watched {
        store,
        events,
        engine: Engine::start(vec![spec], opts, tx),
    }
}

impl Watched {
    /// Applies whatever arrives for `how_long`.
    pub(crate) async fn drain(&mut self, how_long: Duration) {
        let deadline = Instant::now() + how_long;
        while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, self.events.recv()).await {
            self.store.apply(ev);
        }
    }

    pub(crate) fn task(&self, id: &str) -> Option<&TaskEntry> {
        self.store.tasks().find(|t| &*t.key.id == id)
    }

    async fn send(&mut self, action: u64, text: &str) -> ActionOutcome {
        let request = Box::new(message(text));
        assert!(self.engine.command(0, Command::Send { action, request }).await);
        self.until("the send's outcome", |s| s.action(action).is_some()).await;
        self.store.action(action).unwrap().clone()
    }
}

fn failed(outcome: &ActionOutcome) -> &str {
    match outcome {
        ActionOutcome::Failed { message } => message,
        ActionOutcome::Done { task } => panic!("reported done ({task:?}); a refusal is a failure"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_unanswered_streaming_send_is_a_failure() {
    let (url, _fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "SendStreamingMessage" => match call.n {
            0 => sse(
                vec![
                    json!({"jsonrpc": "2.0", "id": call.id, "error": {"code": -32602, "message": "answer refused"}})
                        .to_string(),
                ],
                Duration::ZERO,
                false,
            ),
            1 => sse(vec!["{not json".into()], Duration::ZERO, false),
            2 => sse(vec![], Duration::ZERO, false),
            3 => Out::Reply(
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "upstream \x1b[31mexploded\nTraceback ...",
                )
                    .into_response(),
            ),
            4 => Out::Hang,
            _ => sse(
                vec![frame(call, json!({"task": task("t1", "TASK_STATE_WORKING", "ok")}))],
                Duration::ZERO,
                false,
            ),
        },
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &[]), opts());
    w.until("connected", |s| s.agents[0].health == Health::Streaming).await;
    let refused = w.send(1, "deploy?").await;
    assert!(failed(&refused).contains("answer refused"), "{refused:?}");
    let garbled = w.send(2, "deploy?").await;
    assert!(failed(&garbled).contains("did not decode"), "{garbled:?}");
    let empty = w.send(3, "deploy?").await;
    assert!(failed(&empty).contains("without replying"), "{empty:?}");
    let http = w.send(4, "deploy?").await;
    let http = failed(&http);
    assert!(
        http.contains("HTTP 500") && http.contains("upstream exploded"),
        "{http}"
    );
    assert!(
        !http.contains('\x1b') && !http.contains("Traceback"),
        "only the first line, sanitised: {http}"
    );
    let silent = w.send(5, "deploy?").await;
    assert!(failed(&silent).contains("no reply"), "{silent:?}");
    assert_eq!(
        w.send(6, "deploy?").await,
        ActionOutcome::Done {
            task: Some("t1".into())
        }
    );
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_unanswered_plain_send_is_a_failure() {
    let (url, _fake) = fake(false, |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "SendMessage" => match call.n {
            0 => rpc_error(call, -32602, "answer refused"),
            1 => Out::Reply((StatusCode::BAD_GATEWAY, "<h1>bad gateway</h1>").into_response()),
            2 => Out::Hang,
            _ => result(call, json!({"task": task("t1", "TASK_STATE_SUBMITTED", "")})),
        },
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &[]), opts());
    w.until("connected", |s| matches!(s.agents[0].health, Health::Polling { .. }))
        .await;
    let refused = w.send(1, "go").await;
    assert!(failed(&refused).contains("answer refused"), "{refused:?}");
    let http = w.send(2, "go").await;
    assert!(
        failed(&http).contains("HTTP 502") && failed(&http).contains("bad gateway"),
        "{http:?}"
    );
    let silent = w.send(3, "go").await;
    assert!(failed(&silent).contains("no reply"), "{silent:?}");
    assert!(matches!(w.send(4, "go").await, ActionOutcome::Done { .. }));
    w.engine.shutdown().await;
}

/// The answer's stream and the task's subscription both carry the same chunks; each shows once.
/// GetTask returns no artifacts here, so no snapshot could mend a doubled artifact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_streamed_in_reply_appear_once_while_the_task_is_subscribed() {
    let sent = Arc::new(tokio::sync::Notify::new());
    let signal = sent.clone();
    let (url, _fake) = fake(true, move |call| match call.method.as_str() {
        "ListTasks" => listing(call, vec![task("t1", "TASK_STATE_INPUT_REQUIRED", "which branch?")]),
        "GetTask" => result(call, task("t1", "TASK_STATE_WORKING", "")),
        "SubscribeToTask" => {
            let snapshot = frame(
                call,
                json!({"task": task("t1", "TASK_STATE_INPUT_REQUIRED", "which branch?")}),
            );
            let later: Vec<String> = ["a", "b", "c"]
                .iter()
                .map(|c| frame(call, chunk("t1", c)))
                .chain([frame(call, status("t1", "TASK_STATE_COMPLETED", "done"))])
                .collect();
            let sent = sent.clone();
            // The snapshot now; the chunks once the answer's stream has sent its own.
            let body = futures::stream::iter([snapshot])
                .chain(
                    futures::stream::once(async move {
                        sent.notified().await;
                        futures::stream::iter(later)
                    })
                    .flatten(),
                )
                .map(|f| Ok::<_, Infallible>(format!("data: {f}\n\n")))
                .chain(futures::stream::pending());
            Out::Reply(
                Response::builder()
                    .header(header::CONTENT_TYPE, "text/event-stream")
                    .body(Body::from_stream(body))
                    .unwrap(),
            )
        }
        "SendStreamingMessage" => {
            let frames = [status("t1", "TASK_STATE_WORKING", "on it")]
                .into_iter()
                .chain(["a", "b", "c"].iter().map(|c| chunk("t1", c)))
                .chain([status("t1", "TASK_STATE_WORKING", "sent all")])
                .map(|e| frame(call, e))
                .collect();
            let signal = signal.clone();
            let Out::Reply(resp) = sse(frames, Duration::from_millis(20), false) else {
                unreachable!()
            };
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(500)).await;
                signal.notify_one();
            });
            Out::Reply(resp)
        }
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &[]), opts());
    w.until("the task subscribed", |s| {
        s.tasks().any(|t| t.watch == Some(WatchMode::Streaming))
    })
    .await;
    assert!(matches!(w.send(1, "main").await, ActionOutcome::Done { .. }));
    w.until("both streams delivered", |s| {
        s.tasks()
            .any(|t| t.state() == &TaskState::Completed && t.timeline.iter().any(|e| e.text == "sent all"))
    })
    .await;
    w.drain(Duration::from_millis(300)).await;
    let t = w.task("t1").unwrap();
    assert_eq!(t.artifacts.len(), 1);
    assert_eq!(t.artifacts[0].text(), "abc", "each chunk once");
    w.engine.shutdown().await;
}

/// An agent whose task t1 works on with its stream open and nothing more to say; its listing
/// shows nothing, so t1 is known by id alone.
async fn quiet_agent() -> (String, Fake) {
    fake(true, move |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "GetTask" => result(call, task("t1", "TASK_STATE_WORKING", "thinking")),
        "SubscribeToTask" => sse(
            vec![frame(
                call,
                json!({"task": task("t1", "TASK_STATE_WORKING", "thinking")}),
            )],
            Duration::ZERO,
            true,
        ),
        _ => not_found(call),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_stream_is_checked_with_get_task_and_kept_open() {
    let (url, fake) = quiet_agent().await;
    let mut w = watch(
        spec(&url, &["t1"]),
        WatchOptions {
            quiet_after: Duration::from_millis(300),
            ..opts()
        },
    );
    w.until("quiet shown", |s| s.tasks().any(|t| t.quiet_since.is_some()))
        .await;
    // A check that finds the task unchanged sends the store nothing (watch/task.rs), so this
    // waits on the agent's count, not on an event.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while fake.count("GetTask") < 2 {
        assert!(tokio::time::Instant::now() < deadline, "not checked again within 20 s");
        w.drain(Duration::from_millis(100)).await;
    }
    assert_eq!(fake.count("SubscribeToTask"), 1, "the stream was not dropped");
    assert_eq!(w.task("t1").unwrap().watch, Some(WatchMode::Streaming));
    w.engine.shutdown().await;
}

/// A stream that stays quiet is checked again and again, each time between 1x and 2x
/// `quiet_after` after the last (issue 20): in 1.5 s of 100 ms, 7 to 15 more checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stays_quiet_is_checked_again_within_twice_quiet_after() {
    let (url, fake) = quiet_agent().await;
    let mut w = watch(
        spec(&url, &["t1"]),
        WatchOptions {
            quiet_after: Duration::from_millis(100),
            ..opts()
        },
    );
    w.until("quiet shown", |s| s.tasks().any(|t| t.quiet_since.is_some()))
        .await;
    let before = fake.count("GetTask");
    w.drain(Duration::from_millis(1500)).await;
    let more = fake.count("GetTask") - before;
    assert!((6..=16).contains(&more), "{more} GetTasks in 1.5 s of quiet");
    let times = fake.times("GetTask");
    let longest = times.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(
        longest < Duration::from_millis(350),
        "a gap of {longest:?} between checks"
    );
    assert_eq!(fake.count("SubscribeToTask"), 1, "the stream was kept");
    w.engine.shutdown().await;
}

/// With one stream allowed, a subscription that never sends headers would hold the only slot
/// forever; abandoned after the first-byte timeout, it frees the slot and is retried later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_stuck_before_headers_is_retried_and_frees_its_slot() {
    let (url, fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => listing(
            call,
            vec![
                task("stuck", "TASK_STATE_WORKING", ""),
                task("fine", "TASK_STATE_WORKING", ""),
            ],
        ),
        "SubscribeToTask" if call.params["id"] == "stuck" => Out::Hang,
        "SubscribeToTask" => sse(
            vec![frame(call, json!({"task": task("fine", "TASK_STATE_WORKING", "")}))],
            Duration::ZERO,
            true,
        ),
        "GetTask" => result(
            call,
            task(call.params["id"].as_str().unwrap(), "TASK_STATE_WORKING", ""),
        ),
        _ => not_found(call),
    })
    .await;
    let mut w = watch(
        spec(&url, &[]),
        WatchOptions {
            max_streams: 1,
            first_byte_timeout: Duration::from_millis(300),
            ..opts()
        },
    );
    w.until("the other task streamed", |s| {
        s.tasks()
            .any(|t| &*t.key.id == "fine" && t.watch == Some(WatchMode::Streaming))
    })
    .await;
    let stuck = w.task("stuck").unwrap();
    assert!(
        stuck.error.as_deref().is_some_and(|e| e.contains("no response")),
        "{:?}",
        stuck.error
    );
    w.engine.shutdown().await;
    let _ = fake;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_naming_another_task_are_ignored_on_both_kinds_of_stream() {
    let (url, _fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "GetTask" => result(call, task("t1", "TASK_STATE_WORKING", "")),
        "SubscribeToTask" => t1_then(
            call,
            vec![
                frame(call, status("intruder", "TASK_STATE_FAILED", "hijacked")),
                frame(call, chunk("victim", "injected")),
                frame(call, status("t1", "TASK_STATE_WORKING", "still mine")),
            ],
            Duration::ZERO,
            true,
        ),
        "SendStreamingMessage" => sse(
            vec![
                frame(call, json!({"task": task("t2", "TASK_STATE_WORKING", "")})),
                frame(call, status("t1", "TASK_STATE_CANCELED", "from t2's stream")),
                frame(call, status("t2", "TASK_STATE_WORKING", "t2 goes on")),
            ],
            Duration::ZERO,
            true,
        ),
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("t1's own event", |s| {
        s.tasks().any(|t| t.timeline.iter().any(|e| e.text == "still mine"))
    })
    .await;
    assert!(matches!(w.send(1, "start").await, ActionOutcome::Done { .. }));
    w.until("t2's own event", |s| {
        s.tasks().any(|t| t.timeline.iter().any(|e| e.text == "t2 goes on"))
    })
    .await;
    assert!(w.task("intruder").is_none() && w.task("victim").is_none());
    assert_eq!(w.task("t1").unwrap().state(), &TaskState::Working);
    w.engine.shutdown().await;
}

/// Each subscription carries the snapshot and one event, then closes: each carried the task
/// forward, yet resubscribing at once every time would be a tight loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_closes_after_every_event_gets_no_tight_loop() {
    let (url, fake) = fake(
        true,
        working_t1(|call| {
            t1_then(
                call,
                vec![frame(
                    call,
                    status("t1", "TASK_STATE_WORKING", &format!("step {}", call.n)),
                )],
                Duration::ZERO,
                false,
            )
        }),
    )
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("a few steps", |_| fake.count("SubscribeToTask") >= 3).await;
    let first = fake.times("SubscribeToTask")[0];
    w.drain(Duration::from_secs(3)).await;
    let within = fake
        .times("SubscribeToTask")
        .iter()
        .filter(|t| t.duration_since(first) < Duration::from_secs(3))
        .count();
    // Five at once, then at most one per backoff step (250-500 ms here): about a dozen.
    assert!(within <= 25, "{within} subscriptions in 3 s");
    w.engine.shutdown().await;
}

/// A run that only moves while someone subscribes: each subscription gets the snapshot, one log
/// chunk and the next status, then the server closes it. A listing or GetTask never moves it, so
/// every step seen (and the whole log) proves a resubscription after each close, whatever the
/// machine's pace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_followed_through_server_closes_shows_every_step_and_the_whole_log() {
    const STEPS: [(&str, &str); 5] = [
        ("TASK_STATE_WORKING", "collecting tests"),
        ("TASK_STATE_WORKING", "collected 12 items"),
        ("TASK_STATE_WORKING", "7/12 passed"),
        ("TASK_STATE_WORKING", "12/12 run"),
        ("TASK_STATE_COMPLETED", "1 failed, 11 passed"),
    ];
    let chunk_of = |step: usize| format!("chunk {step};");
    let at = move |step: usize| {
        let (state, text) = STEPS[step];
        let mut t = task("t1", state, text);
        if step > 0 {
            let log: Vec<Value> = (1..=step).map(|i| json!({"text": chunk_of(i)})).collect();
            t["artifacts"] = json!([{"artifactId": "log", "parts": log}]);
        }
        t
    };
    let step = Arc::new(Mutex::new(0usize));
    let (url, _fake) = fake(true, move |call| {
        let mut step = step.lock().unwrap();
        match call.method.as_str() {
            "ListTasks" => listing(call, vec![at(*step)]),
            "GetTask" => result(call, at(*step)),
            "SubscribeToTask" if *step + 1 < STEPS.len() => {
                let snapshot = frame(call, json!({"task": at(*step)}));
                *step += 1;
                let (state, text) = STEPS[*step];
                let chunk = json!({"artifactUpdate": {"taskId": "t1", "contextId": "ctx", "append": *step > 1,
                    "artifact": {"artifactId": "log", "parts": [{"text": chunk_of(*step)}]}}});
                let frames = vec![snapshot, frame(call, chunk), frame(call, status("t1", state, text))];
                sse(frames, Duration::ZERO, false)
            }
            _ => not_found(call),
        }
    })
    .await;
    // Found by listing, as a task started elsewhere is.
    let mut w = watch(spec(&url, &[]), opts());
    w.until("the run completed", |s| {
        s.tasks().any(|t| t.state() == &TaskState::Completed)
    })
    .await;
    let run = w.task("t1").unwrap();
    let texts: Vec<&str> = run.timeline.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, STEPS.map(|(_, text)| text), "every step, once, in order");
    assert_eq!(run.artifacts.len(), 1);
    assert_eq!(
        run.artifacts[0].text(),
        "chunk 1;chunk 2;chunk 3;chunk 4;",
        "each chunk once"
    );
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured_for_listings_and_subscriptions() {
    let (url, fake) = fake(true, |call| {
        let busy = |status: StatusCode| {
            let mut headers = HeaderMap::new();
            headers.insert(header::RETRY_AFTER, "2".parse().unwrap());
            Out::Reply((status, headers, "slow down").into_response())
        };
        match call.method.as_str() {
            "ListTasks" if call.n == 1 => busy(StatusCode::TOO_MANY_REQUESTS),
            "ListTasks" => no_tasks(call),
            "SubscribeToTask" if call.n == 0 => busy(StatusCode::SERVICE_UNAVAILABLE),
            "SubscribeToTask" => sse(
                vec![frame(call, json!({"task": task("t1", "TASK_STATE_WORKING", "")}))],
                Duration::ZERO,
                true,
            ),
            "GetTask" => result(call, task("t1", "TASK_STATE_WORKING", "")),
            _ => not_found(call),
        }
    })
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("the 429 on the row", |s| {
        s.agents[0]
            .health
            .detail()
            .is_some_and(|d| d.contains("HTTP 429") && d.contains("retry after 2 s"))
    })
    .await;
    w.until("listing and streaming again", |_| {
        fake.count("ListTasks") >= 3 && fake.count("SubscribeToTask") >= 2
    })
    .await;
    let gap = |method: &str, after: usize| {
        let t = fake.times(method);
        t[after + 1].duration_since(t[after])
    };
    // Without Retry-After, both would come back within the 500 ms backoff cap.
    assert!(
        gap("ListTasks", 1) >= Duration::from_millis(1900),
        "{:?}",
        gap("ListTasks", 1)
    );
    assert!(
        gap("SubscribeToTask", 0) >= Duration::from_millis(1900),
        "{:?}",
        gap("SubscribeToTask", 0)
    );
    w.engine.shutdown().await;
}

/// A proxy's HTML 500 on a JSON-RPC call reads as HTTP 500 and its first line, not as a body that
/// failed to decode; the warning goes once GetTask answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_error_on_json_rpc_shows_its_status_and_the_warning_clears() {
    let (url, fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "SubscribeToTask" => rpc_error(call, -32004, "no subscriptions here"),
        "GetTask" if call.n == 1 => Out::Reply(
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "<html><h1>500 Internal Server Error</h1>\n<p>nginx</p>",
            )
                .into_response(),
        ),
        "GetTask" => result(call, task("t1", "TASK_STATE_INPUT_REQUIRED", "which branch?")),
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("the warning", |s| s.tasks().any(|t| t.error.is_some())).await;
    let error = w.task("t1").unwrap().error.clone().unwrap();
    assert!(
        error.contains("HTTP 500") && error.contains("500 Internal Server Error"),
        "{error}"
    );
    assert!(!error.contains("decode") && !error.contains("nginx"), "{error}");
    w.until("the warning cleared", |s| {
        s.tasks().any(|t| t.error.is_none() && fake.count("GetTask") >= 3)
    })
    .await;
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_card_is_refused_and_endless_listings_are_cut() {
    let (huge_url, huge) = fake(true, no_tasks).await;
    *huge.card.lock().unwrap() = Value::String(format!("{{\"name\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)));
    let (url, fake) = fake(true, |call| match call.method.as_str() {
        // Always one more page, with a token never seen before: page k holds task tk.
        "ListTasks" => {
            let k: usize = call.params["pageToken"].as_str().map_or(0, |p| p.parse().unwrap());
            result(
                call,
                json!({"tasks": [task(&format!("t{k}"), "TASK_STATE_COMPLETED", "")],
                       "nextPageToken": (k + 1).to_string(), "pageSize": 1, "totalSize": 0}),
            )
        }
        _ => not_found(call),
    })
    .await;
    let mut big = watch(spec(&huge_url, &[]), opts());
    big.until("the card refused", |s| {
        s.agents[0]
            .health
            .detail()
            .is_some_and(|d| d.contains("over 1048576 bytes"))
    })
    .await;
    big.engine.shutdown().await;

    let mut w = watch(spec(&url, &[]), WatchOptions { max_pages: 5, ..opts() });
    w.until("the cut on the agent's row", |s| s.agents[0].listing_cut).await;
    w.drain(Duration::from_secs(1)).await;
    assert!(fake.count("ListTasks") >= 10, "listed again");
    assert_eq!(w.store.len(), 5, "each listing read five pages");
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_task_stays_completed_whatever_comes_later() {
    let (url, _fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        "SubscribeToTask" => t1_then(
            call,
            vec![
                frame(call, status("t1", "TASK_STATE_COMPLETED", "done")),
                frame(call, status("t1", "TASK_STATE_FAILED", "changed my mind")),
            ],
            Duration::ZERO,
            false,
        ),
        "GetTask" => result(call, task("t1", "TASK_STATE_FAILED", "changed my mind")),
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("done watching", |s| s.tasks().any(|t| t.watch == Some(WatchMode::Done)))
        .await;
    let t = w.task("t1").unwrap();
    assert_eq!(t.state(), &TaskState::Completed);
    assert!(t.timeline.iter().all(|e| e.state != TaskState::Failed));
    w.engine.shutdown().await;
}

/// `--task` naming a task the agent does not know: a row marked not found, and the watcher
/// stops (it asks GetTask once more before believing the subscription's refusal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_the_agent_does_not_know_is_shown_as_not_found_and_not_watched() {
    let (url, fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => no_tasks(call),
        _ => not_found(call),
    })
    .await;
    let mut w = watch(spec(&url, &["ghost"]), opts());
    w.until("the row", |s| s.tasks().any(|t| t.not_found)).await;
    w.drain(Duration::from_secs(1)).await;
    assert_eq!(fake.count("SubscribeToTask"), 1, "the watcher stopped");
    assert_eq!(fake.count("GetTask"), 1);
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn until_all_terminal_counts_an_unknown_task_as_ended() {
    let (url, _fake) = fake(true, |call| match call.method.as_str() {
        "ListTasks" => listing(call, vec![task("real", "TASK_STATE_COMPLETED", "done")]),
        _ => not_found(call),
    })
    .await;
    let agent = format!("fake={url}");
    let out = crate::cli::run(
        &[
            "--agent",
            &agent,
            "--task",
            "fake:ghost",
            "--json",
            "--until",
            "all-terminal",
        ],
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    let lines = crate::cli::lines(&out);
    assert!(
        lines.iter().any(|l| l["event"] == "not_found" && l["task"] == "ghost"),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_subscriptions_turn_into_polling() {
    let (url, fake) = fake(
        true,
        working_t1(|_| Out::Reply((StatusCode::BAD_GATEWAY, "bad gateway").into_response())),
    )
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("polling", |s| s.tasks().any(|t| t.watch == Some(WatchMode::Polling)))
        .await;
    let subscribed = fake.count("SubscribeToTask");
    assert_eq!(subscribed, 3, "three tries, then polling");
    w.until("polled", |_| fake.count("GetTask") >= subscribed + 2).await;
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_subscription_turns_into_polling_at_once() {
    let (url, fake) = fake(
        true,
        working_t1(|call| rpc_error(call, -32004, "subscriptions are not supported")),
    )
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("polling", |s| s.tasks().any(|t| t.watch == Some(WatchMode::Polling)))
        .await;
    assert_eq!(fake.count("SubscribeToTask"), 1);
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_frame_is_reported_and_the_stream_goes_on() {
    let (url, fake) = fake(
        true,
        working_t1(|call| {
            t1_then(
                call,
                vec![
                    "{\"jsonrpc\": \"2.0\", \"result\": {\"statusUpdate\": 42}}".into(),
                    frame(call, status("t1", "TASK_STATE_WORKING", "after the garbage")),
                ],
                Duration::from_millis(100),
                true,
            )
        }),
    )
    .await;
    let mut w = watch(spec(&url, &["t1"]), opts());
    w.until("the frame reported", |s| {
        s.tasks()
            .any(|t| t.error.as_deref().is_some_and(|e| e.contains("decode")))
    })
    .await;
    w.until("the next event on the same stream", |s| {
        s.tasks()
            .any(|t| t.timeline.iter().any(|e| e.text == "after the garbage"))
    })
    .await;
    assert_eq!(fake.count("SubscribeToTask"), 1);
    assert_eq!(w.task("t1").unwrap().error, None, "the good event cleared the warning");
    w.engine.shutdown().await;
}
