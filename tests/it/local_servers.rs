//! a2a-watch's own servers against a peer that holds connections, a dual-stack listener and
//! request targets that are not paths (issue 20, review). Another peer is another loopback
//! address (all of 127/8 is loopback on Linux), bound as the client's source; requests go over
//! raw sockets, as an attacker sends them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_watch::a2a::Binding;
use a2a_watch::event::{self, Event};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::hostile_servers::{
    WAIT, card_under, closed_between, connect_from, dashboard, get_request, next_event, push_taking_agent, raw,
    raw_over, recording_agent, status_of, tap_in_front_of,
};
use crate::scenarios::connect;

const HOSTILE: [u8; 4] = [127, 0, 0, 2];

/// `n` connections from `source`, each with `head` sent (a request head not yet whole).
async fn hold(source: [u8; 4], at: SocketAddr, n: usize, head: &str) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        let mut stream = connect_from(source, at).await;
        stream.write_all(head.as_bytes()).await.unwrap();
        held.push(stream);
    }
    // Accepted, not merely queued by the kernel.
    tokio::time::sleep(Duration::from_millis(300)).await;
    held
}

/// The push receiver serving agent 0, registered for task `t-1`: where it listens, the token
/// the agent was given, and the receiver's events.
async fn push_receiver() -> (SocketAddr, String, event::Receiver) {
    let (configs, mut given) = mpsc::unbounded_channel();
    let url = push_taking_agent(configs).await;
    let push = crate::push::loopback_receiver().await;
    let client = Arc::new(connect(&url, Binding::JsonRpc, None).await);
    push.register(0, &client, "t-1").await.expect("registered");
    let config = given.recv().await.expect("the agent got a config");
    let token = token_in(&config).expect("the config holds a token");
    let (tx, events) = event::channel(64);
    let at = push.local_addr();
    tokio::spawn(push.serve(tx));
    (at, token, events)
}

fn token_in(config: &Value) -> Option<String> {
    match config {
        Value::Object(fields) => (fields.get("token").and_then(Value::as_str).map(str::to_string))
            .or_else(|| fields.values().find_map(token_in)),
        _ => None,
    }
}

/// A delivery for task `t-1` with `token`, its body `Content-Length` long.
fn delivery_head(at: SocketAddr, token: &str, length: usize) -> String {
    format!(
        "POST /push/0 HTTP/1.1\r\nHost: {at}\r\nX-A2A-Notification-Token: {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {length}\r\nConnection: close\r\n\r\n"
    )
}

fn delivery_body() -> String {
    json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}})
        .to_string()
}

/// One peer holding every place it can with half-sent heads holds only its own share: a
/// delivery from another address is still applied, and the peer's own requests past its share
/// are answered 503 without counting as the receiver being busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_peer_cannot_keep_deliveries_out_of_the_push_receiver() {
    let (at, token, mut events) = push_receiver().await;
    let _held = hold(HOSTILE, at, 64, "POST /push/0 HTTP/1.1\r\nX-Slow: ").await;
    let whole = format!("POST /push/0 HTTP/1.1\r\nHost: {at}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}");
    let answer = raw_over(connect_from(HOSTILE, at).await, &whole).await;
    assert_eq!(status_of(&answer), 503, "{answer}");
    let body = delivery_body();
    let delivered = raw(at, &format!("{}{body}", delivery_head(at, &token, body.len()))).await;
    assert_eq!(status_of(&delivered), 200, "{delivered}");
    let applied = next_event(&mut events).await;
    assert!(
        matches!(applied, Event::Update { agent: 0, .. }),
        "the delivery, and no busy count before it: {applied:?}"
    );
}

/// Agents send a delivery whole: a head not sent within 3 s is cut off (the tap allows 10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_receiver_cuts_off_a_half_sent_head_within_seconds() {
    let (at, _token, _events) = push_receiver().await;
    let mut half_sent = TcpStream::connect(at).await.unwrap();
    half_sent.write_all(b"POST /push/0 HTTP/1.1\r\nX-Slow: ").await.unwrap();
    let started = Instant::now();
    closed_between(&mut half_sent, started, Duration::from_secs(2), Duration::from_secs(7)).await;
}

/// A delivery is one small request: a connection still sending its body after 15 s is closed,
/// even with the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_connection_is_closed_after_its_time_whatever_it_sends() {
    let (at, token, _events) = push_receiver().await;
    let stream = TcpStream::connect(at).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    write
        .write_all(delivery_head(at, &token, 1000).as_bytes())
        .await
        .unwrap();
    let started = Instant::now();
    let trickle = tokio::spawn(async move {
        // A byte every half second: 1000 of them would take over 8 minutes.
        while write.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
    closed_between(&mut read, started, Duration::from_secs(10), Duration::from_secs(25)).await;
    trickle.abort();
}

/// The tap too: one address holds at most its share, and a planner elsewhere is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_peer_cannot_take_every_place_at_the_tap() {
    let (upstream, _seen) = recording_agent(|base| card_under(base, false)).await;
    let (_tap, at, _events) = tap_in_front_of(&upstream, false).await;
    let _held = hold(
        HOSTILE,
        at,
        64,
        &format!("GET /tasks HTTP/1.1\r\nHost: {at}\r\nX-Slow: "),
    )
    .await;
    let answer = raw(at, &get_request("/tasks", &at.to_string(), "")).await;
    assert_eq!(status_of(&answer), 200, "{answer}");
}

/// A tap on `[::]` (dual-stack) reached at 127.0.0.1: the request is its own, not a foreign
/// Host (the address it came in on is `::ffff:127.0.0.1`), and the card names 127.0.0.1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dual_stack_tap_serves_its_ipv4_loopback_clients() {
    let probe = match std::net::TcpListener::bind("[::]:0") {
        Ok(probe) => probe,
        Err(e) => {
            eprintln!("skipped: IPv6 is unavailable on this machine ({e})");
            return;
        }
    };
    if std::net::TcpStream::connect(("127.0.0.1", probe.local_addr().unwrap().port())).is_err() {
        eprintln!("skipped: [::] is IPv6-only on this machine (net.ipv6.bindv6only)");
        return;
    }
    drop(probe);
    let (upstream, seen) = recording_agent(|base| card_under(base, false)).await;
    let tap_arg = format!("[::]:0={upstream}");
    let (_child, listening, _, _lines) = dashboard(&["--tap-allow-remote", "--tap", &tap_arg]).await;
    let at = SocketAddr::from(([127, 0, 0, 1], listening.port()));
    let answer = raw(at, &get_request("/tasks", &at.to_string(), "")).await;
    assert_eq!(status_of(&answer), 200, "{answer}");
    // a2a-watch's own calls go to the agent directly; this one came through the tap.
    assert!(seen.lock().unwrap().iter().any(|r| r == "GET /a2a/tasks"));
    let card = raw(at, &get_request("/.well-known/agent-card.json", &at.to_string(), "")).await;
    let body: Value = serde_json::from_str(card.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["supportedInterfaces"][0]["url"], format!("http://{at}/rpc"));
}

/// Only a path goes under the agent's prefix: `OPTIONS *`, CONNECT and a doubly encoded path
/// are refused (400) before anything is sent with the planner's credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_targets_that_are_not_paths_are_refused_before_anything_is_sent() {
    let (upstream, seen) = recording_agent(|base| card_under(base, false)).await;
    let (_tap, at, _events) = tap_in_front_of(&upstream, false).await;
    let connect = format!("CONNECT {at} HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer planner\r\n\r\n");
    let mut tunnel = TcpStream::connect(at).await.unwrap();
    tunnel.write_all(connect.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(WAIT, tunnel.read_exact(&mut head))
        .await
        .expect("answered")
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 400", "CONNECT");
    for target in ["*", "/%252e%252e/admin", "/a2a%25"] {
        let request = format!(
            "OPTIONS {target} HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer planner\r\nConnection: close\r\n\r\n"
        );
        let answer = raw(at, &request).await;
        assert_eq!(status_of(&answer), 400, "{target}: {answer}");
    }
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new(), "nothing reached the agent");
}
