//! Prometheus metrics (issue 22): the real binary, `--json --metrics-listen 127.0.0.1:0`,
//! watching the demo agents while a test client makes a question (answered), an approval
//! (granted), a failure and a question left waiting. Its scrape is checked line by line and by
//! the real `promtool check metrics`; the shipped alert rules by `promtool check rules` and
//! `promtool test rules`; and the real Prometheus scrapes it every second and answers PromQL
//! (its HTTP API) with the values, the shipped rules and the dashboard's queries loaded. The same
//! real Prometheus scrapes `--headless` watching an agent built with the official Python SDK.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use a2a_watch::a2a::{Binding, TaskState};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::cli::{run, spawn, stderr};
use crate::demo_client::{TOKEN, start_demo};
use crate::peers::{Peer, Sdk};
use crate::scenarios::{Run, connect, first_link, message, read, reply, stream_all, until_auth_required};
use crate::tui::Scratch;
use a2a_watch::demo::DemoAgents;

const WAIT: Duration = Duration::from_secs(30);

/// Scrapes `url` (a2a-watch's /metrics) with `accept`, once.
pub(crate) async fn scrape(url: &str, accept: &str) -> String {
    let resp = reqwest::Client::new()
        .get(url)
        .header("accept", accept)
        .send()
        .await
        .expect("scrape");
    assert!(resp.status().is_success(), "{}", resp.status());
    resp.text().await.unwrap()
}

/// The value of the one sample `series` (name and labels, as written) in `text`.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Scrapes until every `(series, value)` holds; panics with the last scrape after `WAIT`.
pub(crate) async fn until(url: &str, want: &[(&str, f64)]) -> String {
    let start = Instant::now();
    loop {
        let text = scrape(url, "text/plain").await;
        if want.iter().all(|(series, v)| value(&text, series) == Some(*v)) {
            return text;
        }
        assert!(start.elapsed() < WAIT, "not {want:?} in time:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `a2a-watch FRONT --metrics-listen 127.0.0.1:0` (FRONT: `--json` or `--headless`) on
/// `agents`, and `more` arguments; the metrics URL its stderr says.
pub(crate) async fn start_watching(front: &str, agents: &[String], more: &[&str]) -> (Child, String) {
    start_watching_with(front, agents, more, &[]).await
}

/// `start_watching` with `env` set as well.
pub(crate) async fn start_watching_with(
    front: &str,
    agents: &[String],
    more: &[&str],
    env: &[(&str, &str)],
) -> (Child, String) {
    let mut args = vec![front, "--metrics-listen", "127.0.0.1:0"];
    for a in agents {
        args.extend(["--agent", a]);
    }
    args.extend(more);
    let mut env = env.to_vec();
    env.push(("A2A_TOKEN_DEPLOYER", TOKEN));
    let mut child = spawn(&args, &env);
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, stderr.next_line()).await;
    let line = line
        .expect("a start-up line in time")
        .unwrap()
        .expect("a start-up line");
    let url = line
        .strip_prefix("a2a-watch: metrics: ")
        .unwrap_or_else(|| panic!("{line}"));
    (child, url.to_string())
}

/// What the scrape says once the test runner failed, the reviewer's question was answered and
/// another asked, and the deployer's approval granted.
const AFTER: [(&str, f64); 11] = [
    (r#"a2a_watch_tasks{agent="test-runner",state="failed"}"#, 1.0),
    (r#"a2a_watch_tasks{agent="code-reviewer",state="input_required"}"#, 1.0),
    (r#"a2a_watch_tasks{agent="code-reviewer",state="completed"}"#, 1.0),
    (r#"a2a_watch_tasks{agent="deployer",state="auth_required"}"#, 0.0),
    (r#"a2a_watch_tasks{agent="deployer",state="completed"}"#, 1.0),
    (
        r#"a2a_watch_wait_duration_seconds_count{agent="code-reviewer",state="input_required"}"#,
        1.0,
    ),
    (
        r#"a2a_watch_wait_duration_seconds_count{agent="deployer",state="auth_required"}"#,
        1.0,
    ),
    (
        r#"a2a_watch_wait_duration_seconds_count{agent="deployer",state="input_required"}"#,
        0.0,
    ),
    (
        r#"a2a_watch_task_transitions_total{agent="deployer",from="auth_required",to="working"}"#,
        1.0,
    ),
    (
        r#"a2a_watch_oldest_waiting_seconds{agent="deployer",state="auth_required"}"#,
        0.0,
    ),
    (
        r#"a2a_watch_agent_info{agent="deployer",protocol="1.0",binding="JSON-RPC"}"#,
        1.0,
    ),
];

/// A failed test run, a question answered, an approval granted and a question left waiting, on
/// the demo agents watched at `url`; the answered question's stream.
async fn fail_ask_and_approve(demo: &DemoAgents, url: &str) -> Run {
    let runner = connect(demo.url("test-runner"), Binding::JsonRpc, None).await;
    let run = stream_all(&runner, &message("run the tests, they will fail")).await;
    assert_eq!(run.last_state(), Some(&TaskState::Failed));

    // Each wait is answered once the scrape shows it, so that a2a-watch saw it begin.
    let reviewer = connect(demo.url("code-reviewer"), Binding::JsonRpc, None).await;
    let question = stream_all(&reviewer, &message("review this diff")).await;
    assert_eq!(question.last_state(), Some(&TaskState::InputRequired));
    let waiting = r#"a2a_watch_tasks{agent="code-reviewer",state="input_required"}"#;
    until(url, &[(waiting, 1.0)]).await;
    stream_all(&reviewer, &reply(&question.task, &question.context, "main")).await;

    let deployer = connect(demo.url("deployer"), Binding::JsonRpc, Some(TOKEN)).await;
    let (mut stream, mut approval) = until_auth_required(&deployer, "deploy 1.2.3 to staging, approve first").await;
    until(
        url,
        &[(r#"a2a_watch_tasks{agent="deployer",state="auth_required"}"#, 1.0)],
    )
    .await;
    let link = first_link(approval.texts.last().unwrap());
    let granted = reqwest::Client::new().post(&link).send().await.expect("approval POST");
    assert!(granted.status().is_success(), "{}", granted.status());
    read(&mut stream, &mut approval, |_| false).await;

    let left = stream_all(&reviewer, &message("review this other diff")).await;
    assert_eq!(left.last_state(), Some(&TaskState::InputRequired));

    question
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_counts_questions_approvals_and_failures_and_prometheus_reads_it() {
    let demo = start_demo().await;
    let names = ["test-runner", "code-reviewer", "deployer"];
    let agents: Vec<String> = names.iter().map(|n| format!("{n}={}", demo.url(n))).collect();
    let (_watching, url) = start_watching("--json", &agents, &[]).await;
    for name in names {
        until(&url, &[(&format!("a2a_watch_agent_up{{agent=\"{name}\"}}"), 1.0)]).await;
    }
    let question = fail_ask_and_approve(&demo, &url).await;
    let text = until(&url, &AFTER).await;
    let oldest = r#"a2a_watch_oldest_waiting_seconds{agent="code-reviewer",state="input_required"}"#;
    assert!(value(&text, oldest).unwrap() > 0.0, "{text}");
    let waited = r#"a2a_watch_wait_duration_seconds_sum{agent="deployer",state="auth_required"}"#;
    assert!(value(&text, waited).unwrap() > 0.0, "{text}");
    assert!(
        value(&text, r#"a2a_watch_events_total{agent="deployer"}"#).unwrap() > 3.0,
        "{text}"
    );
    for name in names {
        assert!(!text.contains(demo.url(name)), "no URL in a label:\n{text}");
    }
    assert!(
        !text.contains(&question.task) && !text.contains(&question.context),
        "no ids in labels"
    );

    promtool(&["check", "metrics"], Some(&text)).await;
    the_question_alert_fires_on_the_scraped_series(&text).await;
    let openmetrics = scrape(&url, "application/openmetrics-text; version=1.0.0").await;
    assert!(openmetrics.ends_with("# EOF\n"), "{openmetrics}");
    let not_here = reqwest::get(url.replace("/metrics", "/")).await.unwrap();
    assert_eq!(not_here.status(), 404);

    prometheus_reads(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_address_needs_the_allow_and_a_token_is_asked_of_every_scrape() {
    let agent = ["runner=http://127.0.0.1:9"];
    let refused = run(&["--json", "--metrics-listen", "0.0.0.0:0", "--agent", agent[0]], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("not loopback") && said.contains("--metrics-allow-remote"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "one clear line: {said}");

    let scratch = Scratch::new("metrics-token");
    let config = scratch.0.join("config.toml");
    std::fs::write(&config, "metrics_token = \"scrape-s3cret\"\n").unwrap();
    let agent = agent.map(String::from);
    let (_watching, url) = start_watching("--json", &agent, &["--config", config.to_str().unwrap()]).await;
    let url = url
        .strip_suffix(" (bearer token required)")
        .expect("the line says a token is required");
    let http = reqwest::Client::new();
    let without = http.get(url).send().await.unwrap();
    assert_eq!(without.status(), 401);
    let wrong = http.get(url).bearer_auth("scrape-s3cre").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    let with = http.get(url).bearer_auth("scrape-s3cret").send().await.unwrap();
    assert_eq!(with.status(), 200);
    let text = with.text().await.unwrap();
    assert_eq!(
        value(&text, r#"a2a_watch_agent_up{agent="runner"}"#),
        Some(0.0),
        "{text}"
    );
    let posted = http.post(url).bearer_auth("scrape-s3cret").send().await.unwrap();
    assert_eq!(posted.status(), 404);
}

/// `promtool ARGS` succeeds, with `stdin` as its input, in assets/prometheus.
async fn promtool(args: &[&str], stdin: Option<&str>) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prometheus");
    let mut child = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package; .ci/run installs it)");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).await.unwrap();
    drop(input);
    let out = child.wait_with_output().await.unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?}: {said}");
    // check metrics exits 0 on a lint (a counter without _total, say): one of ours too.
    assert!(
        args != ["check", "metrics"] || said.is_empty(),
        "promtool {args:?}: {said}"
    );
    said
}

/// `A2AQuestionWaiting` unit-tested on the series of a real scrape (issue 22, "Proof"): every
/// oldest-waiting series as scraped, the question left waiting then growing a minute a minute,
/// so that the rule is shown to match the labels a2a-watch really serves.
async fn the_question_alert_fires_on_the_scraped_series(text: &str) {
    let waiting = r#"a2a_watch_oldest_waiting_seconds{agent="code-reviewer",state="input_required"}"#;
    let mut series = String::new();
    let mut waited = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("a2a_watch_oldest_waiting_seconds{"))
    {
        let (name, value) = line.rsplit_once(' ').unwrap();
        let start = value.parse::<f64>().unwrap().floor() as u64;
        let values = if name == waiting {
            waited = start;
            format!("{start}+60x20")
        } else {
            format!("{start}x20")
        };
        series.push_str(&format!("      - series: '{name}'\n        values: '{values}'\n"));
    }
    let at_16m = waited + 16 * 60;
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prometheus/alerts.yml");
    let test = format!(
        "rule_files: [{rules:?}]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{series}\
         \x20   alert_rule_test:\n\
         \x20     - {{eval_time: 14m, alertname: A2AQuestionWaiting, exp_alerts: []}}\n\
         \x20     - {{eval_time: 16m, alertname: A2AApprovalWaiting, exp_alerts: []}}\n\
         \x20     - eval_time: 16m\n        alertname: A2AQuestionWaiting\n        exp_alerts:\n\
         \x20         - exp_labels: {{severity: page, agent: code-reviewer, state: input_required}}\n\
         \x20           exp_annotations:\n\
         \x20             summary: \"code-reviewer: a question has waited {}m {}s\"\n\
         \x20             description: \"The oldest INPUT_REQUIRED task of code-reviewer has waited over 15 \
         minutes for an answer. Answer it from a2a-watch (the inbox).\"\n",
        at_16m / 60,
        at_16m % 60
    );
    let scratch = Scratch::new("alerts-from-a-scrape");
    let file = scratch.0.join("scraped.test.yml");
    std::fs::write(&file, &test).unwrap();
    let tested = promtool(&["test", "rules", file.to_str().unwrap()], None).await;
    assert!(tested.contains("SUCCESS"), "{tested}\n{test}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_alert_rules_check_and_pass_their_unit_tests() {
    let checked = promtool(&["check", "rules", "alerts.yml"], None).await;
    assert!(checked.contains("SUCCESS: 4 rules found"), "{checked}");
    let tested = promtool(&["test", "rules", "alerts.test.yml"], None).await;
    assert!(tested.contains("SUCCESS"), "{tested}");
}

/// The real Prometheus, scraping `metrics` every second with the shipped rules loaded; it stops
/// when dropped.
struct Prometheus {
    _process: Child,
    _dir: Scratch,
    /// Its HTTP API, `http://127.0.0.1:PORT/api/v1`.
    api: String,
}

impl Prometheus {
    fn scraping(metrics: &str) -> Prometheus {
        let dir = Scratch::new("prometheus");
        let target = metrics.trim_start_matches("http://").trim_end_matches("/metrics");
        let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prometheus/alerts.yml");
        let config = format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\nrule_files: [{rules:?}]\n\
             scrape_configs:\n  - job_name: a2a-watch\n    static_configs: [{{targets: [\"{target}\"]}}]\n"
        );
        std::fs::write(dir.0.join("prometheus.yml"), config).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Command::new("prometheus")
            .arg(format!("--config.file={}", dir.0.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.0.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("prometheus (Debian's prometheus package; .ci/run installs it)");
        Prometheus {
            _process: process,
            _dir: dir,
            api: format!("http://127.0.0.1:{port}/api/v1"),
        }
    }

    /// Asks for `query` until its one value satisfies `ok` (it scrapes every second).
    async fn until(&self, query: &str, ok: impl Fn(f64) -> bool) -> f64 {
        query_until(&self.api, query, ok).await
    }
}

/// The real Prometheus scraping `metrics`: its PromQL answers say what happened on the demo
/// agents, its rules are healthy, and every query of the Grafana dashboard is one it runs.
async fn prometheus_reads(metrics: &str) {
    let prometheus = Prometheus::scraping(metrics);
    let api = &prometheus.api;
    let waited = r#"a2a_watch_wait_duration_seconds_count{agent="deployer",state="auth_required"}"#;
    assert_eq!(prometheus.until(waited, |v| v == 1.0).await, 1.0);
    let failed = r#"sum(a2a_watch_tasks{state="failed"})"#;
    assert_eq!(prometheus.until(failed, |v| v == 1.0).await, 1.0);
    let up = "sum(a2a_watch_agent_up)";
    assert_eq!(prometheus.until(up, |v| v == 3.0).await, 3.0);
    let rules = get(&format!("{api}/rules")).await;
    let loaded: Vec<&Value> = rules["data"]["groups"][0]["rules"].as_array().unwrap().iter().collect();
    assert_eq!(loaded.len(), 4, "{rules}");
    assert!(loaded.iter().all(|r| r["health"] == "ok"), "{rules}");
    dashboard_queries_run(api).await;
}

/// Issue 22's proof on an official SDK peer: `--headless` watches an agent built with the Python
/// SDK (tests/interop/python/agent.py) through a failure, a question answered after a pause we
/// time, and an approval granted out of band; the real Prometheus scrapes it, and its PromQL
/// answers are what happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_reads_headless_a2a_watch_on_the_python_sdk_agent() {
    let peer = Peer::start(Sdk::Python13, &[]);
    let (_watching, url) = start_watching("--headless", &[format!("python={}", peer.url)], &[]).await;
    until(&url, &[(r#"a2a_watch_agent_up{agent="python"}"#, 1.0)]).await;
    let prometheus = Prometheus::scraping(&url);
    let client = connect(&peer.url, Binding::JsonRpc, None).await;

    let failed = stream_all(&client, &message("fail")).await;
    assert_eq!(failed.last_state(), Some(&TaskState::Failed));

    let question = stream_all(&client, &message("question")).await;
    assert_eq!(question.last_state(), Some(&TaskState::InputRequired));
    let asked = Instant::now();
    until(
        &url,
        &[(r#"a2a_watch_tasks{agent="python",state="input_required"}"#, 1.0)],
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let answered = stream_all(&client, &reply(&question.task, &question.context, "main")).await;
    let response_time = asked.elapsed().as_secs_f64();
    assert_eq!(answered.last_state(), Some(&TaskState::Completed));

    let (mut stream, mut approval) = until_auth_required(&client, "approve").await;
    until(
        &url,
        &[(r#"a2a_watch_tasks{agent="python",state="auth_required"}"#, 1.0)],
    )
    .await;
    let link = first_link(approval.texts.last().unwrap());
    let granted = reqwest::Client::new().post(&link).send().await.expect("approval POST");
    assert!(granted.status().is_success(), "{}", granted.status());
    read(&mut stream, &mut approval, |_| false).await;
    assert_eq!(approval.last_state(), Some(&TaskState::Completed));

    for (query, want) in [
        (r#"a2a_watch_tasks{agent="python",state="failed"}"#, 1.0),
        (r#"a2a_watch_tasks{agent="python",state="completed"}"#, 2.0),
        (r#"a2a_watch_tasks{agent="python",state="input_required"}"#, 0.0),
        (r#"a2a_watch_tasks{agent="python",state="auth_required"}"#, 0.0),
        (
            r#"a2a_watch_wait_duration_seconds_count{agent="python",state="input_required"}"#,
            1.0,
        ),
        (
            r#"a2a_watch_wait_duration_seconds_count{agent="python",state="auth_required"}"#,
            1.0,
        ),
        (
            r#"a2a_watch_task_transitions_total{agent="python",from="input_required",to="working"}"#,
            1.0,
        ),
        (
            r#"a2a_watch_task_transitions_total{agent="python",from="auth_required",to="working"}"#,
            1.0,
        ),
        (
            r#"a2a_watch_oldest_waiting_seconds{agent="python",state="auth_required"}"#,
            0.0,
        ),
        (r#"a2a_watch_agent_up{agent="python"}"#, 1.0),
        (
            r#"a2a_watch_agent_info{agent="python",protocol="1.0",binding="JSON-RPC"}"#,
            1.0,
        ),
    ] {
        assert_eq!(prometheus.until(query, |v| v == want).await, want, "{query}");
    }
    // The wait is the agent's own status timestamps apart: at least the pause, at most the time
    // from the question's arrival here to the answer's completion.
    let waited = r#"a2a_watch_wait_duration_seconds_sum{agent="python",state="input_required"}"#;
    let waited = prometheus.until(waited, |v| v > 0.0).await;
    assert!(
        (2.0..=response_time + 0.5).contains(&waited),
        "waited {waited} s of {response_time} s"
    );
    let events = r#"a2a_watch_events_total{agent="python"}"#;
    assert!(prometheus.until(events, |v| v >= 9.0).await >= 9.0);
}

async fn get(url: &str) -> Value {
    let resp = reqwest::get(url).await.expect("Prometheus answers");
    resp.json().await.expect("JSON")
}

/// Asks Prometheus for `query` until its one value satisfies `ok` (it scrapes every second).
async fn query_until(api: &str, query: &str, ok: impl Fn(f64) -> bool) -> f64 {
    let start = Instant::now();
    loop {
        let answer = reqwest::Client::new()
            .get(format!("{api}/query"))
            .query(&[("query", query)])
            .send()
            .await;
        let found = match answer {
            Ok(resp) => resp.json::<Value>().await.ok(),
            Err(_) => None,
        };
        let value = found
            .as_ref()
            .and_then(|a| a["data"]["result"][0]["value"][1].as_str()?.parse().ok());
        if let Some(v) = value.filter(|v| ok(*v)) {
            return v;
        }
        assert!(
            start.elapsed() < WAIT * 2,
            "Prometheus did not say {query} in time: {found:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every query of assets/grafana/a2a-watch.json, with Grafana's variables filled in, runs.
async fn dashboard_queries_run(api: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/grafana/a2a-watch.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    for target in panels.iter().flat_map(|p| p["targets"].as_array().unwrap()) {
        let expr = target["expr"].as_str().unwrap();
        let query = expr.replace("$agent", ".*").replace("$__rate_interval", "1m");
        let resp = reqwest::Client::new()
            .get(format!("{api}/query"))
            .query(&[("query", query.as_str())])
            .send()
            .await
            .unwrap();
        let answer: Value = resp.json().await.unwrap();
        assert_eq!(answer["status"], "success", "{expr}: {answer}");
    }
}
