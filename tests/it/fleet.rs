//! A fleet on one screen (issue 23), through the real binary in tmux at 80x24: fifty agents in
//! three groups, served by one server written here on fifty loopback ports (two of them closed,
//! three answering 401). The strip says what matters of them, `A` lists them all with their
//! counts, and ⏎ on one narrows the task table to its tasks.

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::security::card;
use crate::tui::{Scratch, quit_and_check_the_terminal, start_sized};

/// Each group and how many agents it has, in the order the config names them.
const GROUPS: [(&str, usize); 3] = [("payments", 20), ("search", 18), ("ops", 12)];
/// Agents whose port is closed, and agents that answer every A2A call 401.
const CLOSED: [usize; 2] = [6, 31];
const LOCKED: [usize; 3] = [15, 39, 44];

fn names() -> Vec<(String, &'static str)> {
    (GROUPS.iter())
        .flat_map(|(group, n)| (1..=*n).map(move |i| (format!("{group}-{i:02}"), *group)))
        .collect()
}

/// Agent `i`'s tasks: one done, and a question for every tenth.
fn tasks(name: &str, i: usize) -> Vec<Value> {
    let mut tasks = vec![json!({"id": format!("{name}-done"), "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-03T07:00:00Z"}})];
    if i % 10 == 2 {
        tasks.push(json!({"id": format!("{name}-question"), "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-12-03T07:00:00Z",
                "message": {"messageId": format!("{name}-m"), "role": "ROLE_AGENT", "parts": [{"text": "Go ahead?"}]}}}));
    }
    tasks
}

/// What agent `i` answers: its card, ListTasks and GetTask from `tasks`, and a subscription that
/// sends the task and stays open; 401 to any call for the locked ones.
async fn answer(request: Request, ports: Vec<u16>) -> Response {
    let port = (request.headers().get(header::HOST))
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.rsplit(':').next())
        .and_then(|p| p.parse::<u16>().ok());
    let Some(i) = ports.iter().position(|p| Some(*p) == port) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let (name, _) = &names()[i];
    if request.uri().path().starts_with("/.well-known/") {
        return axum::Json(card(name, json!({}))).into_response();
    }
    if LOCKED.contains(&i) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let call: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let tasks = tasks(name, i);
    let task = |id: &Value| tasks.iter().find(|t| t["id"] == *id).cloned();
    let result = match call["method"].as_str().unwrap_or_default() {
        "ListTasks" => json!({"tasks": tasks, "nextPageToken": ""}),
        "GetTask" => task(&call["params"]["id"]).unwrap_or(Value::Null),
        "SubscribeToTask" => {
            let frame = json!({"jsonrpc": "2.0", "id": call["id"], "result": {"task": task(&call["params"]["id"])}});
            let body = futures::stream::once(async move { Ok::<_, Infallible>(format!("data: {frame}\n\n")) })
                .chain(futures::stream::pending());
            return ([(header::CONTENT_TYPE, "text/event-stream")], Body::from_stream(body)).into_response();
        }
        _ => {
            let error = json!({"code": -32601, "message": "not here"});
            return axum::Json(json!({"jsonrpc": "2.0", "id": call["id"], "error": error})).into_response();
        }
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": call["id"], "result": result})).into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_agents_fit_in_the_strip_and_the_agents_view_leads_to_one_agents_tasks() {
    // One server on fifty ports; the two closed ones were bound and let go, so nothing answers.
    let mut listeners = Vec::new();
    for _ in 0..50 {
        listeners.push(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap());
    }
    let ports: Vec<u16> = listeners.iter().map(|l| l.local_addr().unwrap().port()).collect();
    let router = {
        let ports = ports.clone();
        axum::Router::new().fallback(move |request: Request| answer(request, ports.clone()))
    };
    let mut servers = Vec::new();
    for (i, listener) in listeners.into_iter().enumerate() {
        if CLOSED.contains(&i) {
            continue;
        }
        let router = router.clone();
        servers.push(tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        }));
    }
    let scratch = Scratch::new("fleet");
    let config = scratch.0.join("fleet.toml");
    let entries: String = (names().iter().zip(&ports))
        .map(|((name, group), port)| {
            let url = format!("http://{}", SocketAddr::from(([127, 0, 0, 1], *port)));
            format!("[[agent]]\nname = \"{name}\"\nurl = \"{url}\"\ngroup = \"{group}\"\n\n")
        })
        .collect();
    // No answer box opens by itself over the keys this test types.
    std::fs::write(&config, format!("auto_popup = false\n\n{entries}")).unwrap();

    let tmux = start_sized(&format!("--config {}", config.display()), &scratch, &[], 80, 24);
    let before = tmux.pane("#{alternate_on}");
    // A closed port shows as unreachable, then as reconnecting from its second attempt on.
    tmux.wait_for("the strip's summary", false, |screen| {
        let strip = screen.lines().nth(1).unwrap_or_default();
        strip.contains("50 agents · 2 reconnecting · 3 unauthorized · A all") && screen.contains("◆ 5 waiting")
    });

    tmux.send_keys("A");
    let screen = tmux.wait_for("the agents view", false, |screen| {
        screen.contains("50 agents by needs attention") && screen.contains("payments 20 ✖1 ⊘1 ◆2")
    });
    // Needs attention first in each group: the closed port, then the locked, then the waiting.
    let rows: Vec<&str> = (screen.lines())
        .filter_map(|l| {
            l.trim_start_matches('│')
                .trim_start_matches('▶')
                .split_whitespace()
                .next()
        })
        .filter(|w| w.starts_with("payments-"))
        .take(3)
        .collect();
    assert_eq!(rows, ["payments-07", "payments-16", "payments-03"], "{screen}");

    // ⏎ on one agent: the table of its tasks alone.
    tmux.send_keys("/");
    tmux.send_keys("agent:search-03");
    tmux.send_keys("Enter");
    tmux.wait_for("the view narrowed to one agent", false, |screen| {
        screen.contains("1 of 50 agents")
    });
    tmux.send_keys("Enter");
    let screen = tmux.wait_for("the table of search-03's tasks", false, |screen| {
        screen.contains("filter: agent:search-03") && screen.contains("INPUT_REQUIRED")
    });
    let table: Vec<&str> = (screen.lines())
        .filter(|l| l.starts_with('│') && (l.contains("COMPLETED") || l.contains("INPUT_REQUIRED")))
        .collect();
    assert_eq!(table.len(), 2, "its question and its done task alone:\n{screen}");
    assert!(table.iter().all(|row| row.contains("search-03")), "{screen}");
    quit_and_check_the_terminal(&tmux, &before);
    drop(tmux);
    for server in servers {
        server.abort();
    }
}
