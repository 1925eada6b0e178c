//! The client against the built-in demo agents, over both bindings.

use std::time::Duration;

use a2a_watch::a2a::client::MAX_PAGES;
use a2a_watch::a2a::{Binding, ErrorKind, ListTasksRequest, TaskState};
use a2a_watch::demo::{self, DemoAgents, DemoConfig};

use crate::scenarios::*;

pub const TOKEN: &str = "s3cret-demo";

pub async fn start_demo() -> DemoAgents {
    let config = DemoConfig {
        base_port: 0,
        token: TOKEN.into(),
        step: Duration::from_millis(20),
    };
    demo::start(config).await.expect("the demo agents start")
}

async fn lifecycle(binding: Binding) {
    let agents = start_demo().await;
    let runner = connect(agents.url("test-runner"), binding, None).await;
    test_run_completes(&runner, "run the tests of payments-api").await;
    failing_run_fails(&runner, "run the tests, they will fail").await;
    cancel_and_subscribe(&runner, &Quirks::SPEC, "run the slow tests").await;
    unknown_tasks_are_not_found(&runner, &Quirks::SPEC).await;

    let reviewer = connect(agents.url("code-reviewer"), binding, None).await;
    question_is_answered(
        &reviewer,
        &Quirks::SPEC,
        "review this diff of payments-api",
        "release/2026.10",
    )
    .await;

    let deployer = connect(agents.url("deployer"), binding, Some(TOKEN)).await;
    approval_out_of_band(&deployer, "deploy build 2026.10.06-1 to staging").await;
    let rejected = stream_all(&deployer, &message("deploy build 2026.10.06-1 to production")).await;
    assert_eq!(rejected.last_state(), Some(&TaskState::Rejected));
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_agents_over_jsonrpc() {
    lifecycle(Binding::JsonRpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_agents_over_http_json() {
    lifecycle(Binding::Rest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deployer_wants_its_token() {
    let agents = start_demo().await;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        bearer_is_required(agents.url("deployer"), binding, TOKEN, "A2A_TOKEN_DEPLOYER").await;
    }
    agents.shutdown().await;
}

/// A server that closes the stream mid-task: the client reports the end of the stream, not a
/// state, and GetTask then shows the task still running, later completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_mid_task_is_a_close_not_a_state() {
    let agents = start_demo().await;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        let runner = connect(agents.url("test-runner"), binding, None).await;
        let run = stream_all(&runner, &message("run the tests, drop the stream")).await;
        assert_eq!(
            run.last_state(),
            Some(&TaskState::Working),
            "the stream ended while working: {:?}",
            run.states
        );
        assert!(run.errors.is_empty(), "a close is no error: {:?}", run.errors);
        let now = runner.get_task(&run.task, None).await.unwrap();
        assert!(!now.status.state.is_terminal() || now.status.state == TaskState::Completed);
        wait_for_state(&runner, &run.task, &TaskState::Completed).await;
        // and the terminal task now refuses a subscription with the typed error
        let err = runner.subscribe(&run.task).await.err().expect("refused");
        assert!(err.is_kind(ErrorKind::UnsupportedOperation), "{err}");
    }
    agents.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_pages_and_filters() {
    let agents = start_demo().await;
    let runner = connect(agents.url("test-runner"), Binding::Rest, None).await;
    for i in 0..5 {
        stream_all(&runner, &message(&format!("run the tests #{i}"))).await;
    }
    let paged = ListTasksRequest {
        page_size: Some(2),
        ..Default::default()
    };
    let first = runner.list_tasks(&paged).await.unwrap();
    assert_eq!(first.tasks.len(), 2);
    assert!(!first.next_page_token.is_empty());
    let all = runner.list_pages(&paged, MAX_PAGES).await.unwrap().tasks;
    assert_eq!(all.len(), 5, "every page, no duplicates");
    let completed = ListTasksRequest {
        status: Some(TaskState::Completed),
        ..Default::default()
    };
    assert_eq!(runner.list_pages(&completed, MAX_PAGES).await.unwrap().tasks.len(), 5);
    let none = ListTasksRequest {
        status: Some(TaskState::Failed),
        ..Default::default()
    };
    assert!(runner.list_pages(&none, MAX_PAGES).await.unwrap().tasks.is_empty());
    agents.shutdown().await;
}
