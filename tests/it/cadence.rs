//! How often the engine lists an agent (issue 23), against small agents on loopback that count
//! their ListTasks calls: two honour `statusTimestampAfter`, one ignores it. While every live task
//! is streamed, the honest agents are listed every `streamed_list_interval` instead of every
//! `poll_interval`, incrementally; once the server closes one's stream, or the other's stream
//! skips an event, the listing is back at `poll_interval`; the agent that ignores the filter is
//! detected and listed as before, and so is an agent with no task at all.

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

/// What an agent does when its signal is notified.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Ends its first subscription.
    Closes,
    /// Sends an event two generations on (A2A 1.1, draft), the stream open.
    Skips,
    /// Ends its first subscription, and lists every task whatever `statusTimestampAfter` asks.
    IgnoresFilter,
    /// Has no task at all.
    Idle,
}

/// A subscription to `t1`: its snapshot (generation 1), then at `signal` the end of the stream
/// or an event of generation 3, then nothing; without a signal, nothing after the snapshot.
fn held_stream(call: &Call, kind: Kind, signal: Option<Arc<Notify>>) -> Out {
    let mut snapshot = json!({"task": stamped("t1", "TASK_STATE_WORKING", STAMP)});
    snapshot["task"]["generation"] = json!(1);
    let snapshot = format!("data: {}\n\n", frame(call, snapshot));
    let skipped = json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx", "generation": 3,
        "status": stamped("t1", "TASK_STATE_WORKING", STAMP)["status"]}});
    let skipped = format!("data: {}\n\n", frame(call, skipped));
    let signalled = async move {
        match signal {
            Some(signal) => signal.notified().await,
            None => std::future::pending().await,
        }
    };
    let then = move |()| match kind {
        Kind::Skips => futures::stream::iter([Ok(skipped.clone())])
            .chain(futures::stream::pending())
            .boxed(),
        Kind::Closes | Kind::IgnoresFilter | Kind::Idle => futures::stream::empty().boxed(),
    };
    let body = futures::stream::once(async move { Ok::<_, Infallible>(snapshot) })
        .chain(futures::stream::once(signalled).flat_map(then));
    Out::Reply(
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(body))
            .unwrap(),
    )
}

/// An agent with one WORKING task `t1` (and, when it ignores the filter, a finished one it lists
/// whatever `statusTimestampAfter` asks). Its first subscription does what `kind` says at
/// `signal`; the `statusTimestampAfter` of each ListTasks goes to `asked`.
async fn agent(kind: Kind, signal: Arc<Notify>, asked: Arc<Mutex<Vec<Option<String>>>>) -> (String, Fake) {
    let subscriptions = AtomicUsize::new(0);
    fake(true, move |call| match call.method.as_str() {
        "ListTasks" => {
            let since = call.params["statusTimestampAfter"].as_str().map(str::to_string);
            asked.lock().unwrap().push(since.clone());
            let since: Option<Timestamp> = since.map(|s| s.parse().unwrap());
            let live = stamped("t1", "TASK_STATE_WORKING", STAMP);
            let stamp = |t: &Value| t["status"]["timestamp"].as_str().unwrap().parse::<Timestamp>().unwrap();
            let tasks = if kind == Kind::Idle {
                vec![]
            } else if kind == Kind::IgnoresFilter {
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
            held_stream(call, kind, first.then(|| signal.clone()))
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
async fn streamed_tasks_are_listed_rarely_until_a_stream_lapses_and_an_ignored_filter_lists_at_poll() {
    let (close, skip) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let honest_asked = Arc::default();
    let (honest_url, honest) = agent(Kind::Closes, close.clone(), Arc::clone(&honest_asked)).await;
    let (gappy_url, gappy) = agent(Kind::Skips, skip.clone(), Arc::default()).await;
    let (deaf_url, deaf) = agent(Kind::IgnoresFilter, Arc::new(Notify::new()), Arc::default()).await;
    let (idle_url, idle) = agent(Kind::Idle, Arc::new(Notify::new()), Arc::default()).await;
    let specs = vec![
        spec(&honest_url, "honest"),
        spec(&gappy_url, "gappy"),
        spec(&deaf_url, "deaf"),
        spec(&idle_url, "idle"),
    ];
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
    w.until("t1 of every agent streamed", |s| {
        s.tasks().filter(|t| t.watch == Some(WatchMode::Streaming)).count() == 3
    })
    .await;
    // Calm for a whole streamed interval: from then on the honest agents are listed every second.
    w.drain(STREAMED + Duration::from_millis(300)).await;
    let from = Instant::now();
    w.drain(Duration::from_secs(2)).await;
    let to = Instant::now();
    for (name, agent) in [("honest", &honest), ("gappy", &gappy)] {
        let rare = listings(agent, from, to);
        assert!((1..=3).contains(&rare), "{rare} listings of {name} in 2 s");
    }
    let deaf_rate = listings(&deaf, from, to);
    assert!(
        deaf_rate >= 8,
        "the agent that ignores the filter is listed every {POLL:?}: {deaf_rate} listings in 2 s"
    );
    // No live task, nothing streamed: a new task there must show within the poll interval.
    let idle_rate = listings(&idle, from, to);
    assert!(
        idle_rate >= 8,
        "an agent without tasks is listed every {POLL:?}: {idle_rate} in 2 s"
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

    // One server ends its stream (the task is subscribed again), the other's stream skips a
    // generation (it stays open): both are listed at poll for a while.
    close.notify_one();
    skip.notify_one();
    let lapsed = Instant::now();
    w.drain(Duration::from_millis(800)).await;
    for (name, agent) in [("honest", &honest), ("gappy", &gappy)] {
        let fast = listings(agent, lapsed, Instant::now());
        assert!(
            fast >= 3,
            "{fast} listings of {name} in the 0.8 s after its stream lapsed"
        );
    }
    assert_eq!(honest.count("SubscribeToTask"), 2, "subscribed again");
    assert_eq!(gappy.count("SubscribeToTask"), 1, "the stream that skipped stays open");
    assert!(gappy.count("GetTask") >= 1, "the skipped events were fetched");
    for t in w.store.tasks().filter(|t| t.key.agent < 2) {
        assert_eq!(*t.state(), TaskState::Working, "a lapse says nothing of the state");
    }
    w.engine.shutdown().await;
}
