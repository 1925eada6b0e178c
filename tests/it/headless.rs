//! Running as a service (issue 22): the real binary, `--headless --metrics-listen 127.0.0.1:0
//! --record FILE`, watching a demo agent while a test client fails a test run. It prints
//! nothing on stdout, its scrape counts the task, and SIGTERM or SIGINT ends it with exit 0
//! within 2 s, its recording whole (`replay --json` reads the task's end). `--json` stops the
//! same way on SIGTERM, its lines and its recording alike.

use std::time::Duration;

use a2a_watch::a2a::{Binding, TaskState};
use serde_json::Value;

use crate::cli::{lines, run, stderr};
use crate::demo_client::start_demo;
use crate::metrics::{start_watching, until};
use crate::scenarios::{connect, message, stream_all};
use crate::tui::Scratch;

/// What a service manager allows between its stop signal and the exit (issue 22).
const STOP: Duration = Duration::from_secs(2);

/// `a2a-watch FRONT` on the demo's test runner, sent `signal` once its scrape counts a failed
/// run: it exits 0 within `STOP`. Its stdout, and its recording read back by `replay --json`,
/// each checked to hold the failed task's line.
async fn stops_on(front: &str, signal: libc::c_int) -> (String, String) {
    let demo = start_demo().await;
    let scratch = Scratch::new("headless");
    let file = scratch.0.join("watched.ndjson");
    let log = scratch.0.join("a2a-watch.log");
    let agents = [format!("test-runner={}", demo.url("test-runner"))];
    let more = ["--record", file.to_str().unwrap(), "--log-file", log.to_str().unwrap()];
    let (child, url) = start_watching(front, &agents, &more).await;

    let runner = connect(demo.url("test-runner"), Binding::JsonRpc, None).await;
    let failed = stream_all(&runner, &message("run the tests, they will fail")).await;
    assert_eq!(failed.last_state(), Some(&TaskState::Failed));
    until(&url, &[(r#"a2a_watch_tasks{agent="test-runner",state="failed"}"#, 1.0)]).await;

    // SAFETY: kill only sends a signal to the child we started.
    unsafe {
        libc::kill(child.id().expect("still running") as libc::pid_t, signal);
    }
    let out = tokio::time::timeout(STOP, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{front} exits within {STOP:?} of signal {signal}"))
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{front}, signal {signal}: {}", stderr(&out));

    let replayed = run(&["replay", "--json", file.to_str().unwrap()], &[]).await;
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let ended = |line: &Value| line["task"] == failed.task.as_str() && line["state"] == "FAILED";
    assert!(
        lines(&replayed).iter().any(ended),
        "the recording holds the failed run:\n{}",
        String::from_utf8_lossy(&replayed.stdout)
    );
    (
        String::from_utf8(out.stdout).expect("UTF-8"),
        String::from_utf8(replayed.stdout).expect("UTF-8"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_serves_metrics_prints_nothing_and_stops_on_sigterm_with_its_recording_whole() {
    let (stdout, _) = stops_on("--headless", libc::SIGTERM).await;
    assert_eq!(stdout, "", "--headless writes nothing on stdout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_stops_on_sigint_too() {
    let (stdout, _) = stops_on("--headless", libc::SIGINT).await;
    assert_eq!(stdout, "", "--headless writes nothing on stdout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_stops_on_sigterm_with_every_line_written_and_recorded() {
    let (stdout, replayed) = stops_on("--json", libc::SIGTERM).await;
    assert_eq!(stdout, replayed, "replay --json prints the lines --json printed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_and_json_together_are_a_usage_error() {
    let out = run(&["--headless", "--json", "--agent", "http://127.0.0.1:9"], &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot be used with"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}
