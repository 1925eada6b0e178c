//! Credentials go only where the user sent them, and the wire carries what the card asks for:
//! small agents on loopback written here record every request they receive. Env vars reach the
//! real binary through `.env()` (tests run in parallel threads), or have names no other test uses.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_watch::a2a::auth::Secret;
use a2a_watch::a2a::{Binding, Client, ClientOptions, Error, INTERACTIONS_EXTENSION, ListTasksRequest};
use a2a_watch::event::Health;
use a2a_watch::store::Store;
use a2a_watch::watch::{AgentSpec, Credential, Engine, WatchOptions};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::cli::{run, stderr};
use crate::scenarios::message;

/// One request as the agent received it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn is_card(&self) -> bool {
        self.path.starts_with("/.well-known/")
    }
}

type Script = dyn Fn(&Seen) -> Option<Response> + Send + Sync;

/// An agent on `ip` that records every request: `script` may answer one itself; otherwise the
/// card is served at the well-known path and any A2A call gets a plausible answer.
pub(crate) struct Agent {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Agent {
    pub async fn start(card: Value, script: impl Fn(&Seen) -> Option<Response> + Send + Sync + 'static) -> Agent {
        Agent::start_on(IpAddr::from([127, 0, 0, 1]), card, script).await
    }

    pub async fn start_on(
        ip: IpAddr,
        card: Value,
        script: impl Fn(&Seen) -> Option<Response> + Send + Sync + 'static,
    ) -> Agent {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, 0)).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let (log, card) = (seen.clone(), Arc::new(card));
        let router = axum::Router::new().fallback(move |request: Request| {
            let (log, card, script) = (log.clone(), card.clone(), script.clone());
            async move {
                let (parts, body) = request.into_parts();
                let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
                let seen = Seen {
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_string(),
                    query: parts.uri.query().unwrap_or_default().to_string(),
                    headers: parts.headers,
                    body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                };
                log.lock().unwrap().push(seen.clone());
                script(&seen).unwrap_or_else(|| answer(&seen, &card))
            }
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Agent { url, seen, server }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The A2A calls received, without the card requests.
    pub fn calls(&self) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| !s.is_card()).collect()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.server.abort();
    }
}

pub(crate) fn task() -> Value {
    json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}})
}

/// The card, or the answer an A2A call expects, on either binding.
fn answer(seen: &Seen, card: &Value) -> Response {
    if seen.is_card() {
        return axum::Json(card.clone()).into_response();
    }
    let (op, rpc_id) = match seen.body.get("method").and_then(Value::as_str) {
        Some(method) => (method.to_string(), Some(seen.body["id"].clone())),
        None => (rest_operation(seen).to_string(), None),
    };
    let result = match op.as_str() {
        "ListTasks" => json!({"tasks": [task()], "nextPageToken": ""}),
        "SendMessage" => json!({"task": task()}),
        "SendStreamingMessage" | "SubscribeToTask" => {
            let event = json!({"task": task()});
            let data = match &rpc_id {
                Some(id) => json!({"jsonrpc": "2.0", "id": id, "result": event}),
                None => event,
            };
            return (
                [(header::CONTENT_TYPE, "text/event-stream")],
                Body::from(format!("data: {data}\n\n")),
            )
                .into_response();
        }
        _ => task(),
    };
    match rpc_id {
        Some(id) => axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response(),
        None => axum::Json(result).into_response(),
    }
}

fn rest_operation(seen: &Seen) -> &'static str {
    let path = seen.path.as_str();
    if path.ends_with("/message:send") {
        "SendMessage"
    } else if path.ends_with("/message:stream") {
        "SendStreamingMessage"
    } else if path.ends_with(":subscribe") {
        "SubscribeToTask"
    } else if path.ends_with("/tasks") {
        "ListTasks"
    } else {
        "task"
    }
}

/// A 1.0 card with a JSON-RPC interface at `/a2a` and an HTTP+JSON one at `/rest`.
pub(crate) fn card(name: &str, extra: Value) -> Value {
    let mut card = json!({
        "name": name, "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        card[k] = v;
    }
    card
}

pub(crate) fn asking(scheme: Value) -> Value {
    json!({"securitySchemes": {"s": scheme}, "securityRequirements": [{"schemes": {"s": {}}}]})
}

pub(crate) fn bearer() -> Value {
    asking(json!({"httpAuthSecurityScheme": {"scheme": "Bearer"}}))
}

pub(crate) async fn client(url: &str, opts: ClientOptions) -> Result<Client, Error> {
    Client::connect(url, opts).await
}

pub(crate) fn with_token(token: &str) -> ClientOptions {
    ClientOptions {
        token: Some(Secret::new(token)),
        ..ClientOptions::default()
    }
}

/// Nothing in any request the agent received holds `secret`: no header, query, or body.
pub(crate) fn nothing_holds(seen: &[Seen], secret: &str) {
    for s in seen {
        let headers = format!("{:?}", s.headers);
        assert!(
            !headers.contains(secret) && !s.query.contains(secret) && !s.body.to_string().contains(secret),
            "{secret} reached {} {}: {s:?}",
            s.method,
            s.path
        );
    }
}

// ---- whose token ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_calling_itself_deployer_gets_no_deployer_token() {
    let agent = Agent::start(card("deployer", json!({})), |_| None).await;
    let env = [
        ("A2A_TOKEN_DEPLOYER", "deployer-s3cret"),
        ("A2A_TOKEN", "shared-s3cret"),
    ];
    let out = run(&["list", &agent.url, "--json"], &env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!agent.calls().is_empty());
    nothing_holds(&agent.seen(), "deployer-s3cret");
    nothing_holds(&agent.seen(), "shared-s3cret");
    assert!(agent.seen().iter().all(|s| s.header("authorization").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_named_agent_gets_its_token_even_where_the_card_asks_nothing() {
    let agent = Agent::start(card("whatever-it-says", json!({})), |_| None).await;
    let env = [("A2A_TOKEN_OPS", "ops-s3cret")];
    let out = run(&["--name", "ops", "list", &agent.url, "--json"], &env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let calls = agent.calls();
    assert!(!calls.is_empty());
    for s in &calls {
        assert_eq!(s.header("authorization"), Some("Bearer ops-s3cret"), "{s:?}");
    }
    assert_eq!(
        agent.seen()[0].header("authorization"),
        Some("Bearer ops-s3cret"),
        "a token meant for the agent goes on the card request too"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_token_goes_only_where_the_card_asks() {
    let asks = Agent::start(card("asks", bearer()), |_| None).await;
    let silent = Agent::start(card("silent", json!({})), |_| None).await;
    let env = [("A2A_TOKEN", "shared-s3cret")];
    for agent in [&asks, &silent] {
        let out = run(&["list", &agent.url, "--json"], &env).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(
        asks.calls()
            .iter()
            .all(|s| s.header("authorization") == Some("Bearer shared-s3cret"))
    );
    nothing_holds(&silent.seen(), "shared-s3cret");
    nothing_holds(
        &asks.seen().into_iter().filter(Seen::is_card).collect::<Vec<_>>(),
        "shared-s3cret",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_on_a_dashboard_of_several_goes_only_where_the_card_asks() {
    let asks = Agent::start(card("asks", bearer()), |_| None).await;
    let silent = Agent::start(card("silent", json!({})), |_| None).await;
    let specs = [&asks, &silent]
        .map(|a| {
            let mut spec = AgentSpec::new(&a.url);
            spec.credential = Credential::Shared(Secret::new("flag-s3cret"));
            spec.poll_interval = Duration::from_millis(100);
            spec
        })
        .to_vec();
    let mut w = Watched::start(specs);
    w.until("both listed", |_| {
        asks.calls().iter().any(|s| s.header("authorization").is_some()) && !silent.calls().is_empty()
    })
    .await;
    assert_eq!(asks.calls()[0].header("authorization"), Some("Bearer flag-s3cret"));
    nothing_holds(&silent.seen(), "flag-s3cret");
    w.engine.shutdown().await;
}

// ---- redirects and Referer ----

fn redirect_to(url: &str) -> Response {
    (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, url.to_string())]).into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credential_follows_a_redirect_to_another_origin() {
    let elsewhere = Agent::start(card("elsewhere", json!({})), |_| None).await;
    let target = format!("{}/collect?from=redirect", elsewhere.url);
    let schemes = [
        json!({"httpAuthSecurityScheme": {"scheme": "Bearer"}}),
        json!({"apiKeySecurityScheme": {"location": "query", "name": "k"}}),
        json!({"apiKeySecurityScheme": {"location": "cookie", "name": "sid"}}),
        json!({"apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key"}}),
    ];
    for scheme in schemes {
        let to = target.clone();
        let agent = Agent::start(card("a", asking(scheme.clone())), move |s| {
            (!s.is_card()).then(|| redirect_to(&to))
        })
        .await;
        let opts = ClientOptions {
            headers: vec![("X-Extra".into(), Secret::new("hdr-s3cret"))],
            ..with_token("tok-s3cret")
        };
        for binding in [Binding::JsonRpc, Binding::Rest] {
            let c = client(
                &agent.url,
                ClientOptions {
                    binding: Some(binding),
                    ..opts.clone()
                },
            )
            .await
            .unwrap();
            let listed = c.list_tasks(&ListTasksRequest::default()).await.err();
            // The streams too: a redirect is refused before any event is read.
            let subscribed = c.subscribe("t-1").await.err();
            let streamed = c.send_streaming_message(&message("hi")).await.err();
            for (call, err) in [("list", listed), ("subscribe", subscribed), ("stream", streamed)] {
                let err = err.unwrap_or_else(|| panic!("{call} followed the redirect"));
                assert!(matches!(err, Error::Redirected { .. }), "{call} {scheme}: {err}");
                let msg = err.to_string();
                assert!(
                    msg.contains(&format!("{}/collect", elsewhere.url)) && !msg.contains("from=redirect"),
                    "names where, without the query: {msg}"
                );
            }
        }
        assert!(!agent.calls().is_empty(), "the first hop carried the credential");
    }
    assert!(elsewhere.seen().is_empty(), "nothing reached the other origin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_redirected_to_another_origin_is_not_followed() {
    let elsewhere = Agent::start(card("elsewhere", json!({})), |_| None).await;
    let to = format!("{}/.well-known/agent-card.json", elsewhere.url);
    let agent = Agent::start(card("a", json!({})), move |s| s.is_card().then(|| redirect_to(&to))).await;
    let out = run(
        &["--name", "ops", "list", &agent.url],
        &[("A2A_TOKEN_OPS", "ops-s3cret")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let msg = stderr(&out);
    assert!(msg.contains("redirected to") && msg.contains(&elsewhere.url), "{msg}");
    assert!(elsewhere.seen().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_row_says_where_the_agent_was_redirected() {
    let elsewhere = Agent::start(card("elsewhere", json!({})), |_| None).await;
    let to = format!("{}/a2a", elsewhere.url);
    let agent = Agent::start(card("a", json!({})), move |s| (!s.is_card()).then(|| redirect_to(&to))).await;
    let mut spec = AgentSpec::new(&agent.url);
    spec.credential = Credential::Value(Secret::new("tok-s3cret"));
    let mut w = Watched::start(vec![spec]);
    let want = format!("redirected to {}/a2a", elsewhere.url);
    w.until("the redirect on the row", |s| {
        s.agents[0].health.detail().is_some_and(|d| d.contains(&want))
    })
    .await;
    assert!(elsewhere.seen().is_empty());
    w.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_origin_redirects_are_followed_without_a_referer() {
    let agent = Agent::start(card("a", bearer()), |s| {
        (s.path == "/a2a" || s.path == "/rest/tasks").then(|| {
            let to = if s.path == "/a2a" {
                "/moved/a2a"
            } else {
                "/moved/rest/tasks"
            };
            redirect_to(to)
        })
    })
    .await;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        let opts = ClientOptions {
            binding: Some(binding),
            ..with_token("tok-s3cret")
        };
        let c = client(&agent.url, opts).await.unwrap();
        let listed = c.list_tasks(&ListTasksRequest::default()).await.unwrap();
        assert_eq!(listed.tasks.len(), 1);
    }
    let moved: Vec<Seen> = agent
        .seen()
        .into_iter()
        .filter(|s| s.path.starts_with("/moved"))
        .collect();
    assert_eq!(moved.len(), 2, "{:?}", agent.seen());
    for s in &moved {
        assert_eq!(s.header("authorization"), Some("Bearer tok-s3cret"));
    }
    assert!(
        agent.seen().iter().all(|s| s.header("referer").is_none()),
        "no Referer, ever"
    );
}

// ---- where the card points ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interface_on_another_origin_gets_no_credential() {
    let elsewhere = Agent::start(card("elsewhere", json!({})), |_| None).await;
    let mut pointing = card("a", bearer());
    pointing["supportedInterfaces"] =
        json!([{"url": format!("{}/a2a", elsewhere.url), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    let agent = Agent::start(pointing.clone(), |_| None).await;
    let err = client(&agent.url, with_token("tok-s3cret")).await.unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, Error::Withheld { .. }) && msg.contains(&elsewhere.url) && msg.contains("another origin"),
        "{msg}"
    );
    assert!(elsewhere.seen().is_empty());

    // Nothing to send: the call goes there, bare.
    let mut asks_nothing = pointing;
    asks_nothing.as_object_mut().unwrap().remove("securityRequirements");
    let bare = Agent::start(asks_nothing, |_| None).await;
    let c = client(&bare.url, ClientOptions::default()).await.unwrap();
    c.list_tasks(&ListTasksRequest::default()).await.unwrap();
    assert_eq!(elsewhere.calls().len(), 1);
    assert!(elsewhere.calls()[0].header("authorization").is_none());
}

// ---- plain http ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credential_over_plain_http_to_a_host_that_is_not_loopback() {
    // TEST-NET-1: never contacted, the refusal comes first (a connection would fail differently).
    let out = run(&["--token", "tok-s3cret", "list", "http://192.0.2.1:9"], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    let msg = stderr(&out);
    assert!(
        msg.contains("nothing sent") && msg.contains("plain http") && msg.contains("allow_insecure_http"),
        "{msg}"
    );
    assert!(!msg.contains("tok-s3cret"));
    let headers = run(&["--header", "X-Api-Key: k", "list", "http://192.0.2.1:9"], &[]).await;
    assert!(stderr(&headers).contains("plain http"), "{}", stderr(&headers));
}

/// A card file whose only interface is plain http on TEST-NET-1 (never answers), asking for a
/// bearer token: the card is read, the interface is not loopback.
fn remote_card_file() -> std::path::PathBuf {
    let mut remote = card("remote", bearer());
    remote["supportedInterfaces"] =
        json!([{"url": "http://192.0.2.1:9/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    let path = std::env::temp_dir().join(format!("a2a-sec-remote-card-{}.json", std::process::id()));
    std::fs::write(&path, remote.to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_another_host_is_refused_after_the_card_and_allowed_by_flag_or_config() {
    let file = remote_card_file();
    let path = file.to_str().unwrap();
    // The shared token and one given for the agent alike: refused once the card names the host.
    for (args, env) in [
        (vec!["list", path], vec![("A2A_TOKEN", "shared-s3cret")]),
        (vec!["--token", "flag-s3cret", "list", path], vec![]),
    ] {
        let out = crate::security_more::run(&args, &env).await;
        let msg = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(msg.contains("nothing sent") && msg.contains("plain http"), "{msg}");
        assert!(!msg.contains("s3cret"), "{msg}");
    }
    // Allowed, the call is made: what fails now is the connection, not the refusal.
    let allowed = crate::security_more::run(
        &[
            "--allow-insecure-http",
            "--token",
            "flag-s3cret",
            "--timeout",
            "3",
            "list",
            path,
        ],
        &[],
    )
    .await;
    let msg = stderr(&allowed);
    assert_eq!(allowed.status.code(), Some(1), "{msg}");
    assert!(!msg.contains("plain http") && !msg.contains("nothing sent"), "{msg}");
    assert!(msg.contains("cannot connect") || msg.contains("timed out"), "{msg}");

    // The same from the config, on the dashboard's row.
    let config = |allow: bool| {
        let text = format!("[[agent]]\nurl = {path:?}\ntoken = \"cfg-s3cret\"\nallow_insecure_http = {allow}\n");
        a2a_watch::config::Config::parse(&text, std::path::Path::new("c.toml"))
            .unwrap()
            .agent[0]
            .spec()
    };
    let mut refused = Watched::start(vec![config(false)]);
    refused
        .until("the refusal on the row", |s| {
            s.agents[0].health.detail().is_some_and(|d| d.contains("plain http"))
        })
        .await;
    refused.engine.shutdown().await;
    let mut allowed = Watched::start(vec![config(true)]);
    allowed
        .until("a connection failure on the row", |s| {
            s.agents[0]
                .health
                .detail()
                .is_some_and(|d| d.contains("cannot connect") || d.contains("timed out"))
        })
        .await;
    let detail = allowed.store.agents[0].health.detail().unwrap_or_default();
    assert!(!detail.contains("plain http"), "{detail}");
    allowed.engine.shutdown().await;
    std::fs::remove_file(&file).ok();
}

// ---- how the credential is sent ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_schemes_get_basic() {
    let agent = Agent::start(
        card("a", asking(json!({"httpAuthSecurityScheme": {"scheme": "Basic"}}))),
        |_| None,
    )
    .await;
    let c = client(&agent.url, with_token("ci:pa55")).await.unwrap();
    c.list_tasks(&ListTasksRequest::default()).await.unwrap();
    assert_eq!(agent.calls()[0].header("authorization"), Some("Basic Y2k6cGE1NQ=="));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_names_the_scheme_that_was_used() {
    let refuse = |s: &Seen| (!s.is_card()).then(|| StatusCode::UNAUTHORIZED.into_response());
    let alternatives = json!({
        "securitySchemes": {
            "m": {"mtlsSecurityScheme": {}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        "securityRequirements": [{"schemes": {"m": {}}}, {"schemes": {"key": {}}}, {"schemes": {"bearer": {}}}]});
    let several = Agent::start(card("a", alternatives), refuse).await;
    let err = client(&several.url, with_token("tok-s3cret"))
        .await
        .unwrap()
        .list_tasks(&ListTasksRequest::default())
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("(an API key in header X-Key) was refused") && msg.contains("m (mutual TLS) or key"),
        "{msg}"
    );
    assert_eq!(several.calls()[0].header("x-key"), Some("tok-s3cret"));

    let basic = Agent::start(
        card("b", asking(json!({"httpAuthSecurityScheme": {"scheme": "Basic"}}))),
        refuse,
    )
    .await;
    let msg = client(&basic.url, with_token("u:p"))
        .await
        .unwrap()
        .list_tasks(&ListTasksRequest::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(msg.contains("(HTTP Basic) was refused"), "{msg}");
    assert!(!msg.contains("u:p"), "{msg}");
}

// ---- refresh after a 401 ----

/// Accepts only `Bearer good-token` on A2A calls; the card is public.
pub(crate) async fn wants_good_token() -> Agent {
    Agent::start(card("a", bearer()), |s| {
        (!s.is_card() && s.header("authorization") != Some("Bearer good-token"))
            .then(|| StatusCode::UNAUTHORIZED.into_response())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_command_runs_again_after_a_401_and_the_agent_recovers() {
    let agent = wants_good_token().await;
    let file = std::env::temp_dir().join(format!("a2a-sec-token-{}", std::process::id()));
    std::fs::write(&file, "old-token\n").unwrap();
    let mut spec = AgentSpec::new(&agent.url);
    spec.poll_interval = Duration::from_millis(100);
    spec.credential = Credential::Command(format!("cat {}", file.display()));
    let mut w = Watched::start(vec![spec]);
    w.until("unauthorized", |s| {
        matches!(s.agents[0].health, Health::Unauthorized { .. })
    })
    .await;
    std::fs::write(&file, "good-token\n").unwrap();
    w.until("recovered", |s| s.agents[0].health == Health::Streaming).await;
    assert!(
        agent
            .calls()
            .iter()
            .any(|s| s.header("authorization") == Some("Bearer good-token"))
    );
    w.engine.shutdown().await;
    std::fs::remove_file(&file).ok();
}

/// In-process on purpose: a running binary's environment cannot change from outside, so only a
/// variable changed while the engine runs proves it is read again (a server refusing the first
/// requests would pass with a token read once). The name is used by no other test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_env_is_read_again_after_a_401_and_the_agent_recovers() {
    const VAR: &str = "A2A_WATCH_SECURITY_TEST_REFRESHED_TOKEN";
    let agent = wants_good_token().await;
    // SAFETY: no other test reads or writes this variable.
    unsafe { std::env::set_var(VAR, "old-token") };
    let mut spec = AgentSpec::new(&agent.url);
    spec.poll_interval = Duration::from_millis(100);
    spec.credential = Credential::Env(VAR.into());
    let mut w = Watched::start(vec![spec]);
    w.until("unauthorized", |s| {
        matches!(s.agents[0].health, Health::Unauthorized { .. })
    })
    .await;
    unsafe { std::env::set_var(VAR, "good-token") };
    w.until("recovered", |s| s.agents[0].health == Health::Streaming).await;
    w.engine.shutdown().await;
    unsafe { std::env::remove_var(VAR) };
}

// ---- the extension and tenants on the wire ----

/// Every operation, once, on `binding`.
async fn every_call(url: &str, binding: Binding) {
    let opts = ClientOptions {
        binding: Some(binding),
        ..ClientOptions::default()
    };
    let c = client(url, opts).await.unwrap();
    c.list_tasks(&ListTasksRequest::default()).await.unwrap();
    c.get_task("t-1", None).await.unwrap();
    c.cancel_task("t-1").await.unwrap();
    c.send_message(&message("hi")).await.unwrap();
    let mut events = c.send_streaming_message(&message("hi")).await.unwrap();
    assert!(events.next().await.unwrap().is_ok());
    let mut events = c.subscribe("t-1").await.unwrap();
    assert!(events.next().await.unwrap().is_ok());
}

const TASK_CALLS: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactions_are_activated_on_every_task_call_only_where_declared() {
    let declared = json!({"capabilities": {"streaming": true, "extendedAgentCard": true,
        "extensions": [{"uri": INTERACTIONS_EXTENSION}]}});
    let declaring = Agent::start(card("a", declared), |_| None).await;
    let silent = Agent::start(card("b", json!({})), |_| None).await;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        every_call(&declaring.url, binding).await;
        every_call(&silent.url, binding).await;
    }
    let calls = declaring.calls();
    assert_eq!(calls.len(), 2 * TASK_CALLS);
    for s in &calls {
        assert_eq!(s.header("a2a-extensions"), Some(INTERACTIONS_EXTENSION), "{s:?}");
    }
    assert!(silent.seen().iter().all(|s| s.header("a2a-extensions").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tenant_is_on_every_call_of_both_bindings() {
    let tenanted = json!({"supportedInterfaces": [
        {"url": "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"},
        {"url": "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "acme"}]});
    let agent = Agent::start(card("a", tenanted), |_| None).await;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        every_call(&agent.url, binding).await;
    }
    let calls = agent.calls();
    assert_eq!(calls.len(), 2 * TASK_CALLS);
    for s in &calls {
        if s.path == "/a2a" {
            assert_eq!(s.body["params"]["tenant"], "acme", "{s:?}");
        } else {
            assert!(s.path.starts_with("/rest/acme/"), "{s:?}");
        }
    }
}

// ---- the engine, watched ----

pub(crate) struct Watched {
    pub store: Store,
    events: a2a_watch::event::Receiver,
    pub engine: Engine,
}

impl Watched {
    pub fn start(specs: Vec<AgentSpec>) -> Watched {
        Watched::start_with(
            specs,
            WatchOptions {
                max_backoff: Duration::from_millis(400),
                ..WatchOptions::default()
            },
        )
    }

    pub fn start_with(specs: Vec<AgentSpec>, opts: WatchOptions) -> Watched {
        let store = Store::new(specs.iter().map(|s| (s.name.clone(), s.url.clone())));
        let (tx, events) = a2a_watch::event::channel(256);
        Watched {
            store,
            events,
            engine: Engine::start(specs, opts, tx),
        }
    }

    /// Applies events until `done` holds, or fails after the deadline saying what it saw.
    pub async fn until(&mut self, what: &str, done: impl Fn(&Store) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !done(&self.store) {
            match tokio::time::timeout(Duration::from_millis(100), self.events.recv()).await {
                Ok(Some(ev)) => {
                    self.store.apply(ev);
                }
                Ok(None) => panic!("the engine stopped before {what}"),
                Err(_) if tokio::time::Instant::now() > deadline => {
                    let health: Vec<&Health> = self.store.agents.iter().map(|a| &a.health).collect();
                    panic!("timed out waiting for {what}; health {health:?}");
                }
                Err(_) => {}
            }
        }
    }
}
