//! The client on par with the best A2A command lines, and a terminal tool's conventions (issue
//! 13): data and file parts on the wire, artifacts saved as files whatever the agent names them,
//! the extended card, `status` for a prompt, completions and the man page. Through the real
//! binary, against the demo agents or small agents written here that record every request.

use std::path::{Path, PathBuf};

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

use crate::cli::{lines, run, stderr};
use crate::demo_client::start_demo;
use crate::security::{Agent, Seen, bearer, card};

pub(crate) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A fresh directory of this test's own under the system's temp dir.
pub(crate) fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-watch-{test}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file and link under `dir`, relative to it, sorted.
pub(crate) fn tree(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                todo.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
        }
    }
    found.sort();
    found
}

/// The JSON-RPC result `value` for the request `seen`.
pub(crate) fn rpc_result(seen: &Seen, value: Value) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": value})).into_response()
}

pub(crate) fn method(seen: &Seen) -> &str {
    seen.body["method"].as_str().unwrap_or_default()
}

/// A 0.3 card: one JSON-RPC interface at `/a2a`.
fn card_0_3(name: &str, extra: Value) -> Value {
    let mut card = json!({
        "name": name, "description": "d", "version": "1", "protocolVersion": "0.3.0",
        "url": "/a2a", "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        card[k] = v;
    }
    card
}

// ---- completions and the man page ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_are_valid_shell_and_the_man_page_is_roff() {
    let bash = run(&["completions", "bash"], &[]).await;
    assert!(bash.status.success(), "{}", stderr(&bash));
    let script = scratch("completions").join("a2a-watch.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let text = String::from_utf8_lossy(&bash.stdout);
    for word in [
        "status",
        "completions",
        "--save-artifacts",
        "--extended",
        "--data",
        "--file",
    ] {
        assert!(text.contains(word), "{word} is not completed");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell], &[]).await;
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("a2a-watch"), "{shell}");
    }
    let unknown = run(&["completions", "tcsh"], &[]).await;
    assert_eq!(unknown.status.code(), Some(2));
    std::fs::remove_dir_all(script.parent().unwrap()).unwrap();

    let man = run(&["man"], &[]).await;
    assert!(man.status.success(), "{}", stderr(&man));
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(page.lines().any(|l| l.starts_with(".TH a2a-watch 1")), "{page}");
    assert!(page.contains(".SH NAME") && page.contains("status"), "{page}");
    assert!(
        page.contains(r"\fB\-\-headless\fR"),
        "the service flag is on the page: {page}"
    );
}

// ---- status ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_counts_what_waits_and_what_failed_and_says_who_could_not_be_read() {
    let agents = start_demo().await;
    let (reviewer, runner, assistant) = (
        agents.url("code-reviewer"),
        agents.url("test-runner"),
        agents.url("assistant"),
    );
    // Nothing asked of anyone yet: the line is empty.
    let quiet = run(&["status", "--agent", reviewer, "--agent", runner], &[]).await;
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert!(quiet.stdout.is_empty(), "{}", String::from_utf8_lossy(&quiet.stdout));

    for (url, text) in [
        (reviewer, "review this diff"),
        (runner, "run the tests, they will fail"),
        (runner, "run the tests"),
    ] {
        let sent = run(&["send", url, text], &[]).await;
        assert!(sent.status.success(), "{}", stderr(&sent));
    }
    let both = ["status", "--agent", reviewer, "--agent", runner, "--agent", assistant];
    let plain = run(&both, &[]).await;
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "◆ 1 waiting · ✖ 1 failed\n");

    let tmux = run(&[&both[..], &["--format", "tmux"][..]].concat(), &[]).await;
    assert_eq!(
        String::from_utf8_lossy(&tmux.stdout),
        "#[fg=yellow]◆ 1 waiting#[default] · #[fg=red]✖ 1 failed#[default]\n"
    );
    let json = run(&[&both[..], &["--format", "json"][..]].concat(), &[]).await;
    assert_eq!(
        lines(&json),
        vec![json!({"waiting": 1, "failed": 1, "working": 0, "unreachable": 0, "unauthorized": 0, "agents": 3})]
    );

    // `--context` before the command narrows every listing: no task is in this one.
    let elsewhere = run(&[&["--context", "no-such-context"][..], &both[..]].concat(), &[]).await;
    assert_eq!(elsewhere.status.code(), Some(0), "{}", stderr(&elsewhere));
    assert!(
        elsewhere.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&elsewhere.stdout)
    );

    // Nothing listens on port 9 of loopback: counted, said, exit 1; the others still counted,
    // agents named before the command too.
    let down = run(
        &[
            "--agent",
            reviewer,
            "status",
            "--agent",
            "http://127.0.0.1:9",
            "--timeout",
            "5",
        ],
        &[],
    )
    .await;
    assert_eq!(down.status.code(), Some(1), "{}", stderr(&down));
    assert_eq!(String::from_utf8_lossy(&down.stdout), "◆ 1 waiting · ✖ 1 unreachable\n");
    assert!(stderr(&down).contains("127.0.0.1:9"), "{}", stderr(&down));
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_gives_up_on_a_silent_agent_within_its_timeout_and_shows_no_agent_text() {
    // An agent that takes connections and never answers, and one whose tasks carry escape
    // sequences in every field it controls.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent = format!("http://{}", listener.local_addr().unwrap());
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let hostile = Agent::start(card("\u{1b}]0;pwned\u{7}", json!({})), |seen| {
        (method(seen) == "ListTasks").then(|| {
            let task = json!({"id": "\u{1b}[2J", "contextId": "c",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                    "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "\u{1b}]52;c;aGk=\u{7}"}]}}});
            rpc_result(seen, json!({"tasks": [task], "nextPageToken": ""}))
        })
    })
    .await;
    // A 0.3 agent answers its card but has no ListTasks: read, not counted, not unreachable.
    let old = Agent::start(card_0_3("old", json!({})), |_| None).await;
    let out = run(
        &[
            "status",
            "--agent",
            &hostile.url,
            "--agent",
            &silent,
            "--agent",
            &old.url,
            "--timeout",
            "1",
            "--format",
            "json",
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        lines(&out),
        vec![json!({"waiting": 1, "failed": 0, "working": 0, "unreachable": 1, "unauthorized": 0, "agents": 3})]
    );
    assert!(stderr(&out).contains("no answer within 1 s"), "{}", stderr(&out));
    assert!(!out.stderr.contains(&0x1b) && !out.stdout.contains(&0x1b));
    holder.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_tells_an_agent_that_refuses_us_from_one_that_is_down() {
    // One agent lists a working task; one serves its card but answers every call 401, one 403;
    // nothing listens on port 9.
    let fine = Agent::start(card("fine", json!({})), |_| None).await;
    let refusing = |status: StatusCode| move |seen: &Seen| (!seen.is_card()).then(|| status.into_response());
    let locked = Agent::start(card("locked", json!({})), refusing(StatusCode::UNAUTHORIZED)).await;
    let forbidden = Agent::start(card("forbidden", json!({})), refusing(StatusCode::FORBIDDEN)).await;
    let agents = [
        "status",
        "--agent",
        &fine.url,
        "--agent",
        &locked.url,
        "--agent",
        &forbidden.url,
        "--agent",
        "http://127.0.0.1:9",
        "--timeout",
        "5",
    ];
    let plain = run(&agents, &[]).await;
    assert_eq!(
        plain.status.code(),
        Some(1),
        "a refusal is no success: {}",
        stderr(&plain)
    );
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        "● 1 working · ✖ 1 unreachable · ⊘ 2 unauthorized\n"
    );
    assert!(
        stderr(&plain).contains("3 of 4 agents could not be read"),
        "{}",
        stderr(&plain)
    );
    let tmux = run(&[&agents[..], &["--format", "tmux"][..]].concat(), &[]).await;
    assert_eq!(
        String::from_utf8_lossy(&tmux.stdout),
        "#[fg=cyan]● 1 working#[default] · #[fg=red]✖ 1 unreachable#[default] · \
         #[fg=magenta]⊘ 2 unauthorized#[default]\n"
    );
    let json = run(&[&agents[..], &["--format", "json"][..]].concat(), &[]).await;
    assert_eq!(
        lines(&json),
        vec![json!({"waiting": 0, "failed": 0, "working": 1, "unreachable": 1, "unauthorized": 2, "agents": 4})]
    );

    // A token meant for an agent on plain http off loopback is not sent, and nothing is asked:
    // a setting to fix, as the dashboard says.
    let withheld = run(&["status", "--agent", "http://192.0.2.1:9", "--token", "s3cret"], &[]).await;
    assert_eq!(withheld.status.code(), Some(1), "{}", stderr(&withheld));
    assert_eq!(String::from_utf8_lossy(&withheld.stdout), "⊘ 1 unauthorized\n");
    assert!(stderr(&withheld).contains("nothing sent"), "{}", stderr(&withheld));
    assert!(!stderr(&withheld).contains("s3cret"), "{}", stderr(&withheld));

    // Grouped in the config: `--group` counts one group's agents alone.
    let config = scratch("status-groups").join("config.toml");
    let entries = [("fine", &fine.url, "ops"), ("locked", &locked.url, "payments")];
    let toml: String = (entries.iter())
        .map(|(name, url, group)| format!("[[agent]]\nname = \"{name}\"\nurl = \"{url}\"\ngroup = \"{group}\"\n"))
        .collect();
    std::fs::write(&config, toml).unwrap();
    let config = config.to_str().unwrap();
    let ops = run(&["status", "--config", config, "--group", "ops"], &[]).await;
    assert_eq!(ops.status.code(), Some(0), "{}", stderr(&ops));
    assert_eq!(String::from_utf8_lossy(&ops.stdout), "● 1 working\n");
    let payments = run(&["status", "--config", config, "--group", "payments"], &[]).await;
    assert_eq!(payments.status.code(), Some(1), "{}", stderr(&payments));
    assert_eq!(String::from_utf8_lossy(&payments.stdout), "⊘ 1 unauthorized\n");
    let none = run(&["status", "--config", config, "--group", "search"], &[]).await;
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(
        stderr(&none).contains("no agent is in the group \"search\""),
        "{}",
        stderr(&none)
    );
}

// ---- data and file parts ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_puts_data_and_file_parts_on_the_wire_of_each_binding_and_version() {
    let dir = scratch("parts");
    let file = dir.join("plot.PNG");
    let bytes = [0x89, b'P', b'N', b'G', 0, 1, 2, 255];
    std::fs::write(&file, bytes).unwrap();
    let file = file.to_str().unwrap();
    let args = |url: &str| {
        vec![
            "send".to_string(),
            url.to_string(),
            "look at this".into(),
            "--data".into(),
            r#"{"budget": 900}"#.into(),
            "--file".into(),
            file.into(),
        ]
    };
    let file_part = json!({"raw": b64(&bytes), "mediaType": "image/png", "filename": "plot.PNG"});
    let parts_1_0 = json!([{"text": "look at this"}, {"data": {"budget": 900}}, file_part]);

    let agent = Agent::start(card("a", json!({})), |_| None).await;
    for binding in ["jsonrpc", "rest"] {
        let mut argv = args(&agent.url);
        argv.extend(["--binding".into(), binding.into()]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = run(&argv, &[]).await;
        assert!(out.status.success(), "{binding}: {}", stderr(&out));
    }
    let calls = agent.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].body["method"], "SendMessage");
    assert_eq!(calls[0].body["params"]["message"]["parts"], parts_1_0);
    assert_eq!(calls[1].path, "/rest/message:send");
    assert_eq!(calls[1].body["message"]["parts"], parts_1_0);

    let old = Agent::start(card_0_3("old", json!({})), |seen| {
        (method(seen) == "message/send").then(|| {
            rpc_result(
                seen,
                json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"}}),
            )
        })
    })
    .await;
    let argv = args(&old.url);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = run(&argv, &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        old.calls()[0].body["params"]["message"]["parts"],
        json!([
            {"kind": "text", "text": "look at this"},
            {"kind": "data", "data": {"budget": 900}},
            {"kind": "file", "file": {"bytes": b64(&bytes), "mimeType": "image/png", "name": "plot.PNG"}}
        ])
    );

    // Text is optional once a part is given.
    let only_file = run(&["send", &agent.url, "--file", file], &[]).await;
    assert!(only_file.status.success(), "{}", stderr(&only_file));
    assert_eq!(agent.calls()[2].body["params"]["message"]["parts"], json!([file_part]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_parts_are_refused_before_anything_is_sent() {
    let agent = Agent::start(card("a", json!({})), |_| None).await;
    let bad = run(&["send", &agent.url, "hi", "--data", "{budget: 900}"], &[]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--data is not valid JSON"), "{}", stderr(&bad));
    let missing = run(
        &["send", &agent.url, "--file", "/nonexistent/a2a-watch/report.pdf"],
        &[],
    )
    .await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("--file /nonexistent/a2a-watch/report.pdf: cannot read it"),
        "{}",
        stderr(&missing)
    );
    let nothing = run(&["send", &agent.url], &[]).await;
    assert_eq!(nothing.status.code(), Some(2));
    assert!(agent.seen().is_empty(), "{:?}", agent.seen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_sends_parts_on_the_task_with_or_without_text() {
    let agent = Agent::start(card("a", json!({})), |seen| {
        (method(seen) == "GetTask").then(|| {
            rpc_result(
                seen,
                json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}),
            )
        })
    })
    .await;
    let out = run(&["reply", &agent.url, "t-1", "--data", r#"{"approved": [1, 2]}"#], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["reply", &agent.url, "t-1", "here", "--data", "42"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sends: Vec<Value> = agent
        .calls()
        .into_iter()
        .filter(|s| method(s) == "SendMessage")
        .map(|s| s.body["params"]["message"].clone())
        .collect();
    assert_eq!(sends[0]["parts"], json!([{"data": {"approved": [1, 2]}}]));
    assert_eq!(sends[1]["parts"], json!([{"text": "here"}, {"data": 42}]));
    for m in &sends {
        assert_eq!((&m["taskId"], &m["contextId"]), (&json!("t-1"), &json!("c-1")));
    }
    let mixed = run(&["reply", &agent.url, "t-1", "--approve", "--data", "1"], &[]).await;
    assert_eq!(mixed.status.code(), Some(2), "{}", stderr(&mixed));
}

// ---- artifacts as files ----

/// A task whose artifacts have hostile names, one of each kind of part.
fn hostile_task() -> Value {
    json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [
        {"artifactId": "a1", "name": "../../etc/passwd", "parts": [{"text": "root:x:0:0"}]},
        {"artifactId": "a2", "name": "\u{1b}]52;c;aGk=\u{7}report", "parts": [
            {"data": {"budget": 900}},
            {"raw": b64(b"\x89PNG"), "mediaType": "image/png", "filename": "../../../tmp/evil.png"},
            {"url": "https://example.com/\u{1b}[2Jbig.pdf"}]},
        {"artifactId": "a3", "name": "../../etc/passwd", "parts": [{"text": "again"}]},
        {"artifactId": "/abs/../..", "parts": [{"raw": b64(b"\x00\x01"), "mediaType": "application/pdf"}]}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_artifacts_stay_inside_the_directory_whatever_they_are_called() {
    let agent = Agent::start(card("a", json!({})), |seen| {
        (method(seen) == "GetTask").then(|| rpc_result(seen, hostile_task()))
    })
    .await;
    let root = scratch("artifacts");
    let dir = root.join("out");
    let dir_arg = dir.to_str().unwrap();
    // A file and a link to outside already there, under names the agent's first artifact wants.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("_.._etc_passwd.txt"), "mine").unwrap();
    std::fs::write(root.join("outside.txt"), "outside").unwrap();
    std::os::unix::fs::symlink(root.join("outside.txt"), dir.join("_.._etc_passwd-2.txt")).unwrap();

    let out = run(&["get", &agent.url, "t-1", "--save-artifacts", dir_arg, "--json"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!out.stdout.contains(&0x1b), "{}", String::from_utf8_lossy(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "_.._etc_passwd-3.txt",
            "_]52;c;aGk=_report-1.json",
            "_.._.._tmp_evil.png",
            "_.._etc_passwd-4.txt",
            "_abs_.._.pdf",
        ]
        .map(|name| format!("{dir_arg}/{name}"))
    );
    assert_eq!(
        report["urls"],
        json!([{"artifact": "report", "url": "https://example.com/big.pdf"}])
    );
    assert_eq!(std::fs::read_to_string(dir.join("_.._etc_passwd.txt")).unwrap(), "mine");
    assert_eq!(
        std::fs::read_to_string(dir.join("_.._etc_passwd-3.txt")).unwrap(),
        "root:x:0:0"
    );
    assert_eq!(std::fs::read(dir.join("_.._.._tmp_evil.png")).unwrap(), b"\x89PNG");
    let data: Value = serde_json::from_slice(&std::fs::read(dir.join("_]52;c;aGk=_report-1.json")).unwrap()).unwrap();
    assert_eq!(data, json!({"budget": 900}));
    assert_eq!(std::fs::read_to_string(root.join("outside.txt")).unwrap(), "outside");
    let mut expected: Vec<String> = [
        "out",
        "outside.txt",
        "out/_.._etc_passwd.txt",
        "out/_.._etc_passwd-2.txt",
    ]
    .into_iter()
    .map(String::from)
    .chain(
        paths
            .iter()
            .map(|p| p.strip_prefix(&format!("{}/", root.display())).unwrap().to_string()),
    )
    .collect();
    expected.sort();
    assert_eq!(tree(&root), expected);

    // --force replaces instead: the files of the first run, and the link, not what it points to.
    let forced = run(&["get", &agent.url, "t-1", "--save-artifacts", dir_arg, "--force"], &[]).await;
    assert!(forced.status.success(), "{}", stderr(&forced));
    let said = String::from_utf8_lossy(&forced.stdout);
    assert!(
        said.contains(&format!("wrote {dir_arg}/_.._etc_passwd.txt (10 bytes)")),
        "{said}"
    );
    assert!(
        said.contains("url   https://example.com/big.pdf (artifact report, not fetched)"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("_.._etc_passwd.txt")).unwrap(),
        "root:x:0:0"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("_.._etc_passwd-2.txt")).unwrap(),
        "again"
    );
    assert!(!dir.join("_.._etc_passwd-2.txt").is_symlink());
    assert_eq!(std::fs::read_to_string(root.join("outside.txt")).unwrap(), "outside");
    std::fs::remove_dir_all(&root).unwrap();
}

// ---- the extended card ----

const EXT_TOKEN: &str = "ext-s3cret";

/// An agent asking for a bearer token whose extended card (on either binding and version) has
/// one more skill, given only for the right token.
async fn extended_agent(public: Value) -> Agent {
    Agent::start(public.clone(), move |seen| {
        let asked = matches!(
            method(seen),
            "GetExtendedAgentCard" | "agent/getAuthenticatedExtendedCard"
        ) || seen.path == "/rest/extendedAgentCard";
        if !asked {
            return None;
        }
        if seen.header("authorization") != Some(&format!("Bearer {EXT_TOKEN}")) {
            return Some(StatusCode::UNAUTHORIZED.into_response());
        }
        let mut extended = public.clone();
        extended["skills"] =
            json!([{"id": "ops", "name": "operate\u{1b}[31m", "description": "for staff", "tags": []}]);
        Some(if seen.method == "GET" {
            Json(extended).into_response()
        } else {
            rpc_result(seen, extended)
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extended_card_is_fetched_with_the_credential_where_the_card_offers_it() {
    let env = [("A2A_TOKEN_OPS", EXT_TOKEN)];
    let agent = extended_agent(card("a", bearer())).await;
    for binding in ["jsonrpc", "rest"] {
        let out = run(
            &["--name", "ops", "--binding", binding, "card", &agent.url, "--extended"],
            &env,
        )
        .await;
        assert!(out.status.success(), "{binding}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("skill      operate: for staff"), "{text}");
        assert!(text.contains("card       GetExtendedAgentCard of "), "{text}");
        assert!(!out.stdout.contains(&0x1b));
    }
    let json = run(&["--name", "ops", "card", &agent.url, "--extended", "--json"], &env).await;
    let card: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(card["skills"][0]["id"], "ops");
    let calls = agent.calls();
    assert_eq!(
        calls
            .iter()
            .map(|s| (s.method.as_str(), s.path.as_str()))
            .collect::<Vec<_>>(),
        [("POST", "/a2a"), ("GET", "/rest/extendedAgentCard"), ("POST", "/a2a")]
    );
    assert_eq!(method(&calls[0]), "GetExtendedAgentCard");

    // 0.3 names it agent/getAuthenticatedExtendedCard and offers it at the card's top level.
    let old = extended_agent(card_0_3(
        "old",
        json!({"supportsAuthenticatedExtendedCard": true,
            "securitySchemes": {"b": {"type": "http", "scheme": "bearer"}}, "security": [{"b": []}]}),
    ))
    .await;
    let out = run(&["--name", "ops", "card", &old.url, "--extended"], &env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(method(&old.calls()[0]), "agent/getAuthenticatedExtendedCard");

    // The wrong credential: refused, said, exit 1.
    let wrong = run(
        &["--name", "ops", "card", &agent.url, "--extended"],
        &[("A2A_TOKEN_OPS", "nope")],
    )
    .await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains("401"), "{}", stderr(&wrong));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_that_offers_no_extended_card_is_not_asked_for_one() {
    let plain = Agent::start(card("plain", json!({"capabilities": {"streaming": true}})), |_| None).await;
    let out = run(&["card", &plain.url, "--extended"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("plain: the card offers no extended card"),
        "{}",
        stderr(&out)
    );
    assert!(plain.calls().is_empty(), "{:?}", plain.calls());
}
