//! Events that arrive in bursts (many frames in one read) reach the store and the `--json`
//! output in batches: every one of them, in the order each stream sent them. The real binary
//! against a small JSON-RPC agent on loopback whose streams send everything at once.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::cli::{lines, run, stderr};

const TASKS: usize = 20;
const STEPS: usize = 300;

fn status(task: &str, state: &str, text: &str, second: usize) -> Value {
    json!({"state": state, "timestamp": format!("2026-01-01T00:{:02}:{:02}Z", second / 60, second % 60),
        "message": {"messageId": format!("{task}-{text}"), "role": "ROLE_AGENT", "parts": [{"text": text}]}})
}

fn task(id: &str, state: &str, text: &str, second: usize) -> Value {
    json!({"id": id, "contextId": "c", "status": status(id, state, text, second)})
}

async fn rpc(Json(req): Json<Value>) -> Response {
    let id = &req["id"];
    let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    let task_id = req["params"]["id"].as_str().unwrap_or_default().to_string();
    match req["method"].as_str().unwrap_or_default() {
        "ListTasks" => {
            let tasks: Vec<Value> = (0..TASKS)
                .map(|n| task(&format!("t-{n}"), "TASK_STATE_WORKING", "listed", 0))
                .collect();
            Json(reply(json!({"tasks": tasks, "nextPageToken": ""}))).into_response()
        }
        "GetTask" => Json(reply(task(&task_id, "TASK_STATE_COMPLETED", "done", STEPS + 1))).into_response(),
        "SubscribeToTask" => {
            // The whole stream in one body: the client reads many frames at a time.
            let mut body = String::new();
            let mut frame = |result: Value| body.push_str(&format!("data: {}\n\n", reply(result)));
            frame(json!({"task": task(&task_id, "TASK_STATE_WORKING", "listed", 0)}));
            for step in 1..=STEPS {
                frame(json!({"statusUpdate": {"taskId": task_id, "contextId": "c",
                    "status": status(&task_id, "TASK_STATE_WORKING", &format!("step {step}"), step)}}));
            }
            frame(json!({"statusUpdate": {"taskId": task_id, "contextId": "c",
                "status": status(&task_id, "TASK_STATE_COMPLETED", "done", STEPS + 1)}}));
            ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
        }
        _ => Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})).into_response(),
    }
}

async fn card(State(rpc_url): State<String>) -> Json<Value> {
    Json(json!({
        "name": "bursty",
        "description": "sends every event at once",
        "version": "1",
        "supportedInterfaces": [{"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_prints_every_event_of_a_burst_in_stream_order() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/rpc", post(rpc))
        .with_state(format!("{url}/rpc"));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let out = run(&["--agent", &url, "--json", "--until", "all-terminal"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = lines(&out);
    for n in 0..TASKS {
        let id = format!("t-{n}");
        let texts: Vec<&str> = printed
            .iter()
            .filter(|l| l["task"] == id.as_str() && l["event"] == "status")
            .map(|l| l["text"].as_str().unwrap())
            .collect();
        let want: Vec<String> = (1..=STEPS)
            .map(|s| format!("step {s}"))
            .chain(["done".into()])
            .collect();
        assert_eq!(texts, want, "{id}: every update once, in order");
    }
    let last = printed.last().unwrap();
    assert_eq!(last["state"], "COMPLETED", "{last}");
}
