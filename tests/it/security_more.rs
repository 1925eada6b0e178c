//! More of "credentials go only where the user sent them": proxies, refresh after a 401 from any
//! call, what a 401 hint and the command line echo, listings cut at the page limit. The real
//! binary runs with a clean environment: no token or proxy variable leaks in from the machine.

use std::process::Output;
use std::time::Duration;

use serde_json::json;

use crate::cli::stderr;
use crate::security::{Agent, card, nothing_holds};

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

fn binary(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
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

async fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
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
