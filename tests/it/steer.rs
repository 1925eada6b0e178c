//! Acting from the dashboard, end to end without a terminal: the real `App` takes key presses,
//! its commands go to the real engine, which talks to the demo agents over loopback, and the
//! outcome comes back through the store into the box that asked.

use std::time::Duration;

use a2a_watch::a2a::interactions::{self, Answer};
use a2a_watch::a2a::{Binding, PartContent, SendMessageConfiguration, StreamResponse, TaskState};
use a2a_watch::app::App;
use a2a_watch::app::keys::KeyMap;
use a2a_watch::app::on_terminal_event;
use a2a_watch::app::popup::answer::AnswerBox;
use a2a_watch::app::popup::confirm::Confirm;
use a2a_watch::app::popup::new_task::NewTask;
use a2a_watch::app::steer::Prefs;
use a2a_watch::store::{Change, Store, TaskKey};
use a2a_watch::theme::Theme;
use a2a_watch::watch::{AgentSpec, Credential, Engine, WatchOptions};
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};

use crate::demo_client::{TOKEN, start_demo};
use crate::relay::Relay;
use crate::scenarios::{connect, message, stream_all};

/// The dashboard without a screen: events into the store, changes into the app, the app's
/// commands into the engine.
pub(crate) struct Dash {
    pub(crate) app: App,
    events: a2a_watch::event::Receiver,
    pub(crate) engine: Engine,
}

impl Dash {
    pub(crate) fn new(specs: Vec<AgentSpec>) -> Dash {
        let store = Store::new(specs.iter().map(|s| (s.name.clone(), s.url.clone())));
        let (tx, events) = a2a_watch::event::channel(256);
        let opts = WatchOptions {
            max_backoff: Duration::from_millis(300),
            ..WatchOptions::default()
        };
        let engine = Engine::start(specs, opts, tx);
        let mut app = App::new(store, KeyMap::default(), Theme::default());
        app.set_prefs(Prefs {
            auto_popup: true,
            bell: false,
            desktop: false,
            ..Prefs::default()
        });
        Dash { app, events, engine }
    }

    pub(crate) async fn flush(&mut self) {
        for (agent, command) in self.app.take_outbox() {
            assert!(self.engine.command(agent, command).await, "the agent's task is alive");
        }
        self.app.take_effects();
    }

    pub(crate) async fn until(&mut self, what: &str, done: impl Fn(&App) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            self.flush().await;
            self.app.refresh();
            if done(&self.app) {
                return;
            }
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(ev)) => {
                    let change = self.app.store_mut().apply(ev);
                    if change != Change::Nothing {
                        self.app.on_changes(&[change]);
                    }
                }
                Ok(None) => panic!("the engine stopped before {what}"),
                Err(_) => {
                    let tasks: Vec<String> = self
                        .app
                        .store()
                        .tasks()
                        .map(|t| format!("{} {}", t.key.id, t.state().short_name()))
                        .collect();
                    let open = self
                        .app
                        .popup::<AnswerBox>()
                        .map(|b| (b.key.id.to_string(), b.error.clone(), b.notice.clone()));
                    panic!(
                        "timed out waiting for {what}; tasks {tasks:?}; flash {:?}; box {open:?}",
                        self.app.steer().flash
                    );
                }
            }
        }
    }

    /// A key pressed a second after the last one: a person at the keyboard, so the guard
    /// against Enter right after a box opens never fires here (answers.rs tests it).
    pub(crate) fn key(&mut self, code: KeyCode) {
        self.app.set_now(self.app.now() + jiff::SignedDuration::from_secs(1));
        on_terminal_event(&mut self.app, TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    pub(crate) fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn state(&self, id: &str) -> Option<TaskState> {
        self.app
            .store()
            .tasks()
            .find(|t| &*t.key.id == id)
            .map(|t| t.state().clone())
    }

    pub(crate) fn select(&mut self, id: &str) {
        let key = self
            .app
            .store()
            .tasks()
            .find(|t| &*t.key.id == id)
            .map(|t| t.key.clone());
        self.app.select(key.unwrap_or_else(|| panic!("no task {id} to select")));
    }
}

pub(crate) fn spec(url: &str, name: &str) -> AgentSpec {
    let mut spec = AgentSpec::new(url);
    spec.name = Some(name.into());
    spec.poll_interval = Duration::from_millis(200);
    spec
}

/// Starts a task and reads its stream until it waits (the stream may stay open through
/// AUTH_REQUIRED); returns the task id.
async fn until_waiting(client: &a2a_watch::a2a::Client, text: &str) -> String {
    let mut run = crate::scenarios::Run::default();
    let stream = client
        .send_streaming_message(&message(text))
        .await
        .expect("stream opens");
    crate::scenarios::read(stream, &mut run, |r| {
        r.last_state().is_some_and(TaskState::is_interrupted)
    })
    .await;
    run.task
}

pub(crate) fn box_for(app: &App) -> Option<String> {
    app.popup::<AnswerBox>().map(|b| b.key.id.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_answered_in_the_box_completes_the_review() {
    let agents = start_demo().await;
    let url = agents.url("code-reviewer").to_string();
    let reviewer = connect(&url, Binding::JsonRpc, None).await;
    let asked = stream_all(&reviewer, &message("review this diff")).await;
    let mut d = Dash::new(vec![spec(&url, "code-reviewer")]);
    // At start, the oldest waiting question pops up by itself.
    d.until("the box pops up", |app| {
        box_for(app).as_deref() == Some(asked.task.as_str())
    })
    .await;
    d.type_text("release/2026.10");
    d.key(KeyCode::Enter);
    d.until("the review completes", |app| {
        app.popup::<AnswerBox>().is_none() && {
            app.store()
                .tasks()
                .any(|t| *t.key.id == asked.task && *t.state() == TaskState::Completed)
        }
    })
    .await;
    let done = reviewer.get_task(&asked.task, None).await.unwrap();
    assert!(
        serde_json::to_string(&done.artifacts)
            .unwrap()
            .contains("release/2026.10")
    );
    d.engine.shutdown().await;
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_connections_and_refusals_of_the_interactions_extension() {
    let agents = start_demo().await;
    let url = agents.url("assistant").to_string();
    let assistant = connect(&url, Binding::Rest, None).await;
    let approve = until_waiting(&assistant, "needs an approval first").await;
    let deny = until_waiting(&assistant, "another approval please").await;
    let mut d = Dash::new(vec![spec(&url, "assistant")]);
    d.until("both approvals listed", |app| app.store().approval_count() == 2)
        .await;

    // A text reply to an approval is refused by the agent; the box keeps the text.
    d.select(&approve);
    d.key(KeyCode::Char('r'));
    assert_eq!(box_for(&d.app).as_deref(), Some(approve.as_str()));
    d.type_text("yes, go ahead");
    d.key(KeyCode::Enter);
    d.until("the refusal", |app| {
        app.popup::<AnswerBox>().is_some_and(|b| b.error.is_some())
    })
    .await;
    let boxed = d.app.popup::<AnswerBox>().unwrap();
    assert_eq!(boxed.text(), "yes, go ahead");
    assert!(
        boxed.error.as_ref().unwrap().contains("InvalidParams"),
        "{:?}",
        boxed.error
    );
    d.key(KeyCode::Esc);

    // a, confirm, and the held call goes ahead: the connection request follows.
    d.select(&approve);
    d.key(KeyCode::Char('a'));
    assert!(d.app.popup::<Confirm>().is_some(), "approving asks first");
    d.key(KeyCode::Char('y'));
    d.until("the connection request", |app| {
        app.store()
            .tasks()
            .any(|t| *t.key.id == approve && t.status.text().starts_with("Connect slack"))
    })
    .await;
    // connected? y
    d.select(&approve);
    d.key(KeyCode::Char('a'));
    d.key(KeyCode::Char('y'));
    d.until("completed", |app| {
        app.store()
            .tasks()
            .any(|t| *t.key.id == approve && *t.state() == TaskState::Completed)
    })
    .await;

    // d denies; the agent decides what follows (it carries on without the call).
    d.select(&deny);
    d.key(KeyCode::Char('d'));
    d.key(KeyCode::Char('y'));
    d.until("the denial taken", |app| {
        app.store()
            .tasks()
            .any(|t| *t.key.id == deny && t.status.text().starts_with("Connect slack"))
    })
    .await;
    d.select(&deny);
    d.key(KeyCode::Char('a'));
    d.key(KeyCode::Char('n'));
    d.until("finished", |app| {
        app.store()
            .tasks()
            .any(|t| *t.key.id == deny && t.state().is_terminal())
    })
    .await;
    let ended = assistant.get_task(&deny, None).await.unwrap();
    let summary = serde_json::to_string(&ended.artifacts).unwrap();
    assert!(
        summary.contains("denied") && summary.to_lowercase().contains("not connected"),
        "{summary}"
    );
    d.engine.shutdown().await;
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_to_an_unreachable_agent_stays_and_a_retry_succeeds_with_the_same_message_id() {
    let agents = start_demo().await;
    let url = agents.url("code-reviewer").to_string();
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let relay = Relay::start(port).await;
    // The agent as seen through the relay.
    let card_file = relay.card_file(&url).await;

    let reviewer = connect(&url, Binding::JsonRpc, None).await;
    let asked = stream_all(&reviewer, &message("review this diff")).await;
    let mut d = Dash::new(vec![spec(card_file.to_str().unwrap(), "code-reviewer")]);
    d.until("the box", |app| box_for(app).as_deref() == Some(asked.task.as_str()))
        .await;
    d.type_text("main");
    relay.set_cut(true).await;
    d.key(KeyCode::Enter);
    d.until("the failure shown in the box", |app| {
        app.popup::<AnswerBox>().is_some_and(|b| b.error.is_some())
    })
    .await;
    let boxed = d.app.popup::<AnswerBox>().unwrap();
    assert_eq!(boxed.text(), "main", "the typed answer is kept");
    // The messageId the failed attempt carried: the rule's, for this question and this text.
    let status = &d.app.store().task(&boxed.key).unwrap().status;
    let message_id = interactions::message_id(&asked.task, status, &Answer::Value("main".into()));
    assert_eq!(d.state(&asked.task), Some(TaskState::InputRequired));

    relay.set_cut(false).await;
    d.key(KeyCode::Enter);
    d.until("the retry lands", |app| app.popup::<AnswerBox>().is_none())
        .await;
    let done = reviewer.get_task(&asked.task, None).await.unwrap();
    let answers: Vec<&str> = done
        .history
        .iter()
        .filter(|m| m.role == a2a_watch::a2a::Role::User && m.task_id.is_some())
        .map(|m| m.message_id.as_str())
        .collect();
    assert!(
        answers.contains(&message_id.as_str()),
        "the retry reused messageId {message_id}: {answers:?}"
    );
    let _ = std::fs::remove_dir_all(card_file.parent().unwrap());
    d.engine.shutdown().await;
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_new_task_from_the_keyboard() {
    let agents = start_demo().await;
    let runner_url = agents.url("test-runner").to_string();
    let deployer_url = agents.url("deployer").to_string();
    let runner = connect(&runner_url, Binding::JsonRpc, None).await;
    let mut slow = message("run the slow tests");
    slow.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let StreamResponse::Task(slow) = runner.send_message(&slow).await.unwrap() else {
        panic!("a task")
    };
    let mut deployer = spec(&deployer_url, "deployer");
    deployer.credential = Credential::Value(a2a_watch::a2a::auth::Secret::new(TOKEN));
    let mut d = Dash::new(vec![spec(&runner_url, "test-runner"), deployer]);
    d.until("the slow run", |app| app.store().tasks().any(|t| *t.key.id == slow.id))
        .await;

    d.select(&slow.id);
    d.key(KeyCode::Char('x'));
    assert!(d.app.popup::<Confirm>().is_some(), "cancel asks first, naming the task");
    d.key(KeyCode::Char('y'));
    d.until("canceled", |app| {
        app.store()
            .tasks()
            .any(|t| *t.key.id == slow.id && *t.state() == TaskState::Canceled)
    })
    .await;
    d.until("the outcome said", |app| {
        app.steer().flash.as_ref().is_some_and(|f| f.text.contains("done"))
    })
    .await;
    // A finished task is not canceled again: nothing is sent.
    d.key(KeyCode::Char('x'));
    assert!(d.app.popup::<Confirm>().is_none() && d.app.steer().outbox.is_empty());

    // n: the new-task form, on the selected task's agent; ←/→ changes the agent.
    d.key(KeyCode::Char('n'));
    d.key(KeyCode::Tab);
    d.key(KeyCode::Tab);
    d.key(KeyCode::Right);
    d.key(KeyCode::Tab);
    d.type_text("deploy build 42 to production");
    d.key(KeyCode::Enter);
    d.until("the new task appears, selected", |app| {
        app.popup::<NewTask>().is_none()
            && app
                .selected_task()
                .is_some_and(|t| t.key.agent == 1 && *t.state() == TaskState::Rejected)
    })
    .await;
    let key: TaskKey = d.app.selected().cloned().unwrap();
    let t = d.app.store().task(&key).unwrap();
    let asked = t.history.first().map(|m| &m.parts[0].content);
    assert!(
        matches!(asked, Some(PartContent::Text(text)) if text.contains("build 42")),
        "{asked:?}"
    );
    d.engine.shutdown().await;
    agents.shutdown().await;
}

/// The same box against agents built with the official SDKs, old and new: the answer goes on
/// the same task (0.3 method names and shapes for the 0.3 one) and the task completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_box_answers_official_sdk_agents_too() {
    use crate::peers::{Peer, Sdk};
    for sdk in [Sdk::Python13, Sdk::Js13, Sdk::Python03] {
        let peer = Peer::start(sdk, &[]);
        let client = connect(&peer.url, Binding::JsonRpc, None).await;
        let mut d = Dash::new(vec![spec(&peer.url, "test-runner")]);
        // On 0.3 agents there is no ListTasks: the dashboard watches tasks it was given.
        let asked = stream_all(&client, &message("question: review this diff")).await;
        assert!(
            d.engine
                .command(0, a2a_watch::event::Command::Watch(asked.task.clone()))
                .await
        );
        d.until("the box pops up", |app| {
            box_for(app).as_deref() == Some(asked.task.as_str())
        })
        .await;
        d.type_text("main");
        d.key(KeyCode::Enter);
        d.until("completed", |app| {
            app.popup::<AnswerBox>().is_none() && {
                app.store()
                    .tasks()
                    .any(|t| *t.key.id == asked.task && *t.state() == TaskState::Completed)
            }
        })
        .await;
        d.engine.shutdown().await;
    }
}
