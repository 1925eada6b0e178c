//! The real binary, as scripts use it: NDJSON on stdout, one clear line on stderr, exit codes
//! 0 (success), 1 (protocol or transport error), 2 (bad usage).

use std::process::{Output, Stdio};

use serde_json::Value;

use crate::demo_client::{TOKEN, start_demo};

/// The binary with `args` and `env`, and none of the test environment's tokens.
fn binary(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-watch"));
    cmd.args(args).env_remove("A2A_TOKEN").env_remove("A2A_TOKEN_DEPLOYER");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

pub async fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), binary(args, env).output()).await;
    out.expect("the command finished in time").expect("the binary runs")
}

/// The binary running, its output piped and no input, killed when dropped.
pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Child {
    binary(args, env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary runs")
}

pub fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not NDJSON: {l}: {e}")))
        .collect()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_follow_prints_every_state_as_ndjson() {
    let agents = start_demo().await;
    let out = run(&["send", agents.url("test-runner"), "run the tests", "--follow"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = lines(&out);
    for l in &lines {
        for field in ["agent", "task", "context", "state", "class", "text", "at", "event"] {
            assert!(l.get(field).is_some(), "{field} missing in {l}");
        }
    }
    let states: Vec<&str> = lines.iter().map(|l| l["state"].as_str().unwrap()).collect();
    assert_eq!(states.first(), Some(&"SUBMITTED"));
    assert_eq!(states.last(), Some(&"COMPLETED"));
    assert_eq!(lines.last().unwrap()["text"], "1 failed, 11 passed");
    assert_eq!(lines.last().unwrap()["class"], "terminal");
    assert!(
        lines
            .iter()
            .any(|l| l["event"] == "artifact" && l["artifact"]["lastChunk"] == true)
    );
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_answered_with_reply() {
    let agents = start_demo().await;
    let url = agents.url("code-reviewer");
    let asked = run(&["send", url, "review this diff", "--follow"], &[]).await;
    let last = lines(&asked).pop().expect("lines");
    assert_eq!(last["state"], "INPUT_REQUIRED");
    let task = last["task"].as_str().unwrap();
    let answered = run(&["reply", url, task, "main", "--follow"], &[]).await;
    assert!(answered.status.success(), "{}", stderr(&answered));
    let done = lines(&answered).pop().unwrap();
    assert_eq!(
        (done["state"].as_str(), done["task"].as_str()),
        (Some("COMPLETED"), Some(task))
    );
    // A task that no longer waits is not answered again.
    let again = run(&["reply", url, task, "develop"], &[]).await;
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("not waiting for input"), "{}", stderr(&again));
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_come_from_the_agent_env_var_and_never_show() {
    let agents = start_demo().await;
    let url = agents.url("deployer");
    let refused = run(&["--name", "deployer", "list", url], &[]).await;
    assert_eq!(refused.status.code(), Some(1));
    let msg = stderr(&refused);
    assert!(msg.contains("401") && msg.contains("A2A_TOKEN_DEPLOYER"), "{msg}");
    assert_eq!(msg.lines().count(), 1, "one clear line: {msg}");

    let listed = run(
        &["--name", "deployer", "list", url, "--json"],
        &[("A2A_TOKEN_DEPLOYER", TOKEN)],
    )
    .await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    let wrong = run(&["list", url], &[("A2A_TOKEN", "not-the-token")]).await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        stderr(&wrong).contains("refused") && !stderr(&wrong).contains("not-the-token"),
        "{}",
        stderr(&wrong)
    );
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_usage_exits_2_and_unreachable_exits_1() {
    let agents = start_demo().await;
    let bogus = run(&["list", agents.url("test-runner"), "--state", "sleeping"], &[]).await;
    assert_eq!(bogus.status.code(), Some(2), "{}", stderr(&bogus));
    assert!(stderr(&bogus).contains("not a task state"));
    let missing = run(&["send"], &[]).await;
    assert_eq!(missing.status.code(), Some(2));
    agents.shutdown().await;
    // Nothing listens on port 9 of loopback.
    let down = run(&["card", "http://127.0.0.1:9"], &[]).await;
    assert_eq!(down.status.code(), Some(1));
    assert!(stderr(&down).contains("cannot connect"), "{}", stderr(&down));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_and_get_print_for_people_and_for_scripts() {
    let agents = start_demo().await;
    let url = agents.url("code-reviewer");
    let card = run(&["card", url], &[]).await;
    let text = String::from_utf8_lossy(&card.stdout);
    assert!(
        text.contains("code-reviewer") && text.contains("using      HTTP+JSON 1.0"),
        "{text}"
    );
    let json = run(&["--binding", "jsonrpc", "card", url, "--json"], &[]).await;
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["supportedInterfaces"][0]["protocolBinding"], "HTTP+JSON");

    let sent = run(&["send", url, "review this diff", "--no-wait"], &[]).await;
    let task = lines(&sent)[0]["task"].as_str().unwrap().to_string();
    let got = run(&["get", url, &task, "--json"], &[]).await;
    let v: Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(v["id"], task.as_str());
    let canceled = run(&["cancel", url, &task], &[]).await;
    assert_eq!(lines(&canceled)[0]["state"], "CANCELED");
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactions_are_answered_from_the_command_line() {
    let agents = start_demo().await;
    let url = agents.url("assistant");
    let state = |out: &Output| lines(out).pop().map(|l| l["state"].as_str().unwrap_or("").to_string());
    let asked = run(&["send", url, "open a pull request", "--follow"], &[]).await;
    let task = lines(&asked).pop().unwrap()["task"].as_str().unwrap().to_string();
    assert_eq!(state(&asked).as_deref(), Some("INPUT_REQUIRED"));
    let answered = run(&["reply", url, &task, "--value", "\"a2a-watch\"", "--follow"], &[]).await;
    assert_eq!(
        state(&answered).as_deref(),
        Some("AUTH_REQUIRED"),
        "{}",
        stderr(&answered)
    );
    // Text never approves (docs/protocol-notes.md, "interactions/v1"): the agent refuses it, and
    // the task keeps waiting.
    let text = run(&["reply", url, &task, "yes", "--force"], &[]).await;
    assert_eq!(text.status.code(), Some(1));
    assert!(stderr(&text).contains("InvalidParams"), "{}", stderr(&text));
    let approved = run(
        &["reply", url, &task, "--approve", "--message-id", "answer-1", "--follow"],
        &[],
    )
    .await;
    assert_eq!(
        state(&approved).as_deref(),
        Some("AUTH_REQUIRED"),
        "the connection request follows"
    );
    // The same messageId again answers once: nothing moves on.
    let retried = run(&["reply", url, &task, "--approve", "--message-id", "answer-1"], &[]).await;
    assert_eq!(
        state(&retried).as_deref(),
        Some("AUTH_REQUIRED"),
        "{}",
        stderr(&retried)
    );
    let connected = run(&["reply", url, &task, "--connected", "true", "--follow"], &[]).await;
    assert_eq!(
        state(&connected).as_deref(),
        Some("COMPLETED"),
        "{}",
        stderr(&connected)
    );
    let no_more = run(&["reply", url, &task, "--deny"], &[]).await;
    assert_eq!(no_more.status.code(), Some(2), "a finished task is not answered");
    agents.shutdown().await;
}

/// `serve-demo` starts (its deployer token is the global `--token`; a flag of its own by the same
/// name once made clap panic at start), and the deployer takes that token and no other.
#[tokio::test]
async fn serve_demo_starts_and_its_deployer_wants_the_token_given() {
    use tokio::io::AsyncBufReadExt;
    let mut child = spawn(&["serve-demo", "--base-port", "0", "--token", "s3cret-demo"], &[]);
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let deployer = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(line) = out.next_line().await.unwrap() {
            if let Some(url) = line.trim().strip_prefix("deployer") {
                return url.trim().to_string();
            }
        }
        panic!("serve-demo ended without listing the deployer");
    })
    .await
    .expect("serve-demo lists its agents");
    let list = |token: &'static str| {
        let url = deployer.clone();
        async move {
            let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
            reqwest::Client::new()
                .post(format!("{url}/"))
                .header("A2A-Version", "1.0")
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert!(list("s3cret-demo").await.is_success());
    assert_eq!(list("demo-token").await, reqwest::StatusCode::UNAUTHORIZED);
    child.kill().await.unwrap();
}
