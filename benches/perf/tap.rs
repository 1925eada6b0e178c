//! Benchmark 11, the tap (issue 12): what `a2a-watch --tap` adds to a planner's calls. A planner
//! (here the harness: sequential JSON-RPC GetTasks, then a SubscribeToTask at a set rate) talks
//! to the load agent directly and through the real binary's tap, in alternating rounds of the
//! same run; the dashboard behind the tap (`--json`, output dropped) watches the agent meanwhile,
//! as it would for a user.

use std::net::TcpListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::StreamExt;
use jiff::Timestamp;

use a2a_watch::a2a::StreamResponse;
use a2a_watch::a2a::sse::{self, DEFAULT_FRAME_LIMIT};
use a2a_watch::a2a::wire::jsonrpc;

use crate::load::task_id;
use crate::util::{LoadServer, Section, Verdict, Watcher, quantile, quick, say, table, watch_command};

/// Streamed status updates a second, on the one subscription measured.
const RATE: f64 = 200.0;

/// The tap in front of `upstream`, listening on a free loopback port; None if it never answers.
fn start_tap(upstream: &str) -> Option<(Watcher, String)> {
    let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
    let listen = format!("127.0.0.1:{port}");
    let mut cmd = watch_command();
    cmd.arg("--json")
        .arg("--tap")
        .arg(format!("{listen}={upstream}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let tap = Watcher::spawn(cmd);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(&listen).is_ok() {
            return Some((tap, format!("http://{listen}")));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn rpc(method: &str, id: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": id}})
}

/// Milliseconds of each of `n` GetTasks in a row, request sent to body read.
async fn requests(http: &reqwest::Client, base: &str, n: usize) -> Option<Vec<f64>> {
    let body = rpc("GetTask", &task_id(0, 1));
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let resp = http
            .post(format!("{base}/"))
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .ok()?;
        if !resp.status().is_success() {
            return None;
        }
        resp.bytes().await.ok()?;
        out.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Some(out)
}

/// Milliseconds from each streamed update's due time (its status timestamp) to its arrival,
/// for those that arrive within `window`.
async fn stream(http: &reqwest::Client, base: &str, window: Duration) -> Option<Vec<f64>> {
    let deadline = tokio::time::Instant::now() + window;
    let resp = http
        .post(format!("{base}/"))
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream")
        .json(&rpc("SubscribeToTask", &task_id(0, 0)))
        .send()
        .await
        .ok()?;
    let mut frames = Box::pin(sse::frames(resp.bytes_stream(), DEFAULT_FRAME_LIMIT));
    let mut out = Vec::new();
    while let Ok(Some(frame)) = tokio::time::timeout_at(deadline, frames.next()).await {
        let arrived = Timestamp::now();
        if let Ok(StreamResponse::StatusUpdate(u)) = jsonrpc::decode_frame(&frame.ok()?)
            && let Some(due) = u.status.timestamp
        {
            out.push(arrived.duration_since(due).as_secs_f64() * 1e3);
        }
    }
    Some(out)
}

#[derive(Default)]
struct Samples {
    requests: Vec<f64>,
    events: Vec<f64>,
}

impl Samples {
    fn sorted(mut self) -> Samples {
        self.requests.sort_by(f64::total_cmp);
        self.events.sort_by(f64::total_cmp);
        self
    }
}

/// One round against a fresh load agent (its task starts from its first update), direct or
/// through a fresh tap. None if anything failed.
fn round(rt: &tokio::runtime::Runtime, through_tap: bool, n: usize, events: usize) -> Option<Samples> {
    let s = LoadServer::with(&format!("--tasks 2 --events {events} --rate {RATE} --hold"));
    let (_tap, base) = if through_tap {
        let (tap, url) = start_tap(s.url())?;
        (Some(tap), url)
    } else {
        (None, s.url().trim_end_matches('/').to_string())
    };
    rt.block_on(async {
        let http = a2a_watch::a2a::client::http_client(Duration::from_secs(10)).ok()?;
        // The stream first (its updates are due from the moment it opens), for `events`
        // updates' worth of time; then the requests.
        let events = stream(&http, &base, Duration::from_secs_f64(events as f64 / RATE)).await?;
        Some(Samples {
            requests: requests(&http, &base, n).await?,
            events,
        })
    })
}

/// `rounds` rounds each, direct and through the tap alternating: the samples of each side,
/// sorted, and how many rounds failed.
fn measure(rounds: usize, n: usize, events: usize) -> (Samples, Samples, usize) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let mut direct = Samples::default();
    let mut tapped = Samples::default();
    let mut failed = 0;
    for r in 0..rounds {
        for through_tap in [false, true] {
            say(format!(
                "tap: round {} {}",
                r + 1,
                if through_tap { "through the tap" } else { "direct" }
            ));
            match round(&rt, through_tap, n, events) {
                Some(s) => {
                    let into = if through_tap { &mut tapped } else { &mut direct };
                    into.requests.extend(s.requests);
                    into.events.extend(s.events);
                }
                None => failed += 1,
            }
        }
    }
    (direct.sorted(), tapped.sorted(), failed)
}

fn ms(v: f64) -> String {
    format!("{v:.3} ms")
}

/// A row of the table: the quantiles of the direct samples `d` and the tapped `t`, and the tap's
/// addition.
fn row(name: &str, d: &[f64], t: &[f64]) -> Vec<String> {
    let q = |v: &[f64], p: f64| quantile(v, p);
    vec![
        name.to_string(),
        format!("{} / {}", d.len(), t.len()),
        ms(q(d, 0.5)),
        ms(q(t, 0.5)),
        ms(q(t, 0.5) - q(d, 0.5)),
        ms(q(d, 0.99)),
        ms(q(t, 0.99)),
        format!("**{}**", ms(q(t, 0.99) - q(d, 0.99))),
    ]
}

/// The section's text around the table.
fn body(direct: &Samples, tapped: &Samples, failed: usize, rounds: usize, n: usize, events: usize) -> String {
    let rows = vec![
        row("GetTask, request to whole response", &direct.requests, &tapped.requests),
        row(
            &format!("streamed update ({RATE:.0}/s), due to arrival"),
            &direct.events,
            &tapped.events,
        ),
    ];
    format!(
        "`serve-load --tasks 2 --events {events} --rate {RATE:.0} --hold`, a fresh one a round. *Direct*: the harness \
(reqwest, the binary's HTTP stack) talks to it. *Through the tap*: the real binary, `a2a-watch --json --tap \
127.0.0.1:PORT=URL` (output dropped), in between; it also watches the agent, as it would for a user. A round: one \
SubscribeToTask read for {:.0} s (each update stamped with the time it was due, so a held-back stream counts), then \
{n} GetTasks in a row. {rounds} rounds each, direct and tapped alternating.{}\n\n{}\n\
Target: the tap adds under 1 ms at p99, per request and per streamed event (issue 12). The tail of each side is \
its own (the two are not paired), so on a busy machine p99 added can come out below zero: read it with p50 added.\n",
        events as f64 / RATE,
        if failed > 0 {
            format!(" **{failed} round(s) failed** (a process died or a call errored) and are left out.")
        } else {
            String::new()
        },
        table(
            &[
                "what",
                "samples direct / tapped",
                "p50 direct",
                "p50 tapped",
                "p50 added",
                "p99 direct",
                "p99 tapped",
                "p99 added"
            ],
            &rows
        ),
    )
}

pub fn run() -> Section {
    let rounds = if quick() { 2 } else { 4 };
    let n = if quick() { 300 } else { 1000 };
    let events = if quick() { 400 } else { 1000 };
    let (direct, tapped, failed) = measure(rounds, n, events);
    let added_request = quantile(&tapped.requests, 0.99) - quantile(&direct.requests, 0.99);
    let added_event = quantile(&tapped.events, 0.99) - quantile(&direct.events, 0.99);
    let measured = !direct.requests.is_empty() && !tapped.requests.is_empty() && !tapped.events.is_empty();
    Section {
        number: 11,
        title: "The tap",
        target: "adds < 1 ms p99 per request and per streamed event".into(),
        result: format!(
            "p99 added: {} a request, {} a streamed event",
            ms(added_request),
            ms(added_event)
        ),
        verdict: if measured && failed == 0 {
            Verdict::of(added_request < 1.0 && added_event < 1.0)
        } else {
            Verdict::NoData
        },
        body: body(&direct, &tapped, failed, rounds, n, events),
    }
}
