//! The watch engine against the demo agents over loopback: tasks started elsewhere are
//! discovered and followed to their end, an agent that goes away and comes back is picked up
//! again, and an agent that wants a token shows as unauthorized.

use std::time::Duration;

use a2a_watch::a2a::{StateClass, StreamResponse, TaskState};
use a2a_watch::demo::{self, DemoConfig};
use a2a_watch::event::Health;
use a2a_watch::store::{Store, TaskEntry};
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};

use crate::demo_client::{TOKEN, start_demo};
use crate::relay::Relay;
use crate::scenarios::{connect, message, stream_all};

pub(crate) struct Watched {
    pub store: Store,
    pub events: a2a_watch::event::Receiver,
    pub engine: Engine,
}

fn spec(url: &str, name: &str) -> AgentSpec {
    let mut spec = AgentSpec::new(url);
    spec.name = Some(name.into());
    spec.poll_interval = Duration::from_millis(200);
    spec
}

fn watch(specs: Vec<AgentSpec>) -> Watched {
    let store = Store::new(specs.iter().map(|s| (s.name.clone(), s.url.clone())));
    let (tx, events) = a2a_watch::event::channel(256);
    let opts = WatchOptions {
        max_backoff: Duration::from_millis(500),
        ..WatchOptions::default()
    };
    Watched {
        store,
        events,
        engine: Engine::start(specs, opts, tx),
    }
}

impl Watched {
    /// Applies events until `done` holds, or fails after the deadline saying what it saw.
    pub(crate) async fn until(&mut self, what: &str, done: impl Fn(&Store) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !done(&self.store) {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(ev)) => {
                    self.store.apply(ev);
                }
                Ok(None) => panic!("the engine stopped before {what}"),
                Err(_) => {
                    let tasks: Vec<String> = self
                        .store
                        .tasks()
                        .map(|t| format!("{} {}", t.key.id, t.state().short_name()))
                        .collect();
                    let health: Vec<&str> = self.store.agents.iter().map(|a| a.health.label()).collect();
                    panic!("timed out waiting for {what}; health {health:?}, tasks {tasks:?}");
                }
            }
        }
    }
}

fn by_id<'a>(store: &'a Store, id: &str) -> Option<&'a TaskEntry> {
    store.tasks().find(|t| &*t.key.id == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_started_elsewhere_are_discovered_and_followed_to_their_end() {
    let agents = start_demo().await;
    let runner_url = agents.url("test-runner").to_string();
    let reviewer_url = agents.url("code-reviewer").to_string();
    let mut w = watch(vec![
        spec(&runner_url, "test-runner"),
        spec(&reviewer_url, "code-reviewer"),
    ]);
    w.until("both agents streaming", |s| {
        s.agents.iter().all(|a| a.health == Health::Streaming)
    })
    .await;

    // Started elsewhere (by "the planner"): the engine finds them by listing.
    let runner = connect(&runner_url, a2a_watch::a2a::Binding::JsonRpc, None).await;
    let reviewer = connect(&reviewer_url, a2a_watch::a2a::Binding::Rest, None).await;
    let mut cut = message("run the slow tests, drop the stream");
    cut.configuration = Some(a2a_watch::a2a::SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let StreamResponse::Task(cut) = runner.send_message(&cut).await.unwrap() else {
        panic!("a task")
    };
    stream_all(&reviewer, &message("review this diff")).await;

    w.until("the cut run completed and the review waits", |s| {
        by_id(s, &cut.id).is_some_and(|t| t.state() == &TaskState::Completed)
            && s.tasks().any(|t| t.state() == &TaskState::InputRequired)
    })
    .await;
    // What the run said along the way depends on when the engine looked (the demo keeps its
    // own time); that every step is seen through the server's closes is pinned where the task
    // moves only while subscribed (recovery.rs,
    // a_task_followed_through_server_closes_shows_every_step_and_the_whole_log).
    let run = by_id(&w.store, &cut.id).unwrap();
    assert!(
        run.timeline.iter().any(|t| t.text == "1 failed, 11 passed"),
        "{:?}",
        run.timeline
    );
    assert_eq!(w.store.counts(1).interrupted, 1);
    w.engine.shutdown().await;
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_goes_away_and_comes_back_is_picked_up_again() {
    let config = DemoConfig {
        base_port: 0,
        token: TOKEN.into(),
        step: Duration::from_millis(20),
    };
    let first = demo::start(config.clone()).await.unwrap();
    let first_url = first.url("test-runner").to_string();
    // The watcher knows the agent by the relay's address, which the test holds throughout: the
    // restarted agent is found at the same address without rebinding a port someone may take.
    let relay = Relay::start(first.agents[0].port).await;
    let card_file = relay.card_file(&first_url).await;
    let mut w = watch(vec![spec(card_file.to_str().unwrap(), "test-runner")]);
    w.until("streaming", |s| s.agents[0].health == Health::Streaming).await;
    relay.set_cut(true).await;
    first.shutdown().await;
    w.until("the loss is noticed", |s| {
        matches!(
            s.agents[0].health,
            Health::Reconnecting { .. } | Health::Unreachable { .. }
        )
    })
    .await;

    // A new process of the same agent at the same address, with none of the old tasks.
    let second = demo::start(config).await.expect("the demo agents start again");
    relay.set_upstream(second.agents[0].port);
    relay.set_cut(false).await;
    w.until("streaming again", |s| s.agents[0].health == Health::Streaming)
        .await;
    let url = second.url("test-runner").to_string();
    let client = connect(&url, a2a_watch::a2a::Binding::JsonRpc, None).await;
    let run = stream_all(&client, &message("run the tests after the restart")).await;
    w.until("the new task", |s| {
        by_id(s, &run.task).is_some_and(|t| t.class() == StateClass::Terminal)
    })
    .await;
    w.engine.shutdown().await;
    second.shutdown().await;
    let _ = std::fs::remove_dir_all(card_file.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_that_refuse_or_are_not_there_say_so_on_their_row() {
    let agents = start_demo().await;
    let mut w = watch(vec![
        spec(agents.url("deployer"), "deployer"),
        spec("http://127.0.0.1:9", "nowhere"),
    ]);
    w.until("both problems shown", |s| {
        matches!(&s.agents[0].health, Health::Unauthorized { message } if message.contains("A2A_TOKEN_DEPLOYER"))
            && matches!(s.agents[1].health, Health::Reconnecting { attempt, .. } if attempt >= 1)
    })
    .await;
    let Health::Unauthorized { message } = &w.store.agents[0].health else {
        unreachable!()
    };
    assert!(!message.contains(TOKEN), "{message}");
    w.engine.shutdown().await;
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_its_token_the_deployer_is_watched_and_tasks_by_id_are_added() {
    let agents = start_demo().await;
    let url = agents.url("deployer").to_string();
    let client = connect(&url, a2a_watch::a2a::Binding::JsonRpc, Some(TOKEN)).await;
    let rejected = stream_all(&client, &message("deploy build 7 to production")).await;
    let mut s = spec(&url, "deployer");
    s.credential = a2a_watch::watch::Credential::Value(a2a_watch::a2a::auth::Secret::new(TOKEN));
    s.tasks = vec![rejected.task.clone()];
    let mut w = watch(vec![s]);
    w.until("the rejected task", |st| {
        st.tasks()
            .any(|t| *t.key.id == *rejected.task && t.state() == &TaskState::Rejected)
    })
    .await;
    assert_eq!(w.store.agents[0].health, Health::Streaming);
    w.engine.shutdown().await;
    agents.shutdown().await;
}

/// A token_command that fails shows on the agent's row without its output; one that prints
/// the token lets the agent be watched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_commands_are_run_and_their_failures_shown() {
    let agents = start_demo().await;
    let url = agents.url("deployer").to_string();
    // The commands read the token from a file, as a real one reads it from its own store.
    let file = std::env::temp_dir().join(format!("a2a-watch-token-{}", std::process::id()));
    std::fs::write(&file, TOKEN).unwrap();
    let mut broken = spec(&url, "deployer");
    broken.credential = a2a_watch::watch::Credential::Command(format!("cat {}; exit 3", file.display()));
    let mut working = spec(&url, "deployer-too");
    working.credential = a2a_watch::watch::Credential::Command(format!("cat {}", file.display()));
    let mut w = watch(vec![broken, working]);
    w.until("the failure and the success", |s| {
        matches!(&s.agents[0].health, Health::Unauthorized { message } if message.contains("failed"))
            && s.agents[1].health == Health::Streaming
    })
    .await;
    let Health::Unauthorized { message } = &w.store.agents[0].health else {
        unreachable!()
    };
    assert!(!message.contains(TOKEN), "the command's output is not shown: {message}");
    let _ = std::fs::remove_file(file);
    w.engine.shutdown().await;
    agents.shutdown().await;
}
