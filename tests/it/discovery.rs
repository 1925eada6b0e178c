//! Discovery of many tasks (issue 11): the engine lists a page of 100 at a time, and tasks over
//! the stream cap wait in a queue that holds each once, however many listings name them again,
//! and are all watched in turn. Against a small agent written here: JSON-RPC 1.0, real SSE.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_watch::a2a::StateClass;
use a2a_watch::store::Store;
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::engine::Watched;

const TASKS: usize = 230;

#[derive(Default)]
struct Seen {
    page_sizes: Vec<Option<u64>>,
    subscribes: HashMap<String, usize>,
    /// Tasks whose stream has ended with COMPLETED: listed so from then on.
    completed: std::collections::HashSet<String>,
    /// Never answer for the second page of a listing.
    hang_on_second_page: bool,
    /// Refuse the first request for a second page.
    fail_second_page_once: bool,
    /// Each ListTasks call's statusTimestampAfter, and whether it asked for a later page.
    listings: Vec<(Option<String>, bool)>,
}

type Agent = Arc<Mutex<Seen>>;

fn id(n: usize) -> String {
    format!("task-{n:04}")
}

fn task(id: &str, state: &str) -> Value {
    json!({"id": id, "contextId": "ctx", "status": {"state": state, "timestamp": "2026-01-05T00:00:00Z"}})
}

async fn rpc(State(agent): State<Agent>, body: String) -> Response {
    let v: Value = serde_json::from_str(&body).unwrap();
    let reply = |result: Value| axum::Json(json!({"jsonrpc": "2.0", "id": v["id"], "result": result}));
    let params = &v["params"];
    let later_page = v["method"] == "ListTasks" && params["pageToken"].as_str().is_some_and(|t| !t.is_empty());
    if later_page && agent.lock().unwrap().hang_on_second_page {
        return futures::future::pending().await;
    }
    let mut seen = agent.lock().unwrap();
    match v["method"].as_str().unwrap_or_default() {
        "ListTasks" if later_page && std::mem::take(&mut seen.fail_second_page_once) => {
            seen.listings
                .push((params["statusTimestampAfter"].as_str().map(str::to_string), true));
            axum::Json(json!({"jsonrpc": "2.0", "id": v["id"], "error": {"code": -32603, "message": "busy"}}))
                .into_response()
        }
        "ListTasks" => {
            let after = params["statusTimestampAfter"].as_str().map(str::to_string);
            seen.listings.push((after, later_page));
            let size = params["pageSize"].as_u64();
            seen.page_sizes.push(size);
            let from: usize = params["pageToken"].as_str().and_then(|t| t.parse().ok()).unwrap_or(0);
            let to = (from + size.unwrap_or(50) as usize).min(TASKS);
            let tasks: Vec<Value> = (from..to)
                .map(|n| {
                    let id = id(n);
                    let state = if seen.completed.contains(&id) {
                        "TASK_STATE_COMPLETED"
                    } else {
                        "TASK_STATE_WORKING"
                    };
                    task(&id, state)
                })
                .collect();
            let next = if to < TASKS { to.to_string() } else { String::new() };
            reply(json!({"tasks": tasks, "nextPageToken": next, "pageSize": size, "totalSize": TASKS})).into_response()
        }
        "SubscribeToTask" => {
            let id = params["id"].as_str().unwrap().to_string();
            *seen.subscribes.entry(id.clone()).or_default() += 1;
            seen.completed.insert(id.clone());
            let frame = |result: Value| {
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc": "2.0", "id": v["id"], "result": result})
                )
            };
            let done = json!({"taskId": id, "contextId": "ctx",
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-05T00:00:01Z"}});
            let body = frame(json!({"task": task(&id, "TASK_STATE_WORKING")})) + &frame(json!({"statusUpdate": done}));
            ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
        }
        "GetTask" => {
            let id = params["id"].as_str().unwrap();
            reply(task(id, "TASK_STATE_COMPLETED")).into_response()
        }
        _ => axum::Json(json!({"jsonrpc": "2.0", "id": v["id"], "error": {"code": -32601, "message": "no"}}))
            .into_response(),
    }
}

/// Starts the agent; returns its URL.
async fn serve(agent: Agent) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "many", "description": "many tasks", "version": "1",
        "supportedInterfaces": [{"url": format!("{url}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route("/rpc", post(rpc))
        .with_state(agent);
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn watch(url: &str, max_streams: usize) -> Watched {
    let mut spec = AgentSpec::new(url);
    // Listings come often, so each queued task is named again by many of them.
    spec.poll_interval = Duration::from_millis(100);
    let (tx, events) = a2a_watch::event::channel(256);
    let opts = WatchOptions {
        max_streams,
        ..WatchOptions::default()
    };
    Watched {
        store: Store::new([(None, url.to_string())]),
        events,
        engine: Engine::start(vec![spec], opts, tx),
    }
}

/// The agent, scripted by `seen`, and the engine watching it with `max_streams`.
async fn start(seen: Seen, max_streams: usize) -> (Agent, Watched) {
    let agent = Arc::new(Mutex::new(seen));
    let url = serve(agent.clone()).await;
    (agent, watch(&url, max_streams))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_over_the_cap_are_queued_once_and_all_watched_in_turn() {
    let (agent, mut w) = start(Seen::default(), 3).await;
    w.until("every task completed", |s| {
        s.len() == TASKS && s.tasks().all(|t| t.class() == StateClass::Terminal)
    })
    .await;
    w.engine.shutdown().await;

    let seen = agent.lock().unwrap();
    assert!(
        seen.page_sizes.len() > 3,
        "listed again while tasks waited: {:?}",
        seen.page_sizes
    );
    assert!(seen.page_sizes.iter().all(|s| *s == Some(100)), "{:?}", seen.page_sizes);
    assert_eq!(seen.subscribes.len(), TASKS, "every task was watched");
    let twice: Vec<_> = seen.subscribes.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "subscribed more than once: {twice:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_page_reaches_the_store_before_the_next_page_comes() {
    let (_agent, mut w) = start(
        Seen {
            hang_on_second_page: true,
            ..Seen::default()
        },
        1,
    )
    .await;
    w.until("the first page's tasks", |s| s.len() >= 100).await;
    assert_eq!(w.store.len(), 100, "the first page, and nothing of the second");
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_that_fails_part_way_asks_again_for_everything_it_missed() {
    let (agent, mut w) = start(
        Seen {
            fail_second_page_once: true,
            ..Seen::default()
        },
        1,
    )
    .await;
    w.until("every task listed", |s| s.len() == TASKS).await;
    w.engine.shutdown().await;
    let seen = agent.lock().unwrap();
    // The first listing read page 1, then failed; the next first page is the retry.
    let retry = seen.listings.iter().skip(2).find(|(_, later)| !later);
    assert_eq!(
        retry.map(|(after, _)| after.clone()),
        Some(None),
        "the retry must not skip what the failed pages held: {:?}",
        seen.listings
    );
}
