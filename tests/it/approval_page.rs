//! The deployer's approval link in a browser (issue 13): a page naming the task with an Approve
//! button, result pages with their status codes, and a real headless Chromium that approves a
//! deploy, driven through chromedriver's W3C WebDriver API.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use a2a_watch::a2a::{Binding, StreamResponse, TaskState};
use a2a_watch::demo::DemoAgents;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, ORIGIN};
use serde_json::{Value, json};

use crate::demo_client::{TOKEN, start_demo};
use crate::scenarios::{connect, message, wait_for_state};

const CHROMIUM: &str = "/usr/bin/chromium";
const DEADLINE: Duration = Duration::from_secs(30);
/// What a browser's form submission asks for.
const BROWSER_ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// Sends `text` to the agent at `url` (blocking: returns when the task is interrupted) and
/// gives the task id and the link in its status message.
async fn waiting_task(url: &str, token: Option<&str>, text: &str) -> (String, String) {
    let client = connect(url, Binding::JsonRpc, token).await;
    let StreamResponse::Task(task) = client.send_message(&message(text)).await.expect("send") else {
        panic!("a task")
    };
    assert_eq!(task.status.state, TaskState::AuthRequired);
    (task.id.clone(), format!("{url}/approve/{}", task.id))
}

/// A deploy of the deployer's that waits for an operator: its id and approval link.
async fn waiting_deploy(agents: &DemoAgents) -> (String, String) {
    waiting_task(agents.url("deployer"), Some(TOKEN), "deploy 2026.10.06-1 to staging").await
}

fn browser_post(link: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new().post(link).header(ACCEPT, BROWSER_ACCEPT)
}

async fn html_of(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let kind = response.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
    assert!(kind.starts_with("text/html"), "{kind}");
    (status, response.text().await.expect("a body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_names_the_task_escapes_its_text_and_a_get_never_approves() {
    let agents = start_demo().await;
    let deployer = agents.url("deployer");
    let hostile = "deploy 2026.10.06-1 <script>alert(1)</script> & \"x\" \u{1b}]52;c;aGk=\u{7}to staging";
    let (id, link) = waiting_task(deployer, Some(TOKEN), hostile).await;
    for _ in 0..2 {
        let (status, page) = html_of(reqwest::get(&link).await.unwrap()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains(&id), "names the task: {page}");
        assert!(
            page.contains("deploy 2026.10.06-1 &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"),
            "the request, escaped: {page}"
        );
        assert!(!page.contains("<script") && !page.contains('\u{1b}'), "{page}");
        assert!(page.contains("<form method=\"post\"><button type=\"submit\">Approve</button></form>"));
        assert!(
            !page.contains("src=") && !page.contains("href="),
            "nothing external: {page}"
        );
    }
    let client = connect(deployer, Binding::JsonRpc, Some(TOKEN)).await;
    let task = client.get_task(&id, None).await.unwrap();
    assert_eq!(task.status.state, TaskState::AuthRequired, "a GET approves nothing");

    let (status, page) = html_of(reqwest::get(format!("{deployer}/approve/<b>no-such")).await.unwrap()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        page.contains("No such task") && page.contains("&lt;b&gt;no-such"),
        "{page}"
    );
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_post_that_changes_nothing_gets_a_page_with_its_status() {
    let agents = start_demo().await;
    let deployer = agents.url("deployer");
    let (status, page) = html_of(
        browser_post(&format!("{deployer}/approve/no-such-task"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("No such task"), "{page}");

    let (id, link) = waiting_deploy(&agents).await;
    let (status, page) = html_of(browser_post(&link).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("<h1>Approved</h1>") && page.contains(&id), "{page}");
    let (status, page) = html_of(browser_post(&link).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::CONFLICT, "one approval resumes one deploy");
    assert!(page.contains("no longer waiting"), "{page}");
    assert!(!page.contains("<form"), "no button once approved: {page}");

    // The assistant's approval is answered in band (interactions/v1), not at a link.
    let assistant = agents.url("assistant");
    let (_, link) = waiting_task(assistant, None, "approval: open the pull request").await;
    let (status, page) = html_of(reqwest::get(&link).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Nothing to approve") && !page.contains("<form"), "{page}");
    let (status, _) = html_of(browser_post(&link).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::CONFLICT);
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_from_another_sites_page_is_refused() {
    let agents = start_demo().await;
    let deployer = agents.url("deployer");
    let (id, link) = waiting_deploy(&agents).await;
    let forged = browser_post(&link)
        .header(ORIGIN, "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let client = connect(deployer, Binding::JsonRpc, Some(TOKEN)).await;
    assert_eq!(
        client.get_task(&id, None).await.unwrap().status.state,
        TaskState::AuthRequired
    );
    // The agent's own page is its origin.
    let own = browser_post(&link).header(ORIGIN, deployer).send().await.unwrap();
    assert_eq!(own.status(), StatusCode::OK);
    wait_for_state(&client, &id, &TaskState::Completed).await;
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_chromium_approves_a_deploy_on_its_page() {
    let agents = start_demo().await;
    let (id, link) = waiting_deploy(&agents).await;

    let browser = Browser::start().await;
    browser.navigate(&link).await;
    let page = browser.source().await;
    assert!(page.contains(&id), "the page names the task: {page}");
    assert!(
        page.contains("deploy 2026.10.06-1 to staging"),
        "and the request: {page}"
    );
    browser.click("button[type=submit]").await;
    browser
        .wait_for_source("the result page", |s| s.contains("<h1>Approved</h1>"))
        .await;

    let client = connect(agents.url("deployer"), Binding::JsonRpc, Some(TOKEN)).await;
    let done = wait_for_state(&client, &id, &TaskState::Completed).await;
    assert_eq!(done.status.text(), "deployed 2026.10.06-1 to staging");
    browser.quit().await;
    agents.shutdown().await;
}

/// One headless Chromium under chromedriver, in its own process group with a fresh profile; the
/// group is killed and the profile removed on drop, so a failing test leaves nothing behind.
struct Browser {
    driver: Child,
    profile: PathBuf,
    http: reqwest::Client,
    /// `http://127.0.0.1:<port>/session/<id>`
    session: String,
}

impl Browser {
    async fn start() -> Browser {
        assert!(
            Path::new(CHROMIUM).exists() && which("chromedriver"),
            "this test needs {CHROMIUM} and chromedriver: `.ci/run` installs them (apt-get install chromium chromium-driver)"
        );
        let profile = std::env::temp_dir().join(format!("a2a-watch-chromium-{}", uuid::Uuid::new_v4()));
        let mut driver = Command::new("chromedriver")
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        let stdout = driver.stdout.take().expect("piped stdout");
        let mut browser = Browser {
            driver,
            profile,
            http: reqwest::Client::new(),
            session: String::new(),
        };
        // Read to the end, so chromedriver never writes to a closed pipe.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("started successfully on port ").nth(1) {
                    let _ = tx.send(rest.trim_end_matches('.').parse::<u16>());
                }
            }
        });
        let port = rx
            .recv_timeout(DEADLINE)
            .expect("chromedriver names its port")
            .expect("a port number");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", browser.profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        }}});
        let base = format!("http://127.0.0.1:{port}/session");
        let created = browser.call(reqwest::Method::POST, &base, Some(capabilities)).await;
        let id = created["sessionId"].as_str().expect("a session id");
        browser.session = format!("{base}/{id}");
        browser
    }

    /// One WebDriver command; its `value`.
    async fn call(&self, method: reqwest::Method, url: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, url).timeout(DEADLINE);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let reply: Value = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("WebDriver {url}: {e}"))
            .json()
            .await
            .expect("WebDriver JSON");
        assert!(reply["value"]["error"].is_null(), "WebDriver {url}: {reply}");
        reply["value"].clone()
    }

    async fn command(&self, path: &str, body: Value) -> Value {
        let url = format!("{}/{path}", self.session);
        self.call(reqwest::Method::POST, &url, Some(body)).await
    }

    async fn navigate(&self, url: &str) {
        self.command("url", json!({"url": url})).await;
    }

    async fn source(&self) -> String {
        let url = format!("{}/source", self.session);
        let value = self.call(reqwest::Method::GET, &url, None).await;
        value.as_str().expect("the page source").to_string()
    }

    async fn click(&self, css: &str) {
        let found = self
            .command("element", json!({"using": "css selector", "value": css}))
            .await;
        let element = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .expect("an element reference");
        self.command(&format!("element/{element}/click"), json!({})).await;
    }

    /// The page source once `ready` holds: a click's navigation may still be under way.
    async fn wait_for_source(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let source = self.source().await;
            if ready(&source) {
                return source;
            }
            assert!(Instant::now() < deadline, "no {what}: {source}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Ends the session (chromium quits); drop then stops chromedriver.
    async fn quit(self) {
        self.call(reqwest::Method::DELETE, &self.session, None).await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The group holds chromedriver and the Chromium it started.
        if let Ok(group) = i32::try_from(self.driver.id()) {
            // SAFETY: kill(2) with a negative pid only signals that process group: our own.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}
