//! Secrets that must not reach output, recordings or files (issue 20): a key in an agent URL's
//! query, a `token_command` and what it prints, two names that read one token variable, the push
//! receiver's token over plain http, and the files `--record` and `--snapshot` write. Through the
//! real binary, against small agents on this machine that record every request.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::cli::stderr;
use crate::security::{Agent, Seen, card};
use crate::security_more::binary;

const SECRET: &str = "S3CRET-in-the-query";

/// An agent whose listing holds one finished task, so `--until all-terminal` ends at once.
async fn finished_agent(name: &str) -> Agent {
    Agent::start(card(name, json!({})), |s: &Seen| {
        (s.body["method"] == "ListTasks").then(|| {
            let task = json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}});
            let result = json!({"tasks": [task], "nextPageToken": ""});
            axum::Json(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": result})).into_response()
        })
    })
    .await
}

/// The binary run to its end, or None if it did not end within `limit`.
async fn run_within(args: &[&str], limit: Duration) -> Option<Output> {
    let out = tokio::time::timeout(limit, binary(args, &[]).output()).await.ok()?;
    Some(out.expect("the binary runs"))
}

/// A scratch directory of this test process, named for `what`, empty.
fn scratch(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-secrets-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(out))
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

// ---- a key in an agent URL ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_an_agent_url_reaches_no_output_and_no_recording() {
    let flagged = finished_agent("flagged").await;
    let configured = finished_agent("configured").await;
    let dir = scratch("url");
    let config = dir.join("config.toml");
    let configured_url = format!("{}/?key={SECRET}", configured.url);
    std::fs::write(&config, format!("[[agent]]\nurl = \"{configured_url}\"\n")).unwrap();
    let recording = dir.join("run.ndjson");
    let flagged_url = format!("{}/?key={SECRET}#{SECRET}", flagged.url);
    let out = run_within(
        &[
            "--config",
            config.to_str().unwrap(),
            "--agent",
            &flagged_url,
            "--json",
            "--until",
            "all-terminal",
            "--record",
            recording.to_str().unwrap(),
        ],
        Duration::from_secs(30),
    )
    .await
    .expect("the run ends once every task is terminal");
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = text(&out);
    let recorded = std::fs::read_to_string(&recording).unwrap();
    for (what, all) in [("printed", &printed), ("recorded", &recorded)] {
        assert!(!all.contains(SECRET), "{what}: {all}");
    }
    // The agent lines name the URL without its query, and so does the name shown before the
    // card is read.
    let agent_lines: Vec<Value> = json_lines(&printed)
        .into_iter()
        .filter(|l| l.get("url").is_some())
        .collect();
    assert!(!agent_lines.is_empty(), "{printed}");
    let shown = [format!("{}/", configured.url), format!("{}/", flagged.url)];
    for line in &agent_lines {
        assert!(shown.iter().any(|s| line["url"] == s.as_str()), "{line}");
    }
    let header: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(header["agents"], json!([{"url": shown[0]}, {"url": shown[1]}]));
    let _ = std::fs::remove_dir_all(dir);
}

/// A URL that does not parse (a bad port here) is named in the agent's health, and in what a
/// command prints to stderr, cut as a URL would be: no query, no password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_that_does_not_parse_is_named_without_its_key_or_password() {
    let dir = scratch("unparsed");
    let config = dir.join("config.toml");
    let unparsed = format!("https://h:70000/a2a?key={SECRET}");
    std::fs::write(&config, format!("[[agent]]\nurl = \"{unparsed}\"\n")).unwrap();
    let config = config.to_str().unwrap();
    let says_why = |l: &Value| {
        l["detail"]
            .as_str()
            .is_some_and(|d| d.contains("neither a card file nor a URL"))
    };
    let (_child, lines) = headless_until(&["--config", config], Duration::from_secs(30), says_why).await;
    let lines = lines.expect("the agent's row says its URL does not parse");
    let printed: String = lines.iter().map(Value::to_string).collect();
    assert!(!printed.contains(SECRET), "{printed}");
    assert!(printed.contains("https://h:70000/a2a"), "{printed}");

    let with_password = format!("https://u:{SECRET}/x@h:70000/a2a");
    for args in [
        vec!["--config", config, "status"],
        vec!["list", unparsed.as_str()],
        vec!["list", with_password.as_str()],
    ] {
        let out = run_within(&args, Duration::from_secs(30))
            .await
            .expect("the command ends");
        assert!(!out.status.success(), "{args:?}");
        let all = text(&out);
        assert!(all.contains("neither a card file nor a URL"), "{args:?}: {all}");
        assert!(!all.contains(SECRET), "{args:?}: {all}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

// ---- token_command ----

/// The dashboard run headless with `args`, its `--json` lines read until one satisfies `done`
/// (Ok: every line by then) or `limit` passes (Err: the lines seen). The process is handed back
/// still running (it stops when dropped).
async fn headless_until(
    args: &[&str],
    limit: Duration,
    done: impl Fn(&Value) -> bool,
) -> (tokio::process::Child, Result<Vec<Value>, Vec<Value>>) {
    let mut child = binary(&[args, &["--json"]].concat(), &[])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut reader = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    while let Ok(Ok(Some(line))) = tokio::time::timeout_at(deadline, reader.next_line()).await {
        let line: Value = serde_json::from_str(&line).unwrap();
        let found = done(&line);
        seen.push(line);
        if found {
            return (child, Ok(seen));
        }
    }
    (child, Err(seen))
}

/// An agent named `name` whose config entry has `command` as its `token_command`: the lines
/// printed until the row says it is unauthorized (within `limit`), and that row's detail.
async fn failing_token_command(name: &str, command: &str, limit: Duration) -> (Vec<Value>, String) {
    let agent = finished_agent(name).await;
    let dir = scratch(name);
    let config = dir.join("config.toml");
    let entry = format!(
        "[[agent]]\nname = \"{name}\"\nurl = \"{}\"\ntoken_command = \"{command}\"\n",
        agent.url
    );
    std::fs::write(&config, entry).unwrap();
    let (_running, lines) = headless_until(&["--config", config.to_str().unwrap()], limit, |line| {
        line["health"] == "unauthorized"
    })
    .await;
    let _ = std::fs::remove_dir_all(dir);
    let lines = lines.unwrap_or_else(|seen| panic!("no unauthorized line within {limit:?}: {seen:?}"));
    let detail = lines.last().unwrap()["detail"].as_str().unwrap_or_default().to_string();
    (lines, detail)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_token_command_is_named_by_its_key_and_status_never_quoted() {
    let command = format!("echo tok-{SECRET}; vault read -field=token secret/{SECRET} 2>/dev/null; exit 3");
    let (lines, detail) = failing_token_command("vaulted", &command, Duration::from_secs(20)).await;
    assert!(
        detail.contains("token_command") && detail.contains("exit status: 3"),
        "{detail}"
    );
    let all = format!("{lines:?}");
    assert!(!all.contains(SECRET) && !all.contains("vault read"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_command_that_prints_without_end_is_cut_at_64_kib_and_stopped() {
    // `yes` prints for ever: its output is capped and it is stopped, well before the 30 s timeout.
    let (_, detail) = failing_token_command("endless", "yes", Duration::from_secs(10)).await;
    assert!(detail.contains("64 KiB"), "{detail}");
}

// ---- names that read one variable ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_names_that_read_one_token_variable_are_refused_at_start() {
    for (a, b, var) in [
        ("prod-db", "prod_db", "A2A_TOKEN_PROD_DB"),
        ("café", "cafè", "A2A_TOKEN_CAF_"),
    ] {
        let first = format!("{a}=http://127.0.0.1:9");
        let second = format!("{b}=http://127.0.0.1:10");
        let out = run_within(
            &["--agent", &first, "--agent", &second, "--json"],
            Duration::from_secs(10),
        )
        .await
        .expect("refused at start, not run");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let message = stderr(&out);
        assert!(
            message.contains(a) && message.contains(b) && message.contains(var),
            "{message}"
        );
    }
}

// ---- the push receiver's token ----

/// This machine's address on its default route, if it has one that is not loopback (no packet
/// is sent: connecting a UDP socket only picks the route).
fn address_off_loopback() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// A card that offers push and does not stream, with `extra` fields.
fn pushing_card(extra: Value) -> Value {
    let mut card = card("pusher", extra);
    card["capabilities"] = json!({"streaming": false, "pushNotifications": true});
    card
}

/// Watches `url` headless with the push receiver on: `agent` (where the card sends requests)
/// lists its task but is never asked to push, and an agent line says why, naming `why`.
async fn push_is_off(url: &str, agent: &Agent, why: &str) {
    let args = ["--agent", url, "--push-listen", "127.0.0.1:0"];
    let (_running, lines) = headless_until(&args, Duration::from_secs(8), |line| line["push_off"].is_string()).await;
    // The task listed is being watched by now: long enough for a registration to have gone.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let calls = agent.calls();
    assert!(calls.iter().any(|s| s.body["method"] == "ListTasks"), "{calls:?}");
    let registrations: Vec<&Seen> = calls
        .iter()
        .filter(|s| s.body["method"] == "CreateTaskPushNotificationConfig")
        .collect();
    assert!(registrations.is_empty(), "{registrations:?}");
    let lines = lines.unwrap_or_else(|seen| panic!("no line says why push is off: {seen:?}"));
    let said = lines.last().unwrap()["push_off"].as_str().unwrap().to_string();
    assert!(said.contains(why), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_token_never_goes_over_plain_http_off_loopback_and_the_row_says_why() {
    let Some(ip) = address_off_loopback() else {
        eprintln!("skipped: this machine has no address off loopback");
        return;
    };
    let agent = Agent::start_on(ip, pushing_card(json!({})), |_| None::<Response>).await;
    push_is_off(&agent.url, &agent, "plain http").await;
}

/// The same rule on loopback alone: a card whose interface is on another origin (another port)
/// gets no credential, so no push token either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_token_never_goes_to_another_origin_and_the_row_says_why() {
    let elsewhere = Agent::start(pushing_card(json!({})), |_| None::<Response>).await;
    let interfaces =
        json!([{"url": format!("{}/a2a", elsewhere.url), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    let pointing = Agent::start(pushing_card(json!({"supportedInterfaces": interfaces})), |_| {
        None::<Response>
    })
    .await;
    push_is_off(&pointing.url, &elsewhere, "another origin").await;
}

// ---- files written: recordings and screenshots ----

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Records a run of `agent` to `path` (with `--force` if asked).
async fn record(agent: &Agent, path: &Path, force: bool) -> Output {
    let mut args = vec![
        "--agent",
        agent.url.as_str(),
        "--json",
        "--until",
        "all-terminal",
        "--record",
        path.to_str().unwrap(),
    ];
    if force {
        args.push("--force");
    }
    run_within(&args, Duration::from_secs(30)).await.expect("the run ends")
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recordings_and_screenshots_are_private_never_through_a_link_nor_over_another_file() {
    let agent = finished_agent("files").await;
    let dir = scratch("files");
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();

    let recording = dir.join("run.ndjson");
    let out = record(&agent, &recording, false).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(mode(&recording), 0o600);

    // A recording there already: replaced only with --force.
    let again = record(&agent, &recording, false).await;
    assert!(!again.status.success());
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    // --force writes a new file in its place: a hard link to the old one keeps the old recording.
    std::fs::set_permissions(&recording, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let hard_link = dir.join("hard-link.ndjson");
    std::fs::hard_link(&recording, &hard_link).unwrap();
    let old = std::fs::read_to_string(&recording).unwrap();
    let forced = record(&agent, &recording, true).await;
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(mode(&recording), 0o600);
    assert_eq!(std::fs::read_to_string(&hard_link).unwrap(), old);
    assert_ne!(std::fs::read_to_string(&recording).unwrap(), old);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left.len(),
        3,
        "nothing but the recording, its link and the victim: {left:?}"
    );

    // Another file, or a link to one: never written, --force or not.
    let link = dir.join("link.ndjson");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    for path in [&victim, &link] {
        for force in [false, true] {
            let out = record(&agent, path, force).await;
            assert!(!out.status.success(), "{}", path.display());
        }
    }
    // Nor a link to a recording.
    let to_recording = dir.join("to-recording.ndjson");
    std::os::unix::fs::symlink(&recording, &to_recording).unwrap();
    let before = std::fs::read(&recording).unwrap();
    let out = record(&agent, &to_recording, true).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("link"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&recording).unwrap(), before);

    // Screenshots: a new file, 0600; never over a file or through a link.
    let picture = dir.join("shot.svg");
    let snapshot = |to: &Path| {
        run_within_blocking(&[
            "replay",
            recording.to_str().unwrap(),
            "--snapshot",
            to.to_str().unwrap(),
        ])
    };
    let out = snapshot(&picture);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(mode(&picture), 0o600);
    let shot_link = dir.join("shot-link.svg");
    std::os::unix::fs::symlink(&victim, &shot_link).unwrap();
    for path in [&victim, &shot_link] {
        assert!(!snapshot(path).status.success(), "{}", path.display());
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let _ = std::fs::remove_dir_all(dir);
}

/// `replay` needs no network: run to its end.
fn run_within_blocking(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_a2a-watch"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The log file is the same kind of private file: created 0600, appended to, and never written
/// through a link already at its path (the run stops, naming the path, and the link's target is
/// untouched).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_file_is_private_and_never_written_through_a_link() {
    let agent = finished_agent("logs").await;
    let dir = scratch("logs");
    let run = |log: PathBuf| {
        let agent = agent.url.clone();
        async move {
            let log = log.to_str().unwrap().to_string();
            let args = [
                "--agent",
                &agent,
                "--json",
                "--until",
                "all-terminal",
                "--log-file",
                &log,
            ];
            run_within(&args, Duration::from_secs(30)).await.expect("the run ends")
        }
    };
    let log = dir.join("a2a-watch.log");
    let out = run(log.clone()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(mode(&log), 0o600);

    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let link = dir.join("link.log");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = run(link.clone()).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stderr(&out).contains(link.to_str().unwrap()), "{}", stderr(&out));
    assert!(stderr(&out).contains("link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    std::fs::remove_dir_all(&dir).unwrap();
}
