//! An answer goes only to the question the person saw, and links that are opened or copied are
//! web links: the real `App` and engine against a small agent on loopback that misbehaves on
//! purpose (its question or held call changes under an open box, it refuses answers), plus
//! the real binary (`reply`, and the dashboard in tmux).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_watch::a2a::INTERACTIONS_EXTENSION;
use a2a_watch::a2a::interactions::{self, Answer};
use a2a_watch::app::effects::Effect;
use a2a_watch::app::on_terminal_event;
use a2a_watch::app::popup::answer::AnswerBox;
use a2a_watch::app::popup::confirm::Confirm;
use a2a_watch::app::popup::pick::LinkPick;
use axum::body::Bytes;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};

use crate::steer::{Dash, box_for, spec};
use crate::tui::{Scratch, quit_and_check_the_terminal, send_answer, sh_quote, start};

const TASK: &str = "t-answers-1";

/// What the agent holds and what it was sent.
#[derive(Default)]
struct Held {
    task: Value,
    /// Every message sent to the agent, in order.
    received: Vec<Value>,
    /// Answers are refused with an HTTP 500.
    refuse: bool,
    /// An accepted answer moves the task to WORKING (else it keeps asking).
    advance: bool,
}

/// One task, HTTP+JSON binding, no streaming: the dashboard polls it.
struct Agent {
    url: String,
    held: Arc<Mutex<Held>>,
}

impl Agent {
    async fn start(task: Value) -> Agent {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let held = Arc::new(Mutex::new(Held {
            task,
            advance: true,
            ..Held::default()
        }));
        let (h, u) = (held.clone(), url.clone());
        let app = axum::Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
            let (held, url) = (h.clone(), u.clone());
            async move { serve(&held, &url, &method, uri.path(), &body) }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        Agent { url, held }
    }

    fn set(&self, task: Value) {
        self.held.lock().unwrap().task = task;
    }

    fn received(&self) -> Vec<Value> {
        self.held.lock().unwrap().received.clone()
    }
}

fn serve(held: &Mutex<Held>, url: &str, method: &Method, path: &str, body: &[u8]) -> Response {
    let mut held = held.lock().unwrap();
    match (method.as_str(), path) {
        ("GET", "/.well-known/agent-card.json") => axum::Json(json!({
            "name": "answers", "description": "changes its questions", "version": "1",
            "supportedInterfaces": [{"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": false, "extensions": [{"uri": INTERACTIONS_EXTENSION}]},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
        }))
        .into_response(),
        ("GET", "/tasks") => {
            axum::Json(json!({"tasks": [held.task], "nextPageToken": "", "pageSize": 1, "totalSize": 1}))
                .into_response()
        }
        ("GET", p) if p == format!("/tasks/{TASK}") => axum::Json(held.task.clone()).into_response(),
        ("POST", "/message:send") => {
            let request: Value = serde_json::from_slice(body).unwrap_or_default();
            if held.refuse {
                return (StatusCode::INTERNAL_SERVER_ERROR, "answers are off today").into_response();
            }
            held.received.push(request["message"].clone());
            if held.advance {
                held.task["status"] = json!({"state": "TASK_STATE_WORKING", "timestamp": now()});
            }
            axum::Json(json!({"task": held.task})).into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// The task waiting on `text`; `message_id` is the status message's id, if it has one.
fn question(text: &str, message_id: Option<&str>) -> Value {
    let mut message = json!({"role": "ROLE_AGENT", "parts": [{"text": text}]});
    if let Some(id) = message_id {
        message["messageId"] = json!(id);
    }
    json!({"id": TASK, "contextId": "c-1",
           "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": now(), "message": message}})
}

/// The task holding `tool` for approval under interaction `id`, with these links.
fn approval(id: &str, tool: &str) -> Value {
    json!({"id": TASK, "contextId": "c-1", "status": {"state": "TASK_STATE_AUTH_REQUIRED", "timestamp": now(),
        "message": {"messageId": format!("m-{tool}"), "role": "ROLE_AGENT", "extensions": [INTERACTIONS_EXTENSION],
            "parts": [{"text": format!("Approve github / {tool}?")}],
            "metadata": {INTERACTIONS_EXTENSION: {"interactionId": id, "kind": "approval",
                "prompt": format!("Approve github / {tool}?"), "detail": {"server": "github", "tool": tool}}}}}})
}

fn texts(received: &[Value]) -> Vec<String> {
    received
        .iter()
        .map(|m| m["parts"][0]["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_changes_under_the_open_box_gets_the_answer_only_when_sent_again() {
    let agent = Agent::start(question("Which base branch?", Some("q-1"))).await;
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the box", |app| box_for(app).as_deref() == Some(TASK)).await;
    // Enter the moment the box opened (the clock has not moved): typed for something else.
    on_terminal_event(
        &mut d.app,
        TermEvent::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    d.flush().await;
    let notice = d
        .app
        .popup::<AnswerBox>()
        .and_then(|b| b.notice.clone())
        .unwrap_or_default();
    assert!(notice.contains("press ⏎ again"), "{notice}");
    d.type_text("main");
    // Esc keeps the draft; `r` opens the box again with it.
    d.key(KeyCode::Esc);
    d.select(TASK);
    d.key(KeyCode::Char('r'));
    assert_eq!(d.app.popup::<AnswerBox>().unwrap().text(), "main");

    // Another question, same state.
    agent.set(question("Which release branch?", Some("q-2")));
    d.until("the box shows the change", |app| {
        app.popup::<AnswerBox>().is_some_and(|b| b.changed)
    })
    .await;
    d.key(KeyCode::Enter);
    d.flush().await;
    assert!(agent.received().is_empty(), "the Enter after a change sends nothing");
    assert_eq!(d.app.popup::<AnswerBox>().unwrap().text(), "main", "the draft is kept");
    d.key(KeyCode::Enter);
    d.until("the answer lands", |app| app.popup::<AnswerBox>().is_none())
        .await;
    let received = agent.received();
    assert_eq!(texts(&received), ["main"]);
    let id = received[0]["messageId"].as_str().unwrap();
    assert!(
        id.starts_with(&format!("reply:{TASK}:q-2:")),
        "for the question on screen: {id}"
    );
    d.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_in_between_that_polling_missed_still_counts_as_a_new_question() {
    let agent = Agent::start(question("Which base branch?", None)).await;
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the box", |app| box_for(app).as_deref() == Some(TASK)).await;
    d.type_text("main");
    // INPUT_REQUIRED → WORKING → INPUT_REQUIRED between two polls: the same words, asked again.
    agent.set(question("Which base branch?", None));
    d.until("the box shows the change", |app| {
        app.popup::<AnswerBox>().is_some_and(|b| b.changed)
    })
    .await;
    d.key(KeyCode::Enter);
    d.flush().await;
    assert!(agent.received().is_empty());
    d.key(KeyCode::Enter);
    d.until("the answer lands", |app| app.popup::<AnswerBox>().is_none())
        .await;
    assert_eq!(texts(&agent.received()), ["main"]);
    d.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_answer_keeps_the_text_and_a_retry_sends_the_same_message_id() {
    let agent = Agent::start(question("Which base branch?", Some("q-1"))).await;
    agent.held.lock().unwrap().refuse = true;
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the box", |app| box_for(app).as_deref() == Some(TASK)).await;
    d.type_text("main");
    d.key(KeyCode::Enter);
    d.until("the refusal in the box", |app| {
        app.popup::<AnswerBox>().is_some_and(|b| b.error.is_some())
    })
    .await;
    let boxed = d.app.popup::<AnswerBox>().unwrap();
    assert_eq!(boxed.text(), "main");
    assert!(
        !d.app.steer().flash.as_ref().is_some_and(|f| f.text.contains("sent")),
        "not a success"
    );
    // The messageId the refused attempt carried: the rule's, for this question and this text.
    let status = &d.app.store().task(&boxed.key).unwrap().status;
    let first = interactions::message_id(TASK, status, &Answer::Value("main".into()));
    agent.held.lock().unwrap().refuse = false;
    d.key(KeyCode::Enter);
    d.until("the retry lands", |app| app.popup::<AnswerBox>().is_none())
        .await;
    assert_eq!(agent.received()[0]["messageId"], first.as_str());
    d.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_swapped_before_y_is_not_approved() {
    let agent = Agent::start(approval("eff_7", "read_file")).await;
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the approval", |app| app.store().approval_count() == 1).await;
    d.select(TASK);
    d.key(KeyCode::Char('a'));
    assert!(d.app.popup::<Confirm>().is_some());
    agent.set(approval("eff_7", "delete_repo"));
    d.until("the swap seen", |app| {
        app.store().tasks().any(|t| t.status.text().contains("delete_repo"))
    })
    .await;
    d.key(KeyCode::Char('y'));
    d.flush().await;
    assert!(
        agent.received().is_empty(),
        "read_file was confirmed, delete_repo is held: nothing sent"
    );
    let confirm = d.app.popup::<Confirm>().expect("the new call is shown");
    assert!(format!("{:?}", confirm.ask).contains("delete_repo") && confirm.note.is_some());
    // What is on screen now can be approved; a refusal shows the confirmation again, with
    // the error, never a success.
    agent.held.lock().unwrap().refuse = true;
    d.key(KeyCode::Char('y'));
    d.until("the refusal shown", |app| {
        app.popup::<Confirm>()
            .is_some_and(|c| c.note.as_ref().is_some_and(|n| n.1))
    })
    .await;
    assert!(!d.app.steer().flash.as_ref().is_some_and(|f| f.text.contains("done")));
    agent.held.lock().unwrap().refuse = false;
    d.key(KeyCode::Char('y'));
    d.until("approved", |app| {
        app.steer().flash.as_ref().is_some_and(|f| f.text.ends_with(": done"))
    })
    .await;
    let received = agent.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["messageId"], "answer:eff_7:approve");
    assert_eq!(received[0]["metadata"][INTERACTIONS_EXTENSION]["approved"], true);
    d.engine.shutdown().await;
}

/// `a2a-watch reply`, the real binary.
fn reply(url: &str, args: &[&str]) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-watch"))
        .args(["reply", url, TASK])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `reply URL TASK main`, then "main" typed into the dashboard's box: what the agent received.
async fn main_from_reply_and_from_the_box(task: Value) -> Vec<Value> {
    let agent = Agent::start(task).await;
    agent.held.lock().unwrap().advance = false;
    let url = agent.url.clone();
    tokio::task::spawn_blocking(move || reply(&url, &["main"]))
        .await
        .unwrap();
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the box", |app| box_for(app).as_deref() == Some(TASK)).await;
    d.type_text("main");
    d.key(KeyCode::Enter);
    d.until("sent", |app| app.popup::<AnswerBox>().is_none()).await;
    d.engine.shutdown().await;
    agent.received()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_and_the_dashboard_give_the_same_answer_the_same_message_id() {
    // A plain question.
    let received = main_from_reply_and_from_the_box(question("Which base branch?", Some("q-1"))).await;
    let ids: Vec<&Value> = received.iter().map(|m| &m["messageId"]).collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1], "answered once by an agent that deduplicates");

    // An interactions/v1 question: the text from `reply` and from the box is one message, the
    // extension's answer.
    let mut asked = question("Which base branch?", Some("q-3"));
    asked["status"]["message"]["extensions"] = json!([INTERACTIONS_EXTENSION]);
    asked["status"]["message"]["metadata"] = json!({INTERACTIONS_EXTENSION: {
        "interactionId": "q_3", "kind": "question", "prompt": "Which base branch?"}});
    let received = main_from_reply_and_from_the_box(asked).await;
    assert_eq!(received.len(), 2);
    assert_eq!(received[0]["metadata"][INTERACTIONS_EXTENSION]["interactionId"], "q_3");
    assert_eq!(received[0], received[1], "the same answer, the same message");

    // An approval: `reply --approve` and `a`, `y`; a deny never shares the id.
    let agent = Agent::start(approval("eff_9", "create_pull_request")).await;
    agent.held.lock().unwrap().advance = false;
    let url = agent.url.clone();
    tokio::task::spawn_blocking(move || {
        reply(&url, &["--approve"]);
        reply(&url, &["--deny"]);
    })
    .await
    .unwrap();
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the approval", |app| app.store().approval_count() == 1).await;
    d.select(TASK);
    d.key(KeyCode::Char('a'));
    d.key(KeyCode::Char('y'));
    d.until("approved", |app| {
        app.steer().flash.as_ref().is_some_and(|f| f.text.ends_with(": done"))
    })
    .await;
    let ids: Vec<Value> = agent.received().iter().map(|m| m["messageId"].clone()).collect();
    assert_eq!(
        ids,
        ["answer:eff_9:approve", "answer:eff_9:deny", "answer:eff_9:approve"]
    );
    d.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_web_links_are_opened_or_copied_and_several_are_picked_from() {
    let mut task = approval("", "deploy");
    task["status"]["message"] = json!({"messageId": "links", "role": "ROLE_AGENT", "parts": [
        {"text": "Approve the deploy: javascript:alert(1) or file:///etc/passwd"},
        {"url": "javascript:alert(document.cookie)"},
        {"url": "file:///etc/passwd"}]});
    let agent = Agent::start(task.clone()).await;
    let mut d = Dash::new(vec![spec(&agent.url, "answers")]);
    d.until("the approval", |app| app.store().approval_count() == 1).await;
    d.select(TASK);
    for key in ['o', 'y'] {
        d.key(KeyCode::Char(key));
        assert!(d.app.steer().effects.is_empty(), "{:?}", d.app.steer().effects);
        assert!(
            d.app
                .steer()
                .flash
                .as_ref()
                .is_some_and(|f| f.text.contains("not a web link"))
        );
    }
    // Two web links and a custom scheme: a picker of the two.
    let (first, second) = ("https://ops.example/approve?id=7", "http://127.0.0.1:1/approve/7");
    task["status"]["message"]["parts"] = json!([{"url": "slack://approve"}, {"url": first}, {"url": second}]);
    task["status"]["timestamp"] = json!(now());
    agent.set(task);
    d.until("the links", |app| {
        app.store()
            .tasks()
            .any(|t| t.status.message.as_ref().is_some_and(|m| m.links().len() == 3))
    })
    .await;
    d.key(KeyCode::Char('o'));
    assert_eq!(
        d.app.popup::<LinkPick>().map(|p| p.links.clone()),
        Some(vec![first.to_string(), second.to_string()])
    );
    d.key(KeyCode::Char('2'));
    assert_eq!(d.app.steer().effects, [Effect::Open(second.into())]);
    d.engine.shutdown().await;
}

/// The real binary in tmux: the question changes under the open box, the box says so, the
/// next Enter sends nothing, the one after answers the question on screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_box_in_the_real_binary_shows_a_changed_question_before_sending() {
    let agent = Agent::start(question("Which base branch?", Some("q-1"))).await;
    let scratch = Scratch::new("changed");
    let tmux = start(&format!("--agent answers={}", sh_quote(&agent.url)), &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    tmux.wait_for("the question's box", false, |s| {
        s.contains("answers asks") && s.contains("Which base branch?")
    });
    tmux.send_keys("main");
    tmux.wait_for("the draft", false, |s| s.contains("main"));
    agent.set(question("Which release branch?", Some("q-2")));
    tmux.wait_for("the changed question", false, |s| {
        s.contains("answers asks something else") && s.contains("Which release branch?") && s.contains("main")
    });
    tmux.send_keys("Enter");
    tmux.wait_for("the note", false, |s| s.contains("⏎ again sends"));
    assert!(agent.received().is_empty(), "nothing sent yet");
    send_answer(&tmux, "answers asks");
    tmux.wait_for("the box closed", false, |s| !s.contains("answers asks"));
    let received = agent.received();
    assert_eq!(texts(&received), ["main"]);
    assert!(
        received[0]["messageId"]
            .as_str()
            .unwrap()
            .starts_with(&format!("reply:{TASK}:q-2:"))
    );
    quit_and_check_the_terminal(&tmux, &before);
}

/// The real binary in tmux (issue 23): a question that arrives while the person types does not
/// take the keyboard; the footer says it waits, the keys go on to the table, and the box opens
/// once no key was pressed for 1.5 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_arrives_while_typing_waits_for_the_keyboard_to_rest() {
    let working =
        json!({"id": TASK, "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING", "timestamp": now()}});
    let agent = Agent::start(working).await;
    let scratch = Scratch::new("held");
    let tmux = start(&format!("--agent answers={}", sh_quote(&agent.url)), &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    tmux.wait_for("the working task", false, |s| s.contains("WORKING"));
    agent.set(question("Which base branch?", Some("q-1")));
    let held = "answers has a question · r answers now";
    // A key every 200 ms while the next poll brings the question.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        tmux.send_keys("j");
        let screen = tmux.capture(false);
        assert!(!screen.contains("answers asks"), "the box opened mid-typing:\n{screen}");
        if screen.contains(held) {
            break;
        }
        assert!(Instant::now() < deadline, "the question never came:\n{screen}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Typing on for a second: still held, the keys to the table.
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(200));
        tmux.send_keys("j");
    }
    let last_key = Instant::now();
    let screen = tmux.capture(false);
    assert!(screen.contains(held) && !screen.contains("answers asks"), "{screen}");
    let screen = tmux.wait_for("the box, once the keyboard rested", false, |s| {
        s.contains("answers asks") && s.contains("Which base branch?")
    });
    let rested = last_key.elapsed();
    assert!(
        rested >= Duration::from_millis(1400),
        "opened {rested:?} after the last key"
    );
    assert!(!screen.contains(held), "the footer no longer says it waits:\n{screen}");
    quit_and_check_the_terminal(&tmux, &before);
}
