//! Terminal and pipe safety of the real binary, against a small hostile JSON-RPC agent on
//! loopback: agent text reaches stdout and stderr without one raw control character (NDJSON
//! keeps it losslessly as `\uXXXX`), a reader that closes the pipe early ends the process
//! quietly with exit 0, and a send the agent refuses is a failure (exit 1), never a success.

use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::cli::{lines, run, stderr};

/// Every trick at once: screen clear, OSC 52 clipboard write, window title, 8-bit CSI, C1 NEL,
/// DEL, a right-to-left override, an isolate, the bidi marks, a tab and a line break.
const HOSTILE: &str = "ok\u{1b}[2J\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;title\u{1b}\\\u{9b}31m\u{85}\u{7f}\
                       \u{202e}exe.txt\u{2066}\u{200f}\u{200e}\u{61c}\ttab\nnext done";
const HOSTILE_NAME: &str = "agent\u{1b}[31m\u{9b}1m\u{202e}";
const ROLE: &str = "ROLE_\u{1b}]52;c;eA==\u{7}";

/// How the agent behaves on sends.
#[derive(Clone, Copy)]
enum Agent {
    /// Answers with hostile text everywhere; `events` status updates per stream, `tasks` listed.
    Hostile { tasks: usize, events: usize },
    /// An error object (JSON-RPC error response, or the only frame of a stream).
    Refuses,
    /// A body or first frame that is not JSON.
    Garbles,
    /// A 200 with an empty body: a stream that ends with no event.
    Silent,
    /// HTTP 500 with a text body.
    Fails,
}

fn hostile_task(id: &str, state: &str) -> Value {
    json!({
        "id": id,
        "contextId": format!("ctx-{HOSTILE}"),
        "status": {"state": state, "timestamp": "2026-10-06T09:00:00Z",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": HOSTILE}]}},
        "artifacts": [{"artifactId": "a", "name": HOSTILE, "parts": [{"text": HOSTILE}, {"data": {"k": HOSTILE}}]}],
        "history": [{"messageId": "h", "role": ROLE, "parts": [{"text": HOSTILE}]}],
    })
}

fn envelope(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn refusal(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": format!("no: {HOSTILE}")}})
}

fn sse(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

async fn card(State((_, base)): State<(Agent, Arc<String>)>) -> Json<Value> {
    Json(json!({
        "name": HOSTILE_NAME,
        "description": HOSTILE,
        "version": HOSTILE,
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "extensions": [{"uri": HOSTILE}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": HOSTILE, "description": HOSTILE, "tags": []}],
    }))
}

async fn rpc(State((agent, _)): State<(Agent, Arc<String>)>, Json(req): Json<Value>) -> Response {
    let id = &req["id"];
    let method = req["method"].as_str().unwrap_or_default();
    let task_id = req["params"]["id"].as_str().unwrap_or("t-1");
    match (method, agent) {
        ("GetTask", _) => Json(envelope(id, hostile_task(task_id, "TASK_STATE_INPUT_REQUIRED"))).into_response(),
        ("ListTasks", Agent::Hostile { tasks, .. }) => {
            let tasks: Vec<Value> = (0..tasks)
                .map(|n| hostile_task(&format!("t-{n}"), "TASK_STATE_COMPLETED"))
                .collect();
            Json(envelope(id, json!({"tasks": tasks, "nextPageToken": ""}))).into_response()
        }
        ("SendMessage", Agent::Hostile { .. }) => Json(envelope(
            id,
            json!({"task": hostile_task("t-1", "TASK_STATE_COMPLETED")}),
        ))
        .into_response(),
        ("SendStreamingMessage", Agent::Hostile { events, .. }) => {
            let frame = |result: Value| format!("data: {}\n\n", envelope(id, result));
            let mut body = frame(json!({"task": hostile_task("t-1", "TASK_STATE_SUBMITTED")}));
            let update = |state: &str| {
                json!({"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": state,
                    "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": HOSTILE}]}}}})
            };
            for _ in 0..events {
                body.push_str(&frame(update("TASK_STATE_WORKING")));
            }
            body.push_str(&frame(json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c",
                "artifact": {"artifactId": "a", "name": HOSTILE, "parts": [{"text": HOSTILE}]}, "lastChunk": true}})));
            body.push_str(&frame(update("TASK_STATE_COMPLETED")));
            sse(body)
        }
        ("SendStreamingMessage", Agent::Refuses) => sse(format!("data: {}\n\n", refusal(id))),
        ("SendStreamingMessage", Agent::Garbles) => sse(format!("data: {{\"result\": {HOSTILE}\n\n")),
        ("SendStreamingMessage", Agent::Silent) => sse(String::new()),
        (_, Agent::Refuses) => Json(refusal(id)).into_response(),
        (_, Agent::Garbles) => format!("{{\"result\": {HOSTILE}").into_response(),
        (_, Agent::Silent) => String::new().into_response(),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, format!("boom {HOSTILE}")).into_response(),
    }
}

/// Starts the agent on a free loopback port; it lives as long as the test's runtime.
async fn serve(agent: Agent) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/rpc", post(rpc))
        .with_state((agent, Arc::new(base.clone())));
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// No raw control character (line breaks aside), no bidi control.
fn assert_terminal_safe(what: &str, text: &str) {
    let bad = text.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
    });
    assert!(bad.is_none(), "{what}: raw {bad:?} in {text:?}");
}

fn assert_safe_output(what: &str, out: &Output) {
    assert_terminal_safe(&format!("{what} stdout"), &String::from_utf8_lossy(&out.stdout));
    assert_terminal_safe(&format!("{what} stderr"), &stderr(out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_agent_text_comes_out_safe_and_ndjson_keeps_it_exactly() {
    let url = serve(Agent::Hostile { tasks: 3, events: 2 }).await;
    let url = url.as_str();

    for args in [vec!["get", url, "t-1"], vec!["list", url], vec!["card", url]] {
        let out = run(&args, &[]).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_safe_output(args[0], &out);
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("exe.txt") && shown.contains("done"),
            "{args:?}: text kept: {shown}"
        );
    }

    let got = run(&["get", url, "t-1", "--json"], &[]).await;
    assert_safe_output("get --json", &got);
    let task: Value = serde_json::from_slice(&got.stdout).expect("get --json is JSON");
    assert_eq!(task["status"]["message"]["parts"][0]["text"], HOSTILE);
    assert_eq!(task["history"][0]["role"], ROLE);
    assert_eq!(task["artifacts"][0]["parts"][1]["data"]["k"], HOSTILE);

    let card = run(&["card", url, "--json"], &[]).await;
    assert_safe_output("card --json", &card);
    let card: Value = serde_json::from_slice(&card.stdout).expect("card --json is JSON");
    assert_eq!(
        (&card["name"], &card["description"]),
        (&json!(HOSTILE_NAME), &json!(HOSTILE))
    );

    let listed = run(&["list", url, "--json"], &[]).await;
    assert_safe_output("list --json", &listed);
    let listed = lines(&listed);
    assert_eq!(listed.len(), 3);
    assert!(
        listed
            .iter()
            .all(|l| l["text"] == HOSTILE && l["context"] == format!("ctx-{HOSTILE}"))
    );

    for args in [
        vec!["send", url, "hi", "--follow"],
        vec!["reply", url, "t-1", "main", "--follow"],
    ] {
        let out = run(&args, &[]).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_safe_output(args[0], &out);
        let events = lines(&out);
        assert_eq!(events.last().unwrap()["state"], "COMPLETED", "{events:?}");
        assert!(events.iter().all(|l| l["text"] == HOSTILE), "{events:?}");
        let artifact = events
            .iter()
            .find(|l| l["event"] == "artifact")
            .expect("an artifact line");
        assert_eq!(artifact["artifact"]["name"], HOSTILE);
        assert_eq!(artifact["artifact"]["text"], HOSTILE);
    }
}

/// Runs the binary, reads one line of its stdout (or none), closes the pipe, and returns how it
/// ended.
async fn close_after_first_line(args: &[&str], read_first: bool) -> Output {
    let mut child = crate::cli::spawn(args, &[]);
    let stdout = child.stdout.take().unwrap();
    if read_first {
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).await.unwrap();
        assert!(!first.is_empty(), "{args:?}: no first line");
    } else {
        drop(stdout);
    }
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the binary ends once its reader is gone")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_goes_away_ends_every_command_quietly() {
    // Enough output to fill any pipe buffer, so the writes after the reader left must fail.
    let url = serve(Agent::Hostile {
        tasks: 3000,
        events: 3000,
    })
    .await;
    let url = url.as_str();
    let log = std::env::temp_dir().join(format!("a2a-watch-output-{}.log", std::process::id()));
    let log = log.to_str().unwrap();
    let cases: [(&[&str], bool); 8] = [
        (&["send", url, "hi", "--follow"], true),
        (&["list", url, "--json"], true),
        (&["list", url], true),
        (&["--agent", url, "--json", "--log-file", log], true),
        // Outputs that fit in a pipe buffer fail only if the reader left before they came.
        (&["card", url], false),
        (&["card", url, "--json"], false),
        (&["get", url, "t-1"], false),
        (&["send", url, "hi"], false),
    ];
    for (args, read_first) in cases {
        let out = close_after_first_line(args, read_first).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}: quiet");
    }
    let _ = std::fs::remove_file(log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_send_is_a_failure_with_a_clear_safe_message() {
    for (agent, says) in [
        (Agent::Refuses, "no: ok"),
        (Agent::Garbles, "cannot decode"),
        (Agent::Silent, ""),
        // The body's first line shows, whatever the client calls the failure.
        (Agent::Fails, "boom ok"),
    ] {
        let url = serve(agent).await;
        let url = url.as_str();
        for args in [
            vec!["send", url, "hi", "--follow"],
            vec!["reply", url, "t-1", "main", "--follow"],
            vec!["reply", url, "t-1", "main"],
            vec!["send", url, "hi"],
        ] {
            let out = run(&args, &[]).await;
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                out.stdout.is_empty(),
                "{args:?}: nothing on stdout, got {:?}",
                out.stdout
            );
            assert_safe_output("refusal", &out);
            assert!(
                err.starts_with("a2a-watch: ") && err.lines().count() == 1,
                "{args:?}: {err}"
            );
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
    let url = serve(Agent::Silent).await;
    let out = run(&["send", &url, "hi", "--follow"], &[]).await;
    assert!(
        stderr(&out).contains("not taken: the stream ended before any event"),
        "{}",
        stderr(&out)
    );
}
