//! Push notifications (issue 12) against the official Python SDK's push sender
//! (tests/interop/python/agent.py --push: `streaming: false`, `pushNotifications: true`, a2a-sdk
//! 1.3.0's InMemoryPushNotificationConfigStore + BasePushNotificationSender): tasks are followed
//! by deliveries, not polls; a delivery without the session's token is refused and counted;
//! garbage is refused and applies nothing; the configs are gone once the watch ends.

use std::sync::Arc;
use std::time::Duration;

use a2a_watch::a2a::{Binding, StreamResponse, TaskState};
use a2a_watch::event::Event;
use a2a_watch::push::{Push, PushSettings};
use a2a_watch::store::Store;
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};
use serde_json::{Value, json};

use crate::engine::Watched;
use crate::peers::{Peer, Sdk};
use crate::scenarios::{connect, message, reply};

/// Long enough that no listing after the first and no GetTask poll (10x this) falls within a
/// test: whatever moves a task meanwhile came by push.
const POLL: Duration = Duration::from_secs(120);
const DEADLINE: Duration = Duration::from_secs(20);

/// A push receiver on 127.0.0.1, not serving yet.
pub async fn loopback_receiver() -> Arc<Push> {
    let settings = PushSettings {
        listen: "127.0.0.1:0".parse().unwrap(),
        url: None,
        allow_remote: false,
    };
    Arc::new(Push::bind(&settings).await.expect("the receiver binds"))
}

/// Watches the agent, and the tasks named (0.3 agents have no ListTasks).
pub(crate) async fn watch_pushed(url: &str, tasks: &[&str]) -> (Watched, Arc<Push>) {
    let push = loopback_receiver().await;
    let mut spec = AgentSpec::new(url);
    spec.name = Some("pusher".into());
    spec.poll_interval = POLL;
    spec.tasks = tasks.iter().map(|t| t.to_string()).collect();
    let store = Store::new([(spec.name.clone(), spec.url.clone())]);
    let (tx, events) = a2a_watch::event::channel(256);
    let opts = WatchOptions {
        push: Some(push.clone()),
        ..WatchOptions::default()
    };
    let engine = Engine::start(vec![spec], opts, tx);
    (Watched { store, events, engine }, push)
}

/// Applies events until `done` holds; every event applied is also handed to `seen`.
async fn until(w: &mut Watched, what: &str, mut seen: impl FnMut(&Event), done: impl Fn(&Store) -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !done(&w.store) {
        match tokio::time::timeout_at(deadline, w.events.recv()).await {
            Ok(Some(ev)) => {
                seen(&ev);
                w.store.apply(ev);
            }
            Ok(None) => panic!("the engine stopped before {what}"),
            Err(_) => panic!("timed out waiting for {what}"),
        }
    }
}

fn state_of(store: &Store, task: &str) -> Option<TaskState> {
    store.tasks().find(|t| &*t.key.id == task).map(|t| t.state().clone())
}

/// A Python SDK agent started with `--push`.
struct Pusher {
    peer: Peer,
    sdk: Sdk,
}

impl Pusher {
    fn start(sdk: Sdk, args: &[&str]) -> Pusher {
        let args = [&["--push"], args].concat();
        Pusher {
            peer: Peer::start(sdk, &args),
            sdk,
        }
    }

    fn url(&self) -> &str {
        &self.peer.url
    }

    /// The push configs the agent holds for a task, asked over its JSON-RPC interface (1.0:
    /// `{configs: [...]}`; 0.3: a bare array of `{taskId, pushNotificationConfig}`).
    async fn configs(&self, task: &str) -> Vec<Value> {
        let (path, body) = match self.sdk {
            Sdk::Python03 => (
                "/",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/list", "params": {"id": task}}),
            ),
            _ => (
                "/a2a/jsonrpc",
                json!({"jsonrpc": "2.0", "id": 1, "method": "ListTaskPushNotificationConfigs", "params": {"taskId": task}}),
            ),
        };
        let reply: Value = reqwest::Client::new()
            .post(format!("{}{path}", self.url()))
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .expect("the agent answers")
            .json()
            .await
            .expect("a JSON-RPC reply");
        let configs = reply["result"].get("configs").unwrap_or(&reply["result"]);
        let configs = configs.as_array().cloned().unwrap_or_default();
        configs
            .into_iter()
            .map(|c| c.get("pushNotificationConfig").cloned().unwrap_or(c))
            .collect()
    }

    /// Waits until the agent holds `n` configs for the task.
    async fn configs_become(&self, task: &str, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let found = self.configs(task).await;
            if found.len() == n {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the agent kept {} push configs for {task}, not {n}: {found:?}",
                found.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A task that waits in INPUT_REQUIRED (the agent's "question"), as (task, context).
async fn waiting_task(url: &str, binding: Binding) -> (String, String) {
    let client = connect(url, binding, None).await;
    match client
        .send_message(&message("question: review this diff"))
        .await
        .unwrap()
    {
        StreamResponse::Task(t) => {
            assert_eq!(t.status.state, TaskState::InputRequired);
            (t.id, t.context_id)
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

/// 1.0 agents push stream events; 0.3 agents the whole task after each event.
async fn followed_by_webhooks(sdk: Sdk, binding: Binding) {
    let agent = match binding {
        Binding::Rest => Pusher::start(sdk, &["--prefer", "rest"]),
        Binding::JsonRpc => Pusher::start(sdk, &[]),
        Binding::Grpc => Pusher::start(sdk, &["--grpc", "--prefer", "grpc"]),
    };
    let (answered, context) = waiting_task(agent.url(), binding).await;
    let (left_waiting, _) = waiting_task(agent.url(), binding).await;
    // The receiver's token is a credential: over plain http it follows a card's gRPC interface to
    // another port only from a card file the user chose (README "Security").
    let watched = match binding {
        Binding::Grpc => crate::grpc::card_file(agent.url()).await.to_string_lossy().into_owned(),
        _ => agent.url().to_string(),
    };
    let (mut w, push) = watch_pushed(&watched, &[&answered, &left_waiting]).await;
    until(
        &mut w,
        "both tasks in the store",
        |_| {},
        |s| state_of(s, &answered).is_some() && state_of(s, &left_waiting).is_some(),
    )
    .await;
    let registered = agent.configs_become(&answered, 1).await;
    assert_eq!(registered[0]["url"], json!(push.url_for(0)));
    agent.configs_become(&left_waiting, 1).await;
    assert_eq!(w.store.agents[0].health.label(), "polling");

    // The answer starts WORKING -> artifact -> COMPLETED. The next listing is two minutes
    // away, and GetTask is asked again only once a delivery says the task ended (its poll is
    // twenty minutes away): only a delivery can bring WORKING.
    let client = connect(agent.url(), binding, None).await;
    client
        .send_message(&reply(&answered, &context, "main").returning_immediately())
        .await
        .unwrap();
    let mut states = Vec::new();
    until(
        &mut w,
        "the answered task completed",
        |ev| match ev {
            Event::Update {
                event: StreamResponse::StatusUpdate(u),
                ..
            } if u.task_id == answered => states.push(u.status.state.clone()),
            Event::Snapshot { task, .. } if task.id == answered => states.push(task.status.state.clone()),
            _ => {}
        },
        |s| state_of(s, &answered) == Some(TaskState::Completed),
    )
    .await;
    assert!(states.contains(&TaskState::Working), "WORKING came by push: {states:?}");
    // Its watch ended with the task, and took its config with it.
    agent.configs_become(&answered, 0).await;
    assert_eq!(agent.configs(&left_waiting).await.len(), 1, "the waiting task's stays");

    // Stopping the engine deletes the configs still registered.
    w.engine.shutdown().await;
    assert!(agent.configs(&left_waiting).await.is_empty(), "deleted at shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_push_over_jsonrpc_follows_tasks_by_webhooks_and_cleans_up() {
    followed_by_webhooks(Sdk::Python13, Binding::JsonRpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_push_over_http_json_follows_tasks_by_webhooks_and_cleans_up() {
    followed_by_webhooks(Sdk::Python13, Binding::Rest).await;
}

/// The push configs are created and deleted over gRPC (spec section 10.4.7, 10.4.10); the
/// deliveries are HTTP POSTs whatever the binding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_push_over_grpc_follows_tasks_by_webhooks_and_cleans_up() {
    followed_by_webhooks(Sdk::Python13, Binding::Grpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_0_3_push_follows_tasks_by_webhooks_and_cleans_up() {
    followed_by_webhooks(Sdk::Python03, Binding::JsonRpc).await;
}

async fn deliver(url: &str, token: Option<&str>, body: &str) -> u16 {
    try_deliver(url, token, body).await.expect("the receiver answers")
}

/// The receiver's status, or the error of a request it cut off.
async fn try_deliver(url: &str, token: Option<&str>, body: &str) -> Result<u16, reqwest::Error> {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        req = req.header("X-A2A-Notification-Token", token);
    }
    Ok(req.send().await?.status().as_u16())
}

fn status_update(task: &str, context: &str, state: &str, text: &str) -> String {
    json!({"statusUpdate": {"taskId": task, "contextId": context, "status": {"state": state,
        "message": {"messageId": text, "role": "ROLE_AGENT", "parts": [{"text": text}]}}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_without_the_token_are_refused_and_counted_and_garbage_applies_nothing() {
    let agent = Pusher::start(Sdk::Python13, &[]);
    let (task, context) = waiting_task(agent.url(), Binding::JsonRpc).await;
    let (mut w, push) = watch_pushed(agent.url(), &[]).await;
    until(
        &mut w,
        "the task in the store",
        |_| {},
        |s| state_of(s, &task).is_some(),
    )
    .await;
    // The token as the agent got it: the SDK echoes configs back.
    let config = agent.configs_become(&task, 1).await.remove(0);
    let token = config["token"].as_str().expect("a token was registered").to_string();
    let url = push.url_for(0);

    let forged = status_update(&task, &context, "TASK_STATE_COMPLETED", "forged");
    assert_eq!(deliver(&url, None, &forged).await, 401, "no token");
    assert_eq!(
        deliver(&url, Some("not-the-token"), &forged).await,
        401,
        "a wrong token"
    );
    let wrong_length = format!("{token}x");
    assert_eq!(
        deliver(&url, Some(&wrong_length), &forged).await,
        401,
        "the token and more"
    );
    until(
        &mut w,
        "three refusals counted",
        |_| {},
        |s| s.agents[0].push_refused == 3,
    )
    .await;

    for garbage in [
        "not json",
        "{}",
        r#"{"statusUpdate": 7}"#,
        r#"{"statusUpdate": {"status": {}}}"#,
    ] {
        assert_eq!(deliver(&url, Some(&token), garbage).await, 400, "{garbage}");
    }
    // The token is right: a real delivery after the garbage goes in, and nothing came before it.
    let marker = status_update(&task, &context, "TASK_STATE_INPUT_REQUIRED", "marker");
    assert_eq!(deliver(&url, Some(&token), &marker).await, 200);
    let mut before_marker = Vec::new();
    until(
        &mut w,
        "the marker delivery",
        |ev| {
            if let Event::Update { event, .. } = ev {
                before_marker.push(format!("{event:?}"));
            }
        },
        |s| s.tasks().any(|t| t.status.text().contains("marker")),
    )
    .await;
    assert_eq!(before_marker.len(), 1, "only the marker was applied: {before_marker:?}");
    assert_eq!(
        state_of(&w.store, &task),
        Some(TaskState::InputRequired),
        "the forged end was not applied"
    );
    assert_eq!(w.store.agents[0].push_refused, 3);

    // The right token names only this agent's registered tasks: another task, or a path of an
    // agent this session never registered with, is nothing here (and no row is touched).
    let elsewhere = status_update("not-registered", &context, "TASK_STATE_COMPLETED", "elsewhere");
    assert_eq!(
        deliver(&url, Some(&token), &elsewhere).await,
        404,
        "an unregistered task"
    );
    for other_agent in [push.url_for(1), push.url_for(usize::MAX)] {
        assert_eq!(deliver(&other_agent, Some(&token), &forged).await, 404, "{other_agent}");
    }
    let settle = tokio::time::Instant::now() + Duration::from_millis(300);
    while let Ok(Some(ev)) = tokio::time::timeout_at(settle, w.events.recv()).await {
        w.store.apply(ev);
    }
    assert!(state_of(&w.store, "not-registered").is_none());
    assert_eq!(w.store.agents.len(), 1, "no row for an agent id from the URL");

    // A delivery as large as a streamed event may be goes in; a larger one is refused whole.
    let large = status_update(&task, &context, "TASK_STATE_INPUT_REQUIRED", &"x".repeat(3 << 20));
    assert_eq!(
        deliver(&url, Some(&token), &large).await,
        200,
        "over axum's default 2 MB"
    );
    let too_large = status_update(&task, &context, "TASK_STATE_INPUT_REQUIRED", &"x".repeat(9 << 20));
    // Refused once the limit is read: the 413 goes out and the connection closes, so a client
    // still writing meets either the status or a broken pipe; never a 200.
    match try_deliver(&url, Some(&token), &too_large).await {
        Ok(status) => assert_eq!(status, 413),
        Err(cut) => assert!(cut.is_request(), "{cut}"),
    }
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_counts_refusals_on_its_agent_lines_and_listens_remotely_only_when_told() {
    let remote = crate::cli::run(
        &["--agent", "http://127.0.0.1:9", "--push-listen", "0.0.0.0:0", "--json"],
        &[],
    )
    .await;
    assert_eq!(remote.status.code(), Some(2), "{}", crate::cli::stderr(&remote));
    assert!(crate::cli::stderr(&remote).contains("--push-allow-remote"));

    let agent = Pusher::start(Sdk::Python13, &[]);
    // A task to register: the receiver knows an agent once it gave it a token.
    let (task, _) = waiting_task(agent.url(), Binding::JsonRpc).await;
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-watch"))
        .args([
            "--agent",
            &format!("pusher={}", agent.url()),
            "--push-listen",
            &addr,
            "--json",
        ])
        .env_remove("A2A_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary runs");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stdout.take().unwrap()));
    let mut next_agent_line = async || loop {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("the binary still runs");
        let line: Value = serde_json::from_str(&line).unwrap();
        if line.get("health").is_some() {
            return line;
        }
    };
    // An agent line: the engine, and with it the receiver, is running.
    let first = next_agent_line().await;
    assert!(
        first.get("push_refused").is_none(),
        "no count before a refusal: {first}"
    );
    agent.configs_become(&task, 1).await;
    assert_eq!(
        deliver(&format!("http://{addr}/push/0"), Some("guess"), "{}").await,
        401
    );
    let counted = loop {
        let line = next_agent_line().await;
        if line.get("push_refused").is_some() {
            break line;
        }
    };
    assert_eq!(counted["push_refused"], 1, "{counted}");
    assert_eq!(counted["agent"], "pusher");
    child.kill().await.unwrap();
}
