//! How often the engine lists an agent (issue 23), against two small agents on loopback that
//! count their ListTasks calls: one honours `statusTimestampAfter`, one ignores it. While every
//! live task is streamed, the honest agent is listed every `streamed_list_interval` instead of
//! every `poll_interval`, incrementally; once the server closes the stream, the listing is back at
//! `poll_interval`; the agent that ignores the filter is detected and listed as before.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_watch::a2a::TaskState;
use a2a_watch::event::WatchMode;
use a2a_watch::store::Store;
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};
use axum::body::Body;
use axum::http::header;
use axum::response::Response;
use futures::StreamExt;
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::engine::Watched;
use crate::recovery::{Call, Fake, Out, fake, frame, listing, not_found, opts, result, task};

const POLL: Duration = Duration::from_millis(100);
const STREAMED: Duration = Duration::from_secs(1);
/// The live task's status stamp; the finished one is an hour older.
const STAMP: &str = "2026-12-03T06:00:00Z";
const OLD_STAMP: &str = "2026-12-03T05:00:00Z";

fn stamped(id: &str, state: &str, at: &str) -> Value {
    let mut t = task(id, state, "");
    t["status"]["timestamp"] = json!(at);
    t
}

/// A subscription to `t1`: its snapshot, then nothing until `close` is notified (never, without).
fn held_stream(call: &Call, close: Option<Arc<Notify>>) -> Out {
    let snapshot = format!(
        "data: {}\n\n",
        frame(call, json!({"task": stamped("t1", "TASK_STATE_WORKING", STAMP)}))
    );
    let end = async move {
        match close {
            Some(close) => close.notified().await,
            None => std::future::pending().await,
        }
    };
    let body = futures::stream::once(async move { Ok::<_, Infallible>(snapshot) })
        .chain(futures::stream::once(end).filter_map(|()| async { None }));
    Out::Reply(
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(body))
            .unwrap(),
    )
}

/// An agent with one WORKING task `t1` (and, when `ignores_filter`, a finished one it lists
/// whatever `statusTimestampAfter` asks). Its first subscription ends when `close` is notified;
/// the `statusTimestampAfter` of each ListTasks goes to `asked`.
async fn agent(ignores_filter: bool, close: Arc<Notify>, asked: Arc<Mutex<Vec<Option<String>>>>) -> (String, Fake) {
    let subscriptions = AtomicUsize::new(0);
    fake(true, move |call| match call.method.as_str() {
        "ListTasks" => {
            let since = call.params["statusTimestampAfter"].as_str().map(str::to_string);
            asked.lock().unwrap().push(since.clone());
            let since: Option<Timestamp> = since.map(|s| s.parse().unwrap());
            let live = stamped("t1", "TASK_STATE_WORKING", STAMP);
            let stamp = |t: &Value| t["status"]["timestamp"].as_str().unwrap().parse::<Timestamp>().unwrap();
            let tasks = if ignores_filter {
                vec![live, stamped("t0", "TASK_STATE_COMPLETED", OLD_STAMP)]
            } else {
                [live]
                    .into_iter()
                    .filter(|t| since.is_none_or(|s| stamp(t) > s))
                    .collect()
            };
            listing(call, tasks)
        }
        "GetTask" => result(call, stamped("t1", "TASK_STATE_WORKING", STAMP)),
        "SubscribeToTask" => {
            let first = subscriptions.fetch_add(1, Ordering::SeqCst) == 0;
            held_stream(call, first.then(|| close.clone()))
        }
        _ => not_found(call),
    })
    .await
}

fn spec(url: &str, name: &str) -> AgentSpec {
    let mut spec = AgentSpec::new(url);
    spec.name = Some(name.into());
    spec.poll_interval = POLL;
    spec
}

/// ListTasks calls the agent got in `[from, to)`.
fn listings(agent: &Fake, from: Instant, to: Instant) -> usize {
    (agent.times("ListTasks").iter())
        .filter(|t| (from..to).contains(*t))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_tasks_are_listed_rarely_and_a_closed_stream_or_an_ignored_filter_lists_at_poll() {
    let close = Arc::new(Notify::new());
    let honest_asked = Arc::default();
    let (honest_url, honest) = agent(false, close.clone(), Arc::clone(&honest_asked)).await;
    let (deaf_url, deaf) = agent(true, Arc::new(Notify::new()), Arc::default()).await;
    let specs = vec![spec(&honest_url, "honest"), spec(&deaf_url, "deaf")];
    let (tx, events) = a2a_watch::event::channel(256);
    let mut w = Watched {
        store: Store::new(specs.iter().map(|s| (s.name.clone(), s.url.clone()))),
        events,
        engine: Engine::start(
            specs,
            WatchOptions {
                streamed_list_interval: STREAMED,
                ..opts()
            },
            tx,
        ),
    };
    w.until("t1 of both agents streamed", |s| {
        s.tasks().filter(|t| t.watch == Some(WatchMode::Streaming)).count() == 2
    })
    .await;
    // Calm for a whole streamed interval: from then on the honest agent is listed every second.
    w.drain(STREAMED + Duration::from_millis(300)).await;
    let from = Instant::now();
    w.drain(Duration::from_secs(2)).await;
    let to = Instant::now();
    let (rare, deaf_rate) = (listings(&honest, from, to), listings(&deaf, from, to));
    assert!((1..=3).contains(&rare), "{rare} listings of the streamed agent in 2 s");
    assert!(
        deaf_rate >= 8,
        "the agent that ignores the filter is listed every {POLL:?}: {deaf_rate} listings in 2 s"
    );
    // Incremental: after the first, each asks only for what changed after the newest stamp.
    let asked = honest_asked.lock().unwrap().clone();
    assert_eq!(asked[0], None, "the first listing is whole");
    let stamp: Timestamp = STAMP.parse().unwrap();
    // (Every 20th listing is whole again, to heal gaps.)
    let sinces: Vec<Timestamp> = asked[1..].iter().flatten().map(|s| s.parse().unwrap()).collect();
    assert!(
        sinces.len() >= asked.len() - 2 && sinces.iter().all(|s| *s == stamp),
        "{asked:?}"
    );

    // The server ends the stream: the task is subscribed again, and listed at poll for a while.
    close.notify_one();
    let closed = Instant::now();
    w.drain(Duration::from_millis(800)).await;
    let fast = listings(&honest, closed, Instant::now());
    assert!(fast >= 3, "{fast} listings in the 0.8 s after the stream closed");
    assert_eq!(honest.count("SubscribeToTask"), 2, "subscribed again");
    let t1 = w.store.tasks().find(|t| t.key.agent == 0).unwrap();
    assert_eq!(*t1.state(), TaskState::Working, "a close says nothing of the state");
    w.engine.shutdown().await;
}
