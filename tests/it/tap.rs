//! The tap (issue 12): a planner (a real A2A client: our own `a2a-watch send`, and the official
//! Python SDK's client in tests/interop/python/planner.py) pointed at
//! `a2a-watch --json --tap` in front of the demo agents and the official SDK agents (1.0 with a
//! token, 0.3). The dashboard shows every task the planner made with the states it saw, even
//! where a2a-watch itself cannot list them; what the planner gets through the tap is what it
//! gets direct; its token reaches the agent and nothing of a2a-watch's.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_watch::a2a::{StreamResponse, TaskState};
use a2a_watch::event::{self, Event};
use a2a_watch::tap::Taps;
use a2a_watch::watch::AgentSpec;
use axum::Router;
use axum::body::Body;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::{Notify, mpsc};

use crate::cli::{lines, run, spawn, stderr};
use crate::demo_client::{TOKEN, start_demo};
use crate::peers::{Peer, Sdk};
use crate::tui::{Scratch, quit_and_check_the_terminal, sh_quote, start};

const PLANNER_TOKEN: &str = "planner-s3cret-tok";
const WAIT: Duration = Duration::from_secs(30);

/// `a2a-watch --json --tap ...` until dropped, its output collected as it comes.
pub(crate) struct Dashboard {
    _child: Child,
    stdout: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<String>>,
    log: PathBuf,
    /// Where the planner is pointed (`http://IP:PORT`), one per `--tap`, as the start-up lines say.
    pub(crate) taps: Vec<String>,
}

impl Dashboard {
    pub(crate) async fn start(args: &[&str]) -> Dashboard {
        let taps = args.iter().filter(|a| **a == "--tap").count();
        let log = std::env::temp_dir().join(format!("a2a-watch-tap-{}.log", uuid::Uuid::new_v4()));
        let head = ["--json", "--log-file", log.to_str().unwrap()];
        let mut child = spawn(&[&head[..], args].concat(), &[("RUST_LOG", "a2a_watch=trace")]);
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let collected = stdout.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = out.next_line().await {
                let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not NDJSON: {line}: {e}"));
                collected.lock().unwrap().push(value);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, mut addresses) = mpsc::unbounded_channel();
        let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
        let collected = stderr.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = err.next_line().await {
                collected.lock().unwrap().push_str(&format!("{line}\n"));
                if let Some(rest) = line.split_once("point the planner at ").map(|(_, r)| r) {
                    let _ = found.send(rest.split_whitespace().next().unwrap_or("").to_string());
                }
            }
        });
        let mut found = Vec::new();
        while found.len() < taps {
            let next = tokio::time::timeout(WAIT, addresses.recv()).await;
            match next {
                Ok(Some(address)) => found.push(address),
                _ => panic!("the taps did not start: {}", stderr.lock().unwrap()),
            }
        }
        Dashboard {
            _child: child,
            stdout,
            stderr,
            log,
            taps: found,
        }
    }

    /// Waits until every task has its state as the last word on it.
    async fn wait_for_states(&self, expected: &[(String, String)]) {
        let deadline = Instant::now() + WAIT;
        loop {
            let lines = self.stdout.lock().unwrap().clone();
            let last = |task: &str| {
                lines
                    .iter()
                    .rev()
                    .find(|l| l["task"] == task)
                    .map(|l| l["state"].as_str().unwrap_or("").to_string())
            };
            let missing: Vec<_> = expected
                .iter()
                .filter(|(task, state)| last(task).as_ref() != Some(state))
                .collect();
            if missing.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the dashboard never showed {missing:?}; it printed:\n{}",
                lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn health(&self, agent: &str) -> Option<String> {
        let lines = self.stdout.lock().unwrap();
        let health = lines
            .iter()
            .rev()
            .find(|l| l["agent"] == agent && l.get("health").is_some());
        health.map(|l| l["health"].as_str().unwrap_or("").to_string())
    }

    /// Everything a2a-watch wrote: its output, its errors, its log.
    pub(crate) fn everything(&self) -> String {
        let out = self
            .stdout
            .lock()
            .unwrap()
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        format!("{}\n{}\n{log}", out.join("\n"), self.stderr.lock().unwrap())
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The planner: `a2a-watch send` through the tap; the task and the last state it saw.
async fn plan(url: &str, text: &str, flags: &[&str]) -> (String, String) {
    let out = run(&[&["send", url, text], flags].concat(), &[]).await;
    assert!(out.status.success(), "{text}: {}", stderr(&out));
    let last = lines(&out).pop().expect("the planner saw its task");
    (
        last["task"].as_str().unwrap().to_string(),
        last["state"].as_str().unwrap().to_string(),
    )
}

/// The planner's sends one after the other, `(tap, text, flags)`, each with `common` flags
/// too; checks the last states it saw and returns `(task, state)` of each.
async fn plan_all(steps: &[(&str, &str, &[&str])], common: &[&str], states: &[&str]) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    for (url, text, flags) in steps {
        seen.push(plan(url, text, &[*flags, common].concat()).await);
    }
    let last: Vec<&str> = seen.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(last, states);
    seen
}

/// The planner built on the official Python SDK's client (tests/interop/python/planner.py):
/// one new task per text; `(task, state)` as it saw them last, states named as ours are.
async fn sdk_plan(url: &str, flags: &[&str], texts: &[&str]) -> Vec<(String, String)> {
    let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop");
    let planner = tokio::process::Command::new(interop.join(".venv-py13/bin/python"))
        .arg(interop.join("python/planner.py"))
        .arg(url)
        .args(flags)
        .args(texts)
        .output();
    let out = tokio::time::timeout(WAIT * 2, planner)
        .await
        .expect("in time")
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seen: Vec<(String, String)> = lines(&out)
        .iter()
        .map(|l| {
            let state = l["state"].as_str().unwrap().trim_start_matches("TASK_STATE_");
            (l["task"].as_str().unwrap().to_string(), state.to_string())
        })
        .collect();
    assert_eq!(seen.len(), texts.len());
    seen
}

/// HTTP+JSON rather than the card's first choice (JSON-RPC), and every event of the stream.
const REST_FOLLOW: &[&str] = &["--binding", "rest", "--follow"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_planners_tasks_on_demo_agents_show_with_the_states_it_saw() {
    let agents = start_demo().await;
    let runner = format!("127.0.0.1:0={}", agents.url("test-runner"));
    let deployer = format!("deployer=127.0.0.1:0={}", agents.url("deployer"));
    let dash = Dashboard::start(&["--tap", &runner, "--tap", &deployer]).await;
    let (runner, deployer) = (&dash.taps[0], &dash.taps[1]);
    let seen = plan_all(
        &[
            (runner, "run the tests of payments-api", &[]),
            (runner, "run the tests, they will fail", REST_FOLLOW),
        ],
        &[],
        &["COMPLETED", "FAILED"],
    )
    .await;
    // The planner has the deployer's token; a2a-watch does not.
    let deploys = plan_all(
        &[
            (deployer, "deploy build 2026.10.06-1 to production", &[]),
            (deployer, "deploy build 2026.10.06-1 to staging", REST_FOLLOW),
        ],
        &["--token", TOKEN],
        &["REJECTED", "AUTH_REQUIRED"],
    )
    .await;
    let seen = [seen, deploys].concat();
    dash.wait_for_states(&seen).await;
    // a2a-watch has no token for the deployer: what it shows of it came through the tap.
    assert_eq!(dash.health("deployer").as_deref(), Some("unauthorized"));
    assert!(!dash.everything().contains(TOKEN), "{}", dash.everything());
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_agents_tasks_show_through_the_tap_1_0_with_a_token_and_0_3() {
    let py = Peer::start(Sdk::Python13, &["--token", PLANNER_TOKEN]);
    let py03 = Peer::start(Sdk::Python03, &[]);
    let dash = Dashboard::start(&[
        "--tap",
        &format!("py=127.0.0.1:0={}", py.url),
        "--tap",
        &format!("127.0.0.1:0={}", py03.url),
    ])
    .await;
    let (tap, tap03) = (&dash.taps[0], &dash.taps[1]);
    let token = ["--token", PLANNER_TOKEN];
    let seen = plan_all(
        &[
            (tap, "run tests", &token),
            (tap, "fail", &[&token[..], REST_FOLLOW].concat()),
            (tap, "question", &[&token[..], &["--follow"]].concat()),
            (tap03, "run tests", &[]),
            (tap03, "fail", &["--follow"]),
        ],
        &[],
        &["COMPLETED", "FAILED", "INPUT_REQUIRED", "COMPLETED", "FAILED"],
    )
    .await;
    let sdk = [
        sdk_plan(tap, &token, &["run tests", "fail"]).await,
        sdk_plan(tap, &[&token[..], &["--stream"]].concat(), &["question", "run tests"]).await,
    ]
    .concat();
    let states: Vec<&str> = sdk.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(states, ["COMPLETED", "FAILED", "INPUT_REQUIRED", "COMPLETED"]);
    let seen = [seen, sdk].concat();
    dash.wait_for_states(&seen).await;
    // Its own calls carry no token (none was configured), so the agent refuses a2a-watch: the
    // planner's token was never borrowed.
    assert_eq!(dash.health("py").as_deref(), Some("unauthorized"));
    assert!(!dash.everything().contains(PLANNER_TOKEN), "{}", dash.everything());
}

/// One HTTP exchange as the planner sees it: status, content type and the body's bytes.
async fn exchange(req: reqwest::RequestBuilder) -> (u16, String, Vec<u8>) {
    let resp = req.timeout(WAIT).send().await.expect("answered");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, content_type, resp.bytes().await.unwrap().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_tap_the_planner_gets_the_bytes_it_gets_direct_but_for_the_cards_urls() {
    let py = Peer::start(Sdk::Python13, &["--token", PLANNER_TOKEN]);
    let dash = Dashboard::start(&["--tap", &format!("127.0.0.1:0={}", py.url)]).await;
    let tap = dash.taps[0].clone();
    let (task, _) = plan(&tap, "run tests", &["--token", PLANNER_TOKEN]).await;
    let http = reqwest::Client::new();

    // The card: the upstream's interface URLs now lead to the tap, and nothing else changed.
    let card = |base: &str| {
        let url = format!("{base}/.well-known/agent-card.json");
        async { exchange(http.get(url)).await.2 }
    };
    let direct: Value = serde_json::from_slice(&card(&py.url).await).unwrap();
    let tapped: Value = serde_json::from_slice(&card(&tap).await).unwrap();
    let interfaces = tapped["supportedInterfaces"].as_array().unwrap();
    assert!(!interfaces.is_empty());
    for (t, d) in interfaces.iter().zip(direct["supportedInterfaces"].as_array().unwrap()) {
        let (t, d) = (t["url"].as_str().unwrap(), d["url"].as_str().unwrap());
        assert_eq!(t.strip_prefix(&tap), d.strip_prefix(&py.url), "{t} / {d}");
        assert!(t.starts_with(&tap), "{t}");
    }
    let mut restored = tapped.clone();
    restored["supportedInterfaces"] = direct["supportedInterfaces"].clone();
    assert_eq!(restored, direct, "only the interface URLs differ");

    // Every other answer, byte for byte, errors and refusals included.
    let get_task = |id: &str| json!({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": id}});
    let auth = format!("Bearer {PLANNER_TOKEN}");
    for (path, body, token) in [
        ("/a2a/jsonrpc", Some(get_task(&task)), true),
        ("/a2a/jsonrpc", Some(get_task("no-such-task")), true),
        ("/a2a/jsonrpc", Some(get_task(&task)), false),
        (&*format!("/a2a/rest/tasks/{task}"), None, true),
        ("/a2a/rest/tasks/no-such-task", None, true),
        ("/a2a/rest/tasks?historyLength=1", None, true),
    ] {
        let call = |base: &str| {
            let url = format!("{base}{path}");
            let mut req = match &body {
                Some(body) => http.post(url).json(body),
                None => http.get(url),
            };
            req = req.header("A2A-Version", "1.0");
            if token {
                req = req.header("Authorization", &auth);
            }
            req
        };
        let direct = exchange(call(&py.url)).await;
        let tapped = exchange(call(&tap)).await;
        assert_eq!(
            tapped,
            direct,
            "{path} {body:?}: {}",
            String::from_utf8_lossy(&tapped.2)
        );
    }
}

/// An agent written for this test: its card (also as the extended card), a stream of two frames
/// whose second waits until the test says so, and a refusal.
async fn frame_agent(second: Arc<Notify>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "framer",
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}
    });
    let extended = card.clone();
    let app = Router::new()
        .route("/extendedAgentCard", get(move || async move { axum::Json(extended) }))
        .route(
            "/.well-known/agent-card.json",
            get(move || async move { axum::Json(card) }),
        )
        .route(
            "/rpc",
            post(move || async move {
                let frames = futures::stream::unfold(0, move |n| {
                    let second = second.clone();
                    async move {
                        let state = match n {
                            0 => "TASK_STATE_WORKING",
                            1 => {
                                second.notified().await;
                                "TASK_STATE_COMPLETED"
                            }
                            _ => return None,
                        };
                        Some((Ok::<_, std::convert::Infallible>(frame(state)), n + 1))
                    }
                });
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .header("x-agent", "framer")
                    .body(Body::from_stream(frames))
                    .unwrap()
            }),
        )
        .route(
            "/busy",
            get(|| async {
                Response::builder()
                    .status(503)
                    .header("retry-after", "7")
                    .body(Body::from("busy, come back later"))
                    .unwrap()
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

fn frame(state: &str) -> String {
    let event = json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {
        "taskId": "t-1", "contextId": "c-1", "status": {"state": state}}}});
    format!("data: {event}\n\n")
}

/// A tap of the library's own, in front of `upstream`, feeding a store's channel of `capacity`.
async fn tap_in_process(upstream: &str, capacity: usize) -> (a2a_watch::tap::Running, SocketAddr, event::Receiver) {
    let mut spec = AgentSpec::new(upstream);
    spec.tap = Some("127.0.0.1:0".parse().unwrap());
    let taps = Taps::bind(&[spec]).await.expect("binds");
    let (agent, at) = taps.addresses()[0];
    assert_eq!(agent, 0);
    let (tx, rx) = event::channel(capacity);
    (taps.start(tx), at, rx)
}

async fn next_state(events: &mut event::Receiver) -> TaskState {
    loop {
        let ev = tokio::time::timeout(WAIT, events.recv())
            .await
            .expect("an event")
            .expect("open");
        match ev {
            Event::Update {
                agent: 0,
                event: StreamResponse::StatusUpdate(u),
                ..
            } => return u.status.state,
            // Each event of the planner's traffic is announced as tapped first.
            Event::Tapped { agent: 0, .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The planner's streaming send through the tap at `at`.
async fn stream_through(at: SocketAddr) -> reqwest::Response {
    stream_through_with(at, HeaderMap::new()).await
}

/// The same with the planner's `headers` too.
async fn stream_through_with(at: SocketAddr, headers: HeaderMap) -> reqwest::Response {
    let sent = reqwest::Client::new()
        .post(format!("http://{at}/rpc"))
        .header("content-type", "application/json")
        .headers(headers)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}"#)
        .send();
    tokio::time::timeout(WAIT, sent)
        .await
        .expect("the tap answers")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_passes_frame_by_frame_and_each_reaches_the_store_as_it_passes() {
    let second = Arc::new(Notify::new());
    let upstream = frame_agent(second.clone()).await;
    let (running, at, mut events) = tap_in_process(&upstream, 16).await;
    let resp = stream_through(at).await;
    assert_eq!(resp.headers()["x-agent"], "framer");
    let mut body = resp.bytes_stream();
    // The second frame is not even written until the first has reached the planner and the store.
    let mut got = Vec::new();
    while got.len() < frame("TASK_STATE_WORKING").len() {
        let chunk = tokio::time::timeout(WAIT, body.next())
            .await
            .expect("the first frame, alone");
        got.extend_from_slice(&chunk.unwrap().unwrap());
    }
    assert_eq!(String::from_utf8(got).unwrap(), frame("TASK_STATE_WORKING"));
    assert_eq!(next_state(&mut events).await, TaskState::Working);
    second.notify_one();
    let mut rest = Vec::new();
    while let Some(chunk) = tokio::time::timeout(WAIT, body.next()).await.expect("the rest") {
        rest.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(String::from_utf8(rest).unwrap(), frame("TASK_STATE_COMPLETED"));
    assert_eq!(next_state(&mut events).await, TaskState::Completed);

    // The agent's refusals come back as sent; an agent that is down is a 502 of the tap's own.
    let busy = exchange(reqwest::Client::new().get(format!("http://{at}/busy"))).await;
    assert_eq!(busy, (503, String::new(), b"busy, come back later".to_vec()));
    drop(running);
}

/// A planner's streamed send with a W3C `traceparent` hands the planner's trace to the store with
/// the task it names, frame by frame (issue 22: the task joins the planner's trace); one header
/// of two values is no trace context.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_send_hands_the_planners_traceparent_to_the_store() {
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let expected = event::TraceParent::parse(traceparent);
    assert!(expected.is_some());
    for (values, trace) in [(&[traceparent][..], expected), (&[traceparent, traceparent][..], None)] {
        let second = Arc::new(Notify::new());
        let upstream = frame_agent(second.clone()).await;
        let (running, at, mut events) = tap_in_process(&upstream, 16).await;
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("traceparent", value.parse().unwrap());
        }
        let resp = stream_through_with(at, headers).await;
        second.notify_one();
        let passed = String::from_utf8(resp.bytes().await.unwrap().to_vec()).unwrap();
        assert_eq!(passed, frame("TASK_STATE_WORKING") + &frame("TASK_STATE_COMPLETED"));
        let mut tapped = Vec::new();
        while tapped.len() < 2 {
            let ev = tokio::time::timeout(WAIT, events.recv())
                .await
                .expect("an event")
                .expect("open");
            if let Event::Tapped { task, trace, .. } = ev {
                tapped.push((task, trace));
            }
        }
        assert_eq!(tapped, [("t-1".to_string(), trace), ("t-1".to_string(), trace)]);
        drop(running);
    }
}

/// A store that takes nothing in (a dashboard stuck drawing) holds no planner up: its streams
/// go through whole, and the events wait for the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_takes_nothing_slows_no_planner() {
    let second = Arc::new(Notify::new());
    let upstream = frame_agent(second.clone()).await;
    let (_running, at, mut events) = tap_in_process(&upstream, 1).await;
    const STREAMS: usize = 3;
    for _ in 0..STREAMS {
        // The agent holds each second frame until asked: ask before the stream even starts.
        second.notify_one();
        let whole = async { stream_through(at).await.bytes().await };
        let body = tokio::time::timeout(WAIT, whole)
            .await
            .expect("the whole stream, in time");
        let body = String::from_utf8(body.unwrap().to_vec()).unwrap();
        assert_eq!(body, frame("TASK_STATE_WORKING") + &frame("TASK_STATE_COMPLETED"));
    }
    let mut states = Vec::new();
    for _ in 0..STREAMS * 2 {
        states.push(next_state(&mut events).await);
    }
    let completed = states.iter().filter(|s| **s == TaskState::Completed).count();
    assert_eq!((states.len(), completed), (STREAMS * 2, STREAMS), "{states:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_taps_stop_nothing_listens_and_open_streams_close() {
    let second = Arc::new(Notify::new());
    let upstream = frame_agent(second).await;
    let (running, at, _events) = tap_in_process(&upstream, 16).await;
    let resp = stream_through(at).await;
    let mut body = resp.bytes_stream();
    let first = tokio::time::timeout(WAIT, body.next()).await.expect("the first frame");
    assert!(first.unwrap().is_ok());
    drop(running);
    // The upstream still holds its second frame back: the stream ends because the tap is gone.
    let end = tokio::time::timeout(WAIT, body.next()).await.expect("the stream ends");
    assert!(!matches!(end, Some(Ok(_))), "{end:?}");
    let connected = tokio::time::timeout(WAIT, tokio::net::TcpStream::connect(at))
        .await
        .unwrap();
    assert!(connected.is_err(), "nothing listens at {at}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_is_down_is_a_502_from_the_tap() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let dash = Dashboard::start(&["--tap", &format!("127.0.0.1:0={down}")]).await;
    let (status, content_type, body) =
        exchange(reqwest::Client::new().get(format!("{}/.well-known/agent-card.json", dash.taps[0]))).await;
    assert_eq!(status, 502);
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let body = String::from_utf8(body).unwrap();
    assert!(body.starts_with("a2a-watch tap: cannot connect"), "{body}");
    assert!(!body.contains("127.0.0.1"), "no URL in it: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_off_loopback_needs_the_flag_and_is_then_shown() {
    let out = run(&["--json", "--tap", "0.0.0.0:0=http://127.0.0.1:1"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("0.0.0.0:0") && err.contains("--tap-allow-remote"), "{err}");
    let dash = Dashboard::start(&["--tap-allow-remote", "--tap", "0.0.0.0:0=http://127.0.0.1:1"]).await;
    let shown = dash.stderr.lock().unwrap().clone();
    assert!(shown.contains("not loopback"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extended_card_leads_to_the_tap_too() {
    let upstream = frame_agent(Arc::new(Notify::new())).await;
    let (_running, at, _events) = tap_in_process(&upstream, 16).await;
    for path in ["/.well-known/agent-card.json", "/extendedAgentCard"] {
        let (status, _, body) = exchange(reqwest::Client::new().get(format!("http://{at}{path}"))).await;
        assert_eq!(status, 200);
        let card: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            card["supportedInterfaces"][0]["url"],
            format!("http://{at}/rpc"),
            "{path}"
        );
    }
}

/// The dashboard on screen, as a person runs it: the planner's deploy through the tap shows on
/// the deployer's row although a2a-watch has no token for it, the tap's line is on the terminal
/// once the dashboard is gone, and nothing listens any more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_screen_the_planners_task_shows_and_quitting_stops_the_tap() {
    let agents = start_demo().await;
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = free.local_addr().unwrap();
    drop(free);
    let scratch = Scratch::new("tap");
    let tap = format!("--tap deployer={at}={}", sh_quote(agents.url("deployer")));
    let tmux = start(&tap, &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    let deadline = Instant::now() + WAIT;
    while tokio::net::TcpStream::connect(at).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the tap never listened:\n{}",
            tmux.capture(false)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let planner = format!("http://{at}");
    let (_, state) = plan(&planner, "deploy build 7 to staging", &["--token", TOKEN]).await;
    assert_eq!(state, "AUTH_REQUIRED");
    let screen = tmux.wait_for("the planner's deploy", false, |s| s.contains("◆ AUTH_REQUIRED"));
    assert!(screen.contains("deployer") && !screen.contains(TOKEN), "{screen}");
    quit_and_check_the_terminal(&tmux, &before);
    let after = tmux.capture(false);
    assert!(after.contains(&format!("point the planner at {planner}")), "{after}");
    assert!(
        tokio::net::TcpStream::connect(at).await.is_err(),
        "nothing listens at {at}"
    );
    agents.shutdown().await;
}

/// `a2a-watch demo` puts its planner behind taps, so the demo shows what a user sees with their
/// own planner: every agent's tasks come through as the planner's traffic (`"tapped": true`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_planner_works_through_taps() {
    let mut child = spawn(&["demo", "--base-port", "0", "--delay", "0.1", "--json"], &[]);
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut tapped_agents = std::collections::BTreeSet::new();
    let found = tokio::time::timeout(WAIT, async {
        while let Some(line) = out.next_line().await.unwrap() {
            let line: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not NDJSON: {line}: {e}"));
            if line["tapped"] == json!(true) {
                tapped_agents.insert(line["agent"].as_str().unwrap().to_string());
            }
            if tapped_agents.len() == 4 {
                return;
            }
        }
    })
    .await;
    assert!(found.is_ok(), "tapped tasks seen only on {tapped_agents:?}");
    child.kill().await.unwrap();
}

/// A card is held whole to be rewritten, so it is bounded as a2a-watch bounds the cards it reads
/// itself (1 MiB): a bigger one is a 502 from the tap, not memory without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_over_the_limit_is_refused_by_the_tap() {
    let huge = format!(r#"{{"name":"huge","description":"{}"}}"#, "x".repeat(2 * 1024 * 1024));
    let app = Router::new().route(
        "/.well-known/agent-card.json",
        get(move || {
            let huge = huge.clone();
            async move { ([("content-type", "application/json")], huge) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (_running, at, _events) = tap_in_process(&upstream, 16).await;
    let (status, _, body) =
        exchange(reqwest::Client::new().get(format!("http://{at}/.well-known/agent-card.json"))).await;
    assert_eq!(status, 502, "{}", String::from_utf8_lossy(&body[..body.len().min(200)]));
    assert!(String::from_utf8_lossy(&body).contains("over 1 MiB"));
}

/// The planner's credentials cross to the agent as a2a-watch's own would: a tap to plain http off
/// loopback is refused at start unless the user allowed plain http for that agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_to_plain_http_off_loopback_needs_the_user_to_allow_it() {
    let out = run(&["--json", "--tap", "127.0.0.1:0=http://192.0.2.1:9"], &[]).await;
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("plain http") && err.contains("allow-insecure-http"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
