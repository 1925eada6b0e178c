//! Wire details of the demo agents that our client hides: raw HTTP with plain reqwest.

use std::time::Duration;

use a2a_watch::demo::{self, DemoAgents, DemoConfig};
use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

const TOKEN: &str = "wire-token";
const DEADLINE: Duration = Duration::from_secs(10);

async fn start() -> DemoAgents {
    let config = DemoConfig {
        base_port: 0,
        token: TOKEN.into(),
        step: Duration::from_millis(20),
    };
    demo::start(config).await.expect("the demo agents start")
}

fn rpc(id: &str, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn user_message(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// A POST with `A2A-Version: 1.0`, as every A2A request must carry.
fn post(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new().post(url).header("A2A-Version", "1.0")
}

fn get(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new().get(url).header("A2A-Version", "1.0")
}

async fn json_of(response: reqwest::Response) -> Value {
    response.json().await.expect("a JSON body")
}

/// Reads `data:` frames off an SSE body, one at a time, with a deadline on each.
struct Frames {
    response: reqwest::Response,
    buffer: String,
}

impl Frames {
    fn new(response: reqwest::Response) -> Frames {
        let kind = response.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        Frames {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame's data, or None once the server closed the stream.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some(serde_json::from_str(&data.join("\n")).expect("frame JSON"));
            }
            let chunk = tokio::time::timeout(DEADLINE, self.response.chunk())
                .await
                .expect("a frame in time")
                .expect("the body reads");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk?));
        }
    }

    async fn rest(mut self) -> Vec<Value> {
        let mut frames = Vec::new();
        while let Some(frame) = self.next().await {
            frames.push(frame);
        }
        frames
    }
}

fn reason(details: &Value) -> &str {
    details[0]["reason"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn requests_without_a2a_version_are_refused_on_both_bindings() {
    let agents = start().await;
    let base = agents.url("test-runner");
    let client = reqwest::Client::new();
    let body = rpc("v-1", "GetTask", json!({"id": "t"}));
    let response = client.post(format!("{base}/")).json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "JSON-RPC errors travel with 200");
    let reply = json_of(response).await;
    assert_eq!(reply["id"], "v-1");
    assert_eq!(reply["error"]["code"], -32009);
    assert_eq!(reason(&reply["error"]["data"]), "VERSION_NOT_SUPPORTED");

    let response = client.get(format!("{base}/rest/tasks")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let reply = json_of(response).await;
    assert_eq!(reply["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(reason(&reply["error"]["details"]), "VERSION_NOT_SUPPORTED");

    // The query-parameter form counts; the card needs no version at all.
    let response = client
        .get(format!("{base}/rest/tasks?A2A-Version=1.0"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let card = client
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), StatusCode::OK);
    agents.shutdown().await;
}

#[tokio::test]
async fn the_deployer_answers_401_with_a_challenge_before_anything_else() {
    let agents = start().await;
    let base = agents.url("deployer");
    let client = reqwest::Client::new();
    // Not even valid JSON or a version: authentication comes first.
    let response = client.post(format!("{base}/")).body("{").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], r#"Bearer realm="deployer""#);
    assert_eq!(json_of(response).await["error"]["status"], "UNAUTHENTICATED");

    let wrong = get(&format!("{base}/rest/tasks"))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let challenge = wrong.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains(r#"error="invalid_token""#), "{challenge}");

    let card = json_of(
        client
            .get(format!("{base}/.well-known/agent-card.json"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}])
    );

    let authed = post(&format!("{base}/"))
        .bearer_auth(TOKEN)
        .json(&rpc("a-1", "GetTask", json!({"id": "no-such-task"})))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(authed).await["error"]["code"], -32001);
    agents.shutdown().await;
}

#[tokio::test]
async fn rest_errors_are_google_rpc_status_bodies() {
    let agents = start().await;
    let base = agents.url("code-reviewer");
    let response = get(&format!("{base}/rest/tasks/no-such-task")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body = json_of(response).await;
    assert_eq!(body["error"]["code"], 404);
    assert_eq!(body["error"]["status"], "NOT_FOUND");
    assert!(body["error"]["message"].is_string());
    assert_eq!(
        body["error"]["details"][0],
        json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org", "metadata": {}})
    );

    let response = get(&format!("{base}/rest/tasks?pageSize=0")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = json_of(response).await;
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(reason(&body["error"]["details"]), "INVALID_PARAMS");

    let response = post(&format!("{base}/rest/message:send"))
        .body("{\"message\":")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(reason(&json_of(response).await["error"]["details"]), "INVALID_REQUEST");

    let response = post(&format!("{base}/rest/tasks/no-such-task:subscribe"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "errors before a stream are plain JSON"
    );
    assert!(
        response.headers()[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    agents.shutdown().await;
}

#[tokio::test]
async fn jsonrpc_errors_carry_their_codes_and_the_request_id() {
    let agents = start().await;
    let url = format!("{}/", agents.url("assistant"));
    let send = |body: String| async { json_of(post(&url).body(body).send().await.unwrap()).await };
    let parse = send("{".into()).await;
    assert_eq!(
        (parse["error"]["code"].clone(), parse["id"].clone()),
        (json!(-32700), Value::Null)
    );
    let cases = [
        ("NoSuchMethod", json!({}), -32601),
        ("GetTask", json!({"id": 7}), -32602),
        ("GetExtendedAgentCard", json!({}), -32004),
        ("CancelTask", json!({"id": "no-such-task"}), -32001),
    ];
    for (method, params, code) in cases {
        let reply = send(rpc("e-9", method, params).to_string()).await;
        assert_eq!(reply["error"]["code"], code, "{method}: {reply}");
        assert_eq!(reply["id"], "e-9");
        assert_eq!(reply["jsonrpc"], "2.0");
    }
    agents.shutdown().await;
}

#[tokio::test]
async fn approve_is_404_unless_the_task_waits_for_an_operator() {
    let agents = start().await;
    let base = agents.url("deployer");
    let client = reqwest::Client::new();
    let unknown = client
        .post(format!("{base}/approve/no-such-task"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    let send = rpc(
        "d-1",
        "SendMessage",
        json!({"message": user_message("deploy 2026.10.06-1 to staging")}),
    );
    let reply = json_of(
        post(&format!("{base}/"))
            .bearer_auth(TOKEN)
            .json(&send)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let task = &reply["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_AUTH_REQUIRED", "{reply}");
    let id = task["id"].as_str().unwrap();
    let parts = &task["status"]["message"]["parts"];
    let link = format!("{base}/approve/{id}");
    assert_eq!(parts[1]["url"], link.as_str());

    // No bearer token: the approval is outside A2A.
    let approved = client.post(&link).send().await.unwrap();
    assert_eq!(approved.status(), StatusCode::OK);
    assert_eq!(json_of(approved).await, json!({"taskId": id, "approved": true}));
    let twice = client.post(&link).send().await.unwrap();
    assert_eq!(twice.status(), StatusCode::NOT_FOUND, "one approval resumes one deploy");

    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let reply = get(&format!("{base}/rest/tasks/{id}"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        let task = json_of(reply).await;
        if task["status"]["state"] == "TASK_STATE_COMPLETED" {
            assert_eq!(
                task["status"]["message"]["parts"][0]["text"],
                "deployed 2026.10.06-1 to staging"
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still {}",
            task["status"]["state"]
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    agents.shutdown().await;
}

#[tokio::test]
async fn jsonrpc_stream_frames_are_whole_envelopes_with_the_request_id() {
    let agents = start().await;
    let send = rpc(
        "stream-7",
        "SendStreamingMessage",
        json!({"message": user_message("run the tests")}),
    );
    let response = post(&format!("{}/", agents.url("test-runner")))
        .json(&send)
        .send()
        .await
        .unwrap();
    let frames = Frames::new(response).rest().await;
    for frame in &frames {
        assert_eq!(
            (frame["jsonrpc"].as_str(), frame["id"].as_str()),
            (Some("2.0"), Some("stream-7"))
        );
        assert_eq!(
            frame["result"].as_object().map(|o| o.len()),
            Some(1),
            "one event per frame: {frame}"
        );
    }
    let results: Vec<&Value> = frames.iter().map(|f| &f["result"]).collect();
    assert_eq!(results[0]["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    assert!(results[0]["task"]["status"]["timestamp"].is_string());
    let last = &results[results.len() - 1]["statusUpdate"]["status"];
    assert_eq!(last["state"], "TASK_STATE_COMPLETED");
    let log: Vec<(bool, bool)> = results
        .iter()
        .map(|r| &r["artifactUpdate"])
        .filter(|a| a["artifact"]["artifactId"] == "test-log")
        .map(|a| (a["append"] == true, a["lastChunk"] == true))
        .collect();
    assert_eq!(
        log,
        [(false, false), (true, false), (true, true)],
        "absent flags mean false"
    );
    agents.shutdown().await;
}

#[tokio::test]
async fn subscribe_starts_with_the_task_snapshot_and_carries_the_next_turn() {
    let agents = start().await;
    let base = agents.url("code-reviewer");
    let ask = json!({"message": user_message("review the payments-api diff")});
    let opened = post(&format!("{base}/rest/message:stream"))
        .json(&ask)
        .send()
        .await
        .unwrap();
    // The stream closes at the question: it is read to its end within the deadline.
    let opening = Frames::new(opened).rest().await;
    let task = &opening[0]["task"];
    let asked = &opening[opening.len() - 1]["statusUpdate"]["status"];
    assert_eq!(asked["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(asked["message"]["role"], "ROLE_AGENT");
    let (id, context) = (task["id"].as_str().unwrap(), task["contextId"].as_str().unwrap());

    let response = post(&format!("{base}/rest/tasks/{id}:subscribe")).send().await.unwrap();
    let mut frames = Frames::new(response);
    let snapshot = frames.next().await.expect("a first frame");
    let snapshot = &snapshot["task"];
    assert_eq!(snapshot["id"], id, "REST frames are the bare StreamResponse");
    assert_eq!(snapshot["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        snapshot["history"][0]["parts"][0]["text"],
        "review the payments-api diff"
    );

    let mut answer = user_message("main");
    answer["taskId"] = json!(id);
    answer["contextId"] = json!(context);
    let done = post(&format!("{base}/rest/message:send"))
        .json(&json!({"message": answer}))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(done).await["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let states: Vec<Value> = frames
        .rest()
        .await
        .iter()
        .filter_map(|f| f.get("statusUpdate").map(|u| u["status"]["state"].clone()))
        .collect();
    assert_eq!(states, [json!("TASK_STATE_WORKING"), json!("TASK_STATE_COMPLETED")]);
    agents.shutdown().await;
}

#[tokio::test]
async fn cards_list_both_bindings_in_each_agents_order_and_revalidate() {
    let agents = start().await;
    let client = reqwest::Client::new();
    for agent in &agents.agents {
        let url = format!("{}/.well-known/agent-card.json", agent.url);
        let response = client.get(&url).send().await.unwrap();
        let etag = response.headers()["etag"].clone();
        let card = json_of(response).await;
        assert_eq!(card["name"], agent.name.as_str());
        assert_eq!(card["capabilities"]["streaming"], true);
        let bindings: Vec<&str> = card["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["protocolBinding"].as_str().unwrap())
            .collect();
        let expected = if agent.name == "code-reviewer" {
            ["HTTP+JSON", "JSONRPC"]
        } else {
            ["JSONRPC", "HTTP+JSON"]
        };
        assert_eq!(bindings, expected, "{}", agent.name);
        let urls: Vec<&str> = card["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["url"].as_str().unwrap())
            .collect();
        assert!(
            urls.contains(&format!("{}/", agent.url).as_str())
                && urls.contains(&format!("{}/rest", agent.url).as_str())
        );
        let again = client.get(&url).header("If-None-Match", etag).send().await.unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    }
    let assistant = json_of(
        client
            .get(format!("{}/.well-known/agent-card.json", agents.url("assistant")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        assistant["capabilities"]["extensions"][0]["uri"],
        a2a_watch::a2a::INTERACTIONS_EXTENSION
    );
    agents.shutdown().await;
}

/// An approval or connection asked in band (interactions/v1) is answered by a message, so the
/// stream ends there, as at a question; the deployer's, answered outside A2A, stays open (below).
#[tokio::test]
async fn an_in_band_approval_or_connection_ends_the_stream_at_auth_required() {
    let agents = start().await;
    let url = format!("{}/", agents.url("assistant"));
    for (text, kind) in [
        ("approval: open the pull request", "approval"),
        ("connect slack", "connection"),
    ] {
        let body = rpc("s-2", "SendStreamingMessage", json!({"message": user_message(text)}));
        let frames = Frames::new(post(&url).json(&body).send().await.unwrap()).rest().await;
        let statuses: Vec<&Value> = frames
            .iter()
            .map(|f| &f["result"]["statusUpdate"]["status"])
            .filter(|s| !s.is_null())
            .collect();
        let states: Vec<&Value> = statuses.iter().map(|s| &s["state"]).collect();
        assert_eq!(states, ["TASK_STATE_WORKING", "TASK_STATE_AUTH_REQUIRED"], "{text}");
        let open = &statuses[1]["message"]["metadata"][a2a_watch::a2a::INTERACTIONS_EXTENSION];
        assert_eq!(open["kind"], kind);
    }
    agents.shutdown().await;
}

#[tokio::test]
async fn a_deploy_stream_stays_open_through_the_approval_and_shutdown_ends_open_streams() {
    let agents = start().await;
    let base = agents.url("deployer").to_string();
    let open = |text: &str| {
        let body = rpc("s-1", "SendStreamingMessage", json!({"message": user_message(text)}));
        post(&format!("{base}/")).bearer_auth(TOKEN).json(&body).send()
    };
    let state = |frame: &Value| frame["result"]["statusUpdate"]["status"]["state"].clone();

    let mut approved = Frames::new(open("deploy 2026.10.06-1 to staging").await.unwrap());
    let id = approved.next().await.unwrap()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    while state(&approved.next().await.expect("open")) != "TASK_STATE_AUTH_REQUIRED" {}
    let approve = reqwest::Client::new()
        .post(format!("{base}/approve/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(approve.status(), StatusCode::OK);
    let after: Vec<Value> = approved.rest().await.iter().map(state).collect();
    assert_eq!(after.last(), Some(&json!("TASK_STATE_COMPLETED")), "{after:?}");

    // A stream left waiting for an operator ends when the agents stop.
    let mut waiting = Frames::new(open("deploy 2026.10.07-1 to staging").await.unwrap());
    while state(&waiting.next().await.expect("open")) != "TASK_STATE_AUTH_REQUIRED" {}
    tokio::time::timeout(DEADLINE, agents.shutdown())
        .await
        .expect("shutdown in time");
    assert_eq!(waiting.next().await, None, "the stream closed");
}
