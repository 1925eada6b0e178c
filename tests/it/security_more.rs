//! More of "credentials go only where the user sent them": proxies, refresh after a 401 from any
//! call, what a 401 hint and the command line echo, listings cut at the page limit. The real
//! binary runs with a clean environment: no token or proxy variable leaks in from the machine.

use std::process::Output;
use std::time::Duration;

use a2a_watch::event::Health;
use a2a_watch::watch::{AgentSpec, Credential, WatchOptions};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::json;

use crate::cli::stderr;
use crate::security::{Agent, Watched, card, nothing_holds};

/// The environment variables that change where requests go or which token is sent.
const AMBIENT: [&str; 10] = [
    "A2A_TOKEN",
    "A2A_TOKEN_DEPLOYER",
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

pub(crate) fn binary(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-watch"));
    cmd.args(args).kill_on_drop(true);
    for var in AMBIENT {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

pub(crate) async fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = tokio::time::timeout(Duration::from_secs(60), binary(args, env).output()).await;
    out.expect("the command finished in time").expect("the binary runs")
}

// ---- proxies ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_agents_are_never_reached_through_a_proxy() {
    let proxy = Agent::start(card("proxy", json!({})), |_| None).await;
    let agent = Agent::start(card("a", crate::security::bearer()), |_| None).await;
    let env = [
        ("HTTP_PROXY", proxy.url.as_str()),
        ("http_proxy", proxy.url.as_str()),
        ("ALL_PROXY", proxy.url.as_str()),
    ];
    let out = run(&["--token", "tok-s3cret", "list", &agent.url, "--json"], &env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(proxy.seen().is_empty(), "the proxy saw {:?}", proxy.seen());
    nothing_holds(&proxy.seen(), "tok-s3cret");
    assert!(
        agent
            .calls()
            .iter()
            .any(|s| s.header("authorization") == Some("Bearer tok-s3cret"))
    );

    // Other hosts still go through it (TEST-NET-1, never reached directly), here with nothing
    // secret to carry.
    let elsewhere = run(&["list", "http://192.0.2.1:9", "--json"], &env).await;
    assert!(elsewhere.status.success(), "{}", stderr(&elsewhere));
    let hosts: Vec<String> = proxy
        .seen()
        .iter()
        .filter_map(|s| s.header("host").map(str::to_string))
        .collect();
    assert!(
        !hosts.is_empty() && hosts.iter().all(|h| h == "192.0.2.1:9"),
        "{hosts:?}"
    );
}

// ---- refresh after a 401 from any call ----

/// A scratch file unique to this test process and `what`.
fn scratch(what: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("a2a-sec-more-{what}-{}", std::process::id()))
}

/// A 0.3 agent (no ListTasks) that polls: only `Bearer good-token` gets an answer.
async fn old_agent_wanting_good_token() -> Agent {
    let card = json!({
        "name": "old", "description": "d", "version": "1", "url": "/a2a",
        "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": false},
        "securitySchemes": {"s": {"type": "http", "scheme": "bearer"}}, "security": [{"s": []}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    Agent::start(card, |s| {
        if s.is_card() {
            return None;
        }
        if s.header("authorization") != Some("Bearer good-token") {
            return Some(StatusCode::UNAUTHORIZED.into_response());
        }
        let task = json!({"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}});
        Some(axum::Json(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": task})).into_response())
    })
    .await
}

/// A spec for `agent` whose token_command prints the file returned, which holds `old-token`.
fn rotating(agent: &Agent, what: &str) -> (AgentSpec, std::path::PathBuf) {
    let file = scratch(what);
    std::fs::write(&file, "old-token\n").unwrap();
    let mut spec = AgentSpec::new(&agent.url);
    spec.credential = Credential::Command(format!("cat {}", file.display()));
    (spec, file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_on_get_task_refreshes_the_token_of_an_agent_that_does_not_list() {
    let agent = old_agent_wanting_good_token().await;
    let (mut spec, file) = rotating(&agent, "rotated");
    spec.poll_interval = Duration::from_millis(100);
    spec.tasks = vec!["t-1".into()];
    let mut w = Watched::start(vec![spec]);
    w.until("GetTask refused", |_| {
        agent.calls().iter().any(|s| s.body["method"] == "tasks/get")
    })
    .await;
    std::fs::write(&file, "good-token\n").unwrap();
    w.until("the task read with the new token", |s| {
        s.tasks().any(|t| &*t.key.id == "t-1")
    })
    .await;
    assert!(
        agent
            .calls()
            .iter()
            .any(|s| s.body["method"] == "tasks/get" && s.header("authorization") == Some("Bearer good-token"))
    );
    w.engine.shutdown().await;
    std::fs::remove_file(&file).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_on_a_send_refreshes_the_token_so_the_retry_uses_the_new_one() {
    use a2a_watch::event::{ActionOutcome, Command};
    let agent = old_agent_wanting_good_token().await;
    let (spec, file) = rotating(&agent, "rotated-send");
    let mut w = Watched::start(vec![spec]);
    w.until("connected", |s| s.agents[0].info.is_some()).await;
    let send = |action| Command::Send {
        action,
        request: Box::new(crate::scenarios::message("hi")),
    };
    assert!(w.engine.command(0, send(1)).await);
    w.until("the first send refused", |s| {
        matches!(s.action(1), Some(ActionOutcome::Failed { .. }))
    })
    .await;
    std::fs::write(&file, "good-token\n").unwrap();
    // Retried as a person would, until a refresh has picked the new token up.
    let mut action = 1;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        action += 1;
        assert!(w.engine.command(0, send(action)).await);
        w.until("an outcome", |s| s.action(action).is_some()).await;
        if matches!(w.store.action(action), Some(ActionOutcome::Done { .. })) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "every retry was refused");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    w.engine.shutdown().await;
    std::fs::remove_file(&file).ok();
}

/// Is process `pid` gone (or a zombie, killed and waiting for its parent to reap it)?
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name in parentheses.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_command_that_hangs_is_stopped_with_all_it_started_and_its_output_never_shows() {
    let agent = Agent::start(card("a", crate::security::bearer()), |_| None).await;
    let pidfile = scratch("pid");
    std::fs::remove_file(&pidfile).ok();
    let mut spec = AgentSpec::new(&agent.url);
    spec.credential = Credential::Command(format!(
        "printf 'leaked-%s' s3cret; sleep 600 & echo $! > {}; wait",
        pidfile.display()
    ));
    let opts = WatchOptions {
        token_command_timeout: Duration::from_millis(500),
        max_backoff: Duration::from_secs(30),
        ..WatchOptions::default()
    };
    let mut w = Watched::start_with(vec![spec], opts);
    w.until("the timeout on the row", |s| {
        matches!(&s.agents[0].health, Health::Unauthorized { message } if message.contains("did not finish within"))
    })
    .await;
    let detail = w.store.agents[0].health.detail().unwrap_or_default();
    assert!(!detail.contains("leaked-s3cret"), "{detail}");
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !gone(&pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command's child {pid} outlived it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(agent.calls().is_empty(), "nothing was sent without a token");
    w.engine.shutdown().await;
    std::fs::remove_file(&pidfile).ok();
}

// ---- what messages echo ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_a_url_are_never_echoed_and_user_info_is_never_sent() {
    let agent = Agent::start(card("a", json!({})), |s| {
        (s.path == "/missing.json").then(|| StatusCode::NOT_FOUND.into_response())
    })
    .await;
    let with_user = agent.url.replace("http://", "http://ops:s3cret@");
    let out = run(&["list", &with_user], &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("user name or password"), "{}", stderr(&out));
    assert!(agent.seen().is_empty(), "nothing was sent");

    let missing = format!("{}/missing.json?key=s3cret", agent.url);
    let out = run(&["list", &missing], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("/missing.json"), "{}", stderr(&out));

    // A card URL with a key in its query: the `card` command names the source without it.
    let keyed = format!("{}/.well-known/agent-card.json?key=s3cret", agent.url);
    let summary = run(&["card", &keyed], &[]).await;
    assert!(summary.status.success(), "{}", stderr(&summary));
    let shown = String::from_utf8_lossy(&summary.stdout);
    assert!(shown.contains("/.well-known/agent-card.json"), "{shown}");

    let refusing = Agent::start(card("b", json!({})), |_| Some(StatusCode::UNAUTHORIZED.into_response())).await;
    let refused = run(&["list", &format!("{}/c.json?key=s3cret", refusing.url)], &[]).await;
    assert!(stderr(&refused).contains("401"), "{}", stderr(&refused));
    for out in [&out, &summary, &refused] {
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(out));
        assert!(!all.contains("s3cret"), "{all}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_header_is_refused_without_echoing_it() {
    let agent = Agent::start(card("a", json!({})), |_| None).await;
    let out = run(&["--header", "Authorization Bearer s3cret", "list", &agent.url], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let msg = stderr(&out);
    assert!(msg.contains("--header") && !msg.contains("s3cret"), "{msg}");
    assert!(agent.seen().is_empty());
}

// ---- a dashboard of several agents ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_on_a_dashboard_of_several_go_only_where_the_card_asks() {
    let asks = Agent::start(card("asks", crate::security::bearer()), |_| None).await;
    let silent = Agent::start(card("silent", json!({})), |_| None).await;
    let specs = [&asks, &silent]
        .map(|a| {
            let mut spec = AgentSpec::new(&a.url);
            spec.client.headers = vec![("X-Key".into(), a2a_watch::a2a::auth::Secret::new("hdr-s3cret"))];
            spec.client.headers_shared = true;
            spec.poll_interval = Duration::from_millis(100);
            spec
        })
        .to_vec();
    let mut w = Watched::start(specs);
    w.until("both listed", |_| {
        !asks.calls().is_empty() && !silent.calls().is_empty()
    })
    .await;
    assert!(asks.calls().iter().all(|s| s.header("x-key") == Some("hdr-s3cret")));
    nothing_holds(&silent.seen(), "hdr-s3cret");
    w.engine.shutdown().await;
}

// ---- listings cut at the page limit ----

/// An agent that always has another page, with a new task on each.
async fn endless_pager() -> Agent {
    let pages = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    Agent::start(card("endless\u{1b}[2J", json!({})), move |s| {
        (s.body["method"] == "ListTasks").then(|| {
            let n = pages.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let task = json!({"id": format!("t-{n}"), "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}});
            let page = json!({"tasks": [task], "nextPageToken": format!("p-{n}")});
            axum::Json(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": page})).into_response()
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_says_on_stderr_when_it_stopped_at_the_page_limit() {
    let agent = endless_pager().await;
    let out = run(&["list", &agent.url, "--json"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let msg = stderr(&out);
    assert!(msg.contains("stopped at 1000 pages"), "{msg}");
    assert!(!msg.contains('\u{1b}'), "the agent's name is sanitised: {msg:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_health_line_carries_the_listing_cut() {
    use tokio::io::AsyncBufReadExt;
    let agent = endless_pager().await;
    let mut child = binary(&["--json", "--agent", &agent.url], &[])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut health = Vec::new();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v.get("health").is_some() {
                assert!(v["listing_cut"].is_boolean(), "{v}");
                health.push(v.clone());
                if v["listing_cut"] == true {
                    return true;
                }
            }
        }
        false
    })
    .await;
    child.kill().await.ok();
    assert_eq!(found, Ok(true), "health lines: {health:?}");
}
