//! a2a-watch's own servers against hostile requests (issue 20): the tap and the demo's approval
//! page refuse paths that climb out of the agent's prefix, foreign `Host` and `Origin` headers
//! (a page in the user's browser, DNS rebinding); the tap and the push receiver cut off a
//! half-sent request head and answer 503 past their connection cap, counted on the agent's
//! line; the tap streams a planner's body on rather than holding it, and leaves a signed card
//! as it was signed unless told to strip it; the push receiver checks its token before it reads
//! a body. Requests that an HTTP client would tidy up (dot segments, a foreign Host) go over raw
//! sockets, as an attacker sends them.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_watch::a2a::Binding;
use a2a_watch::event::{self, Event, LocalServer, SignedCardAtTap};
use a2a_watch::tap::Taps;
use a2a_watch::watch::AgentSpec;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::cli::spawn;
use crate::demo_client::{TOKEN, start_demo};
use crate::scenarios::{connect, message};

pub(crate) const WAIT: Duration = Duration::from_secs(20);
const PLANNER_AUTH: &str = "Bearer planner-s3cret";

/// Sends `request` as it is written and reads the whole answer (the server closes after it:
/// every request here says `Connection: close`).
pub(crate) async fn raw(at: SocketAddr, request: &str) -> String {
    raw_over(TcpStream::connect(at).await.expect("connects"), request).await
}

/// `raw` over a connection already made.
pub(crate) async fn raw_over(mut stream: TcpStream, request: &str) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

pub(crate) fn status_of(answer: &str) -> u16 {
    answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A GET of `path` with `host`, the planner's credential and any `extra` header lines.
pub(crate) fn get_request(path: &str, host: &str, extra: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {PLANNER_AUTH}\r\n{extra}Connection: close\r\n\r\n")
}

/// An agent under `/a2a` that records every request that reaches it (`METHOD path`), and serves
/// `card` (its interface URLs under `/a2a`) at the well-known path.
pub(crate) async fn recording_agent(
    card: impl Fn(&str) -> Value + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/a2a", listener.local_addr().unwrap());
    let card = card(&base);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = seen.clone();
    let app = Router::new()
        .route(
            "/a2a/.well-known/agent-card.json",
            get(move || async move { axum::Json(card) }),
        )
        .fallback(move |req: Request| {
            let recorded = recorded.clone();
            async move {
                recorded
                    .lock()
                    .unwrap()
                    .push(format!("{} {}", req.method(), req.uri().path()));
                "{}"
            }
        });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

pub(crate) fn card_under(base: &str, signed: bool) -> Value {
    let mut card = json!({
        "name": "signer",
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    });
    if signed {
        card["signatures"] = json!([{"protected": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0", "signature": "c2lnbmVk"}]);
    }
    card
}

/// The library's tap in front of `upstream`, its events on a channel.
pub(crate) async fn tap_in_front_of(
    upstream: &str,
    strip_signatures: bool,
) -> (a2a_watch::tap::Running, SocketAddr, event::Receiver) {
    let mut spec = AgentSpec::new(upstream);
    spec.tap = Some("127.0.0.1:0".parse().unwrap());
    spec.tap_strip_signatures = strip_signatures;
    let taps = Taps::bind(&[spec]).await.expect("binds");
    let (_, at) = taps.addresses()[0];
    let (tx, rx) = event::channel(64);
    (taps.start(tx), at, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_climbs_out_of_the_agents_prefix_is_refused_before_anything_is_sent() {
    let (upstream, seen) = recording_agent(|base| card_under(base, false)).await;
    let (_tap, at, _events) = tap_in_front_of(&upstream, false).await;
    for path in [
        "/../admin",
        "/%2e%2e/admin",
        "/%2E%2E/admin",
        "/x/%2e%2E/%2e%2e/admin",
        "/..%2fadmin",
    ] {
        let answer = raw(at, &get_request(path, &at.to_string(), "")).await;
        assert_eq!(status_of(&answer), 400, "{path}: {answer}");
    }
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new(), "nothing reached the agent");
    let answer = raw(at, &get_request("/tasks", &at.to_string(), "")).await;
    assert_eq!(status_of(&answer), 200, "{answer}");
    assert_eq!(*seen.lock().unwrap(), ["GET /a2a/tasks"], "a plain path goes on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_or_origin_is_refused_and_card_urls_name_the_listening_address() {
    let (upstream, seen) = recording_agent(|base| card_under(base, false)).await;
    let (_tap, at, _events) = tap_in_front_of(&upstream, false).await;
    let port = at.port();
    // DNS rebinding: the page's own name, resolved to 127.0.0.1.
    let rebound = raw(at, &get_request("/tasks", &format!("rebound.example:{port}"), "")).await;
    assert_eq!(status_of(&rebound), 403, "{rebound}");
    // A page in the user's browser posting a simple (text/plain) request through the tap.
    let simple = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: https://evil.example\r\nContent-Type: text/plain\r\n\
         Content-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    let from_page = raw(at, &simple).await;
    assert_eq!(status_of(&from_page), 403, "{from_page}");
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new(), "nothing reached the agent");
    // localhost is the tap too, but the card names where the tap listens, not what Host says.
    let card = raw(
        at,
        &get_request("/.well-known/agent-card.json", &format!("localhost:{port}"), ""),
    )
    .await;
    assert_eq!(status_of(&card), 200, "{card}");
    let body: Value = serde_json::from_str(card.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["supportedInterfaces"][0]["url"], format!("http://{at}/rpc"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_page_refuses_a_rebound_host_even_with_a_matching_origin() {
    let agents = start_demo().await;
    let deployer = agents.url("deployer");
    let client = connect(deployer, Binding::JsonRpc, Some(TOKEN)).await;
    let a2a_watch::a2a::StreamResponse::Task(task) =
        client.send_message(&message("deploy 1 to staging")).await.unwrap()
    else {
        panic!("a task")
    };
    let at: SocketAddr = deployer.trim_start_matches("http://").parse().unwrap();
    let port = at.port();
    // The browser's Origin matches its Host: both the rebound name. Only the Host rule tells.
    let post = format!(
        "POST /approve/{} HTTP/1.1\r\nHost: rebound.example:{port}\r\nOrigin: http://rebound.example:{port}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n",
        task.id
    );
    let answer = raw(at, &post).await;
    assert_eq!(status_of(&answer), 403, "{answer}");
    let page = raw(
        at,
        &format!(
            "GET /approve/{} HTTP/1.1\r\nHost: rebound.example:{port}\r\nConnection: close\r\n\r\n",
            task.id
        ),
    )
    .await;
    assert_eq!(status_of(&page), 403, "the page is not shown to a rebound name either");
    let waiting = client.get_task(&task.id, None).await.unwrap();
    assert_eq!(
        waiting.status.state,
        a2a_watch::a2a::TaskState::AuthRequired,
        "not approved"
    );
    let own = format!(
        "POST /approve/{} HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:{port}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n",
        task.id
    );
    assert_eq!(status_of(&raw(at, &own).await), 200, "its own page approves");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_request_head_is_cut_off() {
    let (upstream, _seen) = recording_agent(|base| card_under(base, false)).await;
    let (_tap, at, _events) = tap_in_front_of(&upstream, false).await;
    let mut half_sent = TcpStream::connect(at).await.unwrap();
    half_sent
        .write_all(format!("GET /tasks HTTP/1.1\r\nHost: {at}\r\nX-Slow: ").as_bytes())
        .await
        .unwrap();
    // A connection that sends nothing at all holds a place too.
    let mut silent = TcpStream::connect(at).await.unwrap();
    let started = Instant::now();
    for stream in [&mut half_sent, &mut silent] {
        closed_between(stream, started, Duration::from_secs(5), Duration::from_secs(30)).await;
    }
}

/// Waits for the server to close `stream`: `since` then, by `latest`, and not before `earliest`
/// (the client had its time).
pub(crate) async fn closed_between(
    stream: &mut (impl AsyncRead + Unpin),
    since: Instant,
    earliest: Duration,
    latest: Duration,
) {
    let mut rest = Vec::new();
    let closed = tokio::time::timeout_at((since + latest).into(), stream.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "still open after {latest:?}");
    let after = since.elapsed();
    assert!(
        after >= earliest,
        "closed after {after:?}, before the client had {earliest:?}"
    );
}

/// The planner's body reaches the agent as it is sent: the agent has its first half before
/// the planner sends the second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planners_body_streams_on_rather_than_waiting_whole_in_the_tap() {
    let (first, mut got_first) = mpsc::unbounded_channel();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new().route(
        "/upload",
        post(move |body: Body| async move {
            let mut chunks = body.into_data_stream();
            let mut whole = Vec::new();
            while let Some(Ok(chunk)) = chunks.next().await {
                whole.extend_from_slice(&chunk);
                let _ = first.send(());
            }
            whole.len().to_string()
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (_tap, at, _events) = tap_in_front_of(&upstream, false).await;
    let mut stream = TcpStream::connect(at).await.unwrap();
    let head =
        format!("POST /upload HTTP/1.1\r\nHost: {at}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(b"5\r\nhello\r\n").await.unwrap();
    tokio::time::timeout(WAIT, got_first.recv())
        .await
        .expect("the agent had the first chunk while the planner still held the rest");
    stream.write_all(b"6\r\n world\r\n0\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("11"), "{answer}");
}

async fn card_bytes(base: &str) -> bytes::Bytes {
    let card = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap();
    card.bytes().await.unwrap()
}

pub(crate) async fn next_event(events: &mut event::Receiver) -> Event {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("an event")
        .expect("open")
}

/// What the tap said of a signed card, if `event` is that.
fn card_said(event: Event) -> Option<SignedCardAtTap> {
    match event {
        Event::TapSignedCard { agent: 0, card } => Some(card),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_card_passes_unchanged_unless_the_tap_strips_its_signatures() {
    let (upstream, _seen) = recording_agent(|base| card_under(base, true)).await;
    let direct = card_bytes(&upstream).await;
    let (_tap, at, mut events) = tap_in_front_of(&upstream, false).await;
    let through = card_bytes(&format!("http://{at}")).await;
    assert_eq!(through, direct, "byte for byte: its signatures still hold");
    assert_eq!(
        card_said(next_event(&mut events).await),
        Some(SignedCardAtTap::PassedThrough)
    );
    let (_tap, at, mut events) = tap_in_front_of(&upstream, true).await;
    let stripped: Value = serde_json::from_slice(&card_bytes(&format!("http://{at}")).await).unwrap();
    assert_eq!(stripped["supportedInterfaces"][0]["url"], format!("http://{at}/rpc"));
    assert!(stripped.get("signatures").is_none(), "{stripped}");
    assert_eq!(
        card_said(next_event(&mut events).await),
        Some(SignedCardAtTap::Stripped)
    );
}

/// A connection to `at` from `source`, a loopback address of its own (all of 127/8 is loopback
/// on Linux), so that it counts as another peer.
pub(crate) async fn connect_from(source: [u8; 4], at: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((source, 0))).unwrap();
    socket.connect(at).await.expect("connects")
}

/// Holds `n` connections open, their request heads not yet sent, 8 from each of as many
/// loopback addresses as that takes (no peer over its own cap).
pub(crate) async fn occupy(at: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for i in 0..n {
        held.push(connect_from([127, 0, 1, 1 + (i / 8) as u8], at).await);
    }
    // Accepted, not merely queued by the kernel: a fixed wait was once too short under load.
    let deadline = tokio::time::Instant::now() + WAIT;
    while accept_queue(at) != Some(0) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    held
}

/// How many connections wait in the kernel's accept queue of the IPv4 socket listening at `at`:
/// a listening socket's `rx_queue` in /proc/net/tcp (Linux, proc(5)).
fn accept_queue(at: SocketAddr) -> Option<u64> {
    const LISTEN: &str = "0A";
    let SocketAddr::V4(v4) = at else { return None };
    let local = format!("{:08X}:{:04X}", u32::from_le_bytes(v4.ip().octets()), v4.port());
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&local.as_str()) || fields.get(3) != Some(&LISTEN) {
            return None;
        }
        let (_, rx) = fields.get(4)?.split_once(':')?;
        u64::from_str_radix(rx, 16).ok()
    })
}

/// `a2a-watch --json` with `args` and one tap: where the tap listens, the line that says so,
/// and the agent lines as they come.
pub(crate) async fn dashboard(
    args: &[&str],
) -> (
    tokio::process::Child,
    SocketAddr,
    String,
    mpsc::UnboundedReceiver<Value>,
) {
    let mut child = spawn(&[&["--json"], args].concat(), &[]);
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let (at, said) = loop {
        let line = tokio::time::timeout(WAIT, err.next_line())
            .await
            .unwrap()
            .unwrap()
            .expect("the tap starts");
        if let Some((_, rest)) = line.split_once("point the planner at http://") {
            break (rest.split_whitespace().next().unwrap().parse().unwrap(), line);
        }
    };
    let (lines_tx, lines) = mpsc::unbounded_channel();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = out.next_line().await {
            let _ = lines_tx.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    (child, at, said, lines)
}

/// Waits for an agent line for which `wanted` holds.
pub(crate) async fn agent_line(
    lines: &mut mpsc::UnboundedReceiver<Value>,
    what: &str,
    wanted: impl Fn(&Value) -> bool,
) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let line = tokio::time::timeout_at(deadline, lines.recv())
            .await
            .unwrap_or_else(|_| panic!("no agent line said {what}"))
            .expect("a2a-watch runs");
        if wanted(&line) {
            return;
        }
    }
}

/// `--tap-strip-signatures`, and `strip_signatures` in a `[[tap]]`: the card comes through
/// pointed at the tap without its signatures, and both the start-up line and the agent's line
/// say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stripping_signatures_is_asked_for_by_flag_or_config_and_said() {
    let (upstream, _seen) = recording_agent(|base| card_under(base, true)).await;
    let config = std::env::temp_dir().join(format!("a2a-watch-strip-{}.toml", uuid::Uuid::new_v4()));
    let table = format!("[[tap]]\nlisten = \"127.0.0.1:0\"\nupstream = \"{upstream}\"\nstrip_signatures = true\n");
    std::fs::write(&config, table).unwrap();
    let tap_arg = format!("127.0.0.1:0={upstream}");
    let by_flag = ["--tap", &tap_arg, "--tap-strip-signatures"];
    let by_config = ["--config", config.to_str().unwrap()];
    for args in [&by_flag[..], &by_config[..]] {
        let (_child, at, said, mut lines) = dashboard(args).await;
        assert!(said.contains("a signed card loses its signatures"), "{args:?}: {said}");
        let card: Value = serde_json::from_slice(&card_bytes(&format!("http://{at}")).await).unwrap();
        assert!(card.get("signatures").is_none(), "{args:?}: {card}");
        assert_eq!(card["supportedInterfaces"][0]["url"], format!("http://{at}/rpc"));
        agent_line(&mut lines, "stripped", |l| l["tap_signed_card"] == "stripped").await;
    }
    let _ = std::fs::remove_file(config);
}

/// The real binary: past 64 connections the tap answers 503 and its agent's line counts it;
/// a signed card it passed on unchanged is said on the same line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_counts_503s_and_says_a_signed_card_went_around_the_tap() {
    let (upstream, _seen) = recording_agent(|base| card_under(base, true)).await;
    let tap_arg = format!("127.0.0.1:0={upstream}");
    let (_child, at, _, mut lines) = dashboard(&["--tap", &tap_arg]).await;
    let card = raw(at, &get_request("/.well-known/agent-card.json", &at.to_string(), "")).await;
    assert_eq!(status_of(&card), 200, "{card}");
    let began = std::time::Instant::now();
    let _held = occupy(at, 64).await;
    // The kernel may still be handing the last of the 64 to the tap (twice in full runs under
    // load, with its accept queue already empty): a request that came first is served and
    // closed, taking no place; while the 64 are held the next ones must be refused.
    let deadline = tokio::time::Instant::now() + WAIT;
    let over = loop {
        let over = raw(at, &get_request("/tasks", &at.to_string(), "")).await;
        if status_of(&over) == 503 || tokio::time::Instant::now() > deadline {
            break over;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let took = began.elapsed();
    assert_eq!(
        status_of(&over),
        503,
        "{over}\n(64 held within {took:?}, accept queue {:?})",
        accept_queue(at)
    );
    agent_line(&mut lines, "the 503 and the signed card", |l| {
        l["tap_busy"] == 1 && l["tap_signed_card"] == "passed_through"
    })
    .await;
}

/// An A2A agent (JSON-RPC) whose card offers push notifications and that takes every push
/// config it is given, handing each on to `configs`.
pub(crate) async fn push_taking_agent(configs: mpsc::UnboundedSender<Value>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "hooked", "description": "", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"pushNotifications": true},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    });
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || async move { axum::Json(card) }),
        )
        .route(
            "/",
            post(move |axum::Json(req): axum::Json<Value>| async move {
                let _ = configs.send(req["params"].clone());
                axum::Json(json!({"jsonrpc": "2.0", "id": req["id"], "result": req["params"]}))
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// The push receiver refuses a delivery without its token before reading the body (a body
/// announced and never sent does not hold the answer), and answers 503 past its cap, counted
/// on the row of the agent the path names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_receiver_checks_its_token_before_the_body_and_caps_connections() {
    let (configs, mut given) = mpsc::unbounded_channel();
    let url = push_taking_agent(configs).await;
    let push = crate::push::loopback_receiver().await;
    let client = Arc::new(connect(&url, Binding::JsonRpc, None).await);
    push.register(0, &client, "t-1").await.expect("registered");
    given.recv().await.expect("the agent got a config");
    let at = push.local_addr();
    let (tx, mut events) = event::channel(64);
    tokio::spawn(push.clone().serve(tx));
    let unsent_body = format!(
        "POST /push/0 HTTP/1.1\r\nHost: {at}\r\nX-A2A-Notification-Token: guessed\r\nContent-Type: application/json\r\n\
         Content-Length: 1000000\r\n\r\n"
    );
    let mut stream = TcpStream::connect(at).await.unwrap();
    stream.write_all(unsent_body.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut head))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 401");
    let refused = next_event(&mut events).await;
    assert!(matches!(refused, Event::PushRefused { agent: 0 }), "{refused:?}");
    drop(stream);
    let _held = occupy(at, 64).await;
    let over = format!("POST /push/0 HTTP/1.1\r\nHost: {at}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}");
    assert_eq!(status_of(&raw(at, &over).await), 503);
    let busy = next_event(&mut events).await;
    assert!(
        matches!(
            busy,
            Event::Busy {
                agent: 0,
                server: LocalServer::Push
            }
        ),
        "{busy:?}"
    );
}
