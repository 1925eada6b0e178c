//! The lifecycle scenarios every peer must pass, whoever built it: our demo agents and the
//! official SDKs' agents run the same checks through the real client over real HTTP.

use std::time::Duration;

use a2a_watch::a2a::auth::Secret;
use a2a_watch::a2a::{
    Artifact, Binding, Client, ClientOptions, Error, ErrorKind, EventStream, ListTasksRequest, Message, Part,
    PartContent, SendMessageConfiguration, SendMessageRequest, StreamResponse, TaskState,
};
use futures::StreamExt;

pub async fn connect(url: &str, binding: Binding, token: Option<&str>) -> Client {
    let opts = ClientOptions {
        binding: Some(binding),
        token: token.map(Secret::new),
        ..Default::default()
    };
    let client = Client::connect(url, opts)
        .await
        .unwrap_or_else(|e| panic!("connect {url}: {e}"));
    assert_eq!(client.endpoint.binding, binding);
    client
}

pub fn message(text: &str) -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user(vec![Part::text(text)]),
        ..Default::default()
    }
}

pub fn reply(task: &str, context: &str, text: &str) -> SendMessageRequest {
    let mut req = message(text);
    req.message.task_id = Some(task.into());
    req.message.context_id = Some(context.into());
    req
}

/// What one stream carried, in order, until the server closed it.
#[derive(Debug, Default)]
pub struct Run {
    pub task: String,
    pub context: String,
    pub states: Vec<TaskState>,
    pub texts: Vec<String>,
    pub artifacts: Vec<Artifact>,
    pub first: Option<&'static str>,
    pub errors: Vec<String>,
}

impl Run {
    pub fn last_state(&self) -> Option<&TaskState> {
        self.states.last()
    }

    fn take(&mut self, ev: &StreamResponse) {
        self.first.get_or_insert(ev.kind());
        match ev {
            StreamResponse::Task(t) => {
                self.task = t.id.clone();
                self.context = t.context_id.clone();
                self.states.push(t.status.state.clone());
                self.texts.push(t.status.text());
                // A snapshot replaces what we had (spec section 3.1.6).
                self.artifacts = t.artifacts.clone();
            }
            StreamResponse::StatusUpdate(u) => {
                self.task = u.task_id.clone();
                self.context = u.context_id.clone();
                self.states.push(u.status.state.clone());
                self.texts.push(u.status.text());
            }
            StreamResponse::ArtifactUpdate(u) => u.apply_to(&mut self.artifacts),
            StreamResponse::Message(_) => {}
        }
    }
}

const STREAM_DEADLINE: Duration = Duration::from_secs(30);

/// Reads a stream to its end (the server closing it), or until `stop` says enough.
pub async fn read(mut stream: EventStream, run: &mut Run, stop: impl Fn(&Run) -> bool) {
    let body = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(ev) => run.take(&ev),
                Err(e) => run.errors.push(e.to_string()),
            }
            if stop(run) {
                return;
            }
        }
    };
    if tokio::time::timeout(STREAM_DEADLINE, body).await.is_err() {
        panic!(
            "the stream neither ended nor stopped in time; it carried {:?} {:?}",
            run.states, run.texts
        );
    }
}

pub async fn stream_all(client: &Client, req: &SendMessageRequest) -> Run {
    let mut run = Run::default();
    let stream = client.send_streaming_message(req).await.expect("stream opens");
    read(stream, &mut run, |_| false).await;
    run
}

/// Polls GetTask until the task is in `want` (the truth after a stream closed).
pub async fn wait_for_state(client: &Client, task: &str, want: &TaskState) -> a2a_watch::a2a::Task {
    let deadline = tokio::time::Instant::now() + STREAM_DEADLINE;
    loop {
        let t = client.get_task(task, None).await.expect("GetTask");
        if &t.status.state == want {
            return t;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {task} stuck in {} waiting for {want}",
            t.status.state
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn artifact<'a>(arts: &'a [Artifact], id: &str) -> &'a Artifact {
    arts.iter()
        .find(|a| a.artifact_id == id)
        .unwrap_or_else(|| panic!("artifact {id} in {arts:?}"))
}

fn data_part(a: &Artifact) -> &serde_json::Value {
    a.parts
        .iter()
        .find_map(|p| match &p.content {
            PartContent::Data(d) => Some(d),
            _ => None,
        })
        .expect("a data part")
}

/// A test run streams to COMPLETED "1 failed, 11 passed" with a chunked log and a summary.
pub async fn test_run_completes(client: &Client, text: &str) {
    let run = stream_all(client, &message(text)).await;
    assert_eq!(
        run.first,
        Some("task"),
        "a new task's stream starts with the task (spec section 3.1.2)"
    );
    assert_eq!(run.states.first(), Some(&TaskState::Submitted));
    assert!(run.states.contains(&TaskState::Working), "{:?}", run.states);
    assert_eq!(run.last_state(), Some(&TaskState::Completed), "{:?}", run.states);
    assert_eq!(run.texts.last().map(String::as_str), Some("1 failed, 11 passed"));
    let log = artifact(&run.artifacts, "test-log");
    assert!(log.parts.len() >= 3, "chunks become parts of one artifact: {log:?}");
    assert!(log.text().contains("collected 12 items"), "{}", log.text());
    // a2a-python sends numbers as floats: compare as numbers.
    let summary = data_part(artifact(&run.artifacts, "summary"));
    assert_eq!(summary["passed"].as_f64(), Some(11.0));
    assert_eq!(summary["failed"].as_f64(), Some(1.0));
    // The stored task agrees with what the stream said.
    let stored = client.get_task(&run.task, None).await.unwrap();
    assert_eq!(stored.status.state, TaskState::Completed);
}

pub async fn failing_run_fails(client: &Client, text: &str) {
    let run = stream_all(client, &message(text)).await;
    assert_eq!(run.last_state(), Some(&TaskState::Failed), "{:?}", run.states);
}

/// INPUT_REQUIRED, then a reply on the same task and context completes it.
pub async fn question_is_answered(client: &Client, text: &str, branch: &str) {
    let run = stream_all(client, &message(text)).await;
    assert_eq!(run.last_state(), Some(&TaskState::InputRequired), "{:?}", run.states);
    assert_eq!(
        run.texts.last().map(String::as_str),
        Some("Which base branch should I compare this diff against?")
    );
    let stored = client.get_task(&run.task, None).await.unwrap();
    assert_eq!(
        stored.status.state,
        TaskState::InputRequired,
        "the close did not change the task"
    );

    let answer = stream_all(client, &reply(&run.task, &run.context, branch)).await;
    assert_eq!(answer.task, run.task, "same task");
    assert!(answer.states.contains(&TaskState::Working), "{:?}", answer.states);
    assert_eq!(answer.last_state(), Some(&TaskState::Completed), "{:?}", answer.states);
    let done = client.get_task(&run.task, None).await.unwrap();
    let review = serde_json::to_string(&done.artifacts).unwrap();
    assert!(review.contains(branch), "the review names the branch: {review}");
}

fn first_link(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("a link in the status text")
        .to_string()
}

/// AUTH_REQUIRED with a link; a plain POST to it (outside A2A) lets the task complete.
pub async fn approval_out_of_band(client: &Client, text: &str) {
    let mut run = Run::default();
    let stream = client
        .send_streaming_message(&message(text))
        .await
        .expect("stream opens");
    let waiting = |r: &Run| r.last_state() == Some(&TaskState::AuthRequired);
    read(stream, &mut run, waiting).await;
    assert!(waiting(&run), "{:?}", run.states);
    let link = first_link(run.texts.last().unwrap());
    let resp = reqwest::Client::new().post(&link).send().await.expect("approval POST");
    assert!(resp.status().is_success(), "approve: {}", resp.status());
    wait_for_state(client, &run.task, &TaskState::Completed).await;
}

/// A running task: ListTasks finds it, SubscribeToTask starts with its snapshot, CancelTask
/// ends it and subscribers see CANCELED; then the terminal task refuses subscription.
pub async fn cancel_and_subscribe(client: &Client, text: &str) {
    let mut req = message(text);
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let StreamResponse::Task(task) = client.send_message(&req).await.expect("send") else {
        panic!("a task, not a message")
    };
    assert!(!task.status.state.is_terminal());
    let listed = client
        .list_all_tasks(&ListTasksRequest::default())
        .await
        .expect("ListTasks");
    assert!(listed.iter().any(|t| t.id == task.id), "ListTasks finds the new task");
    let by_context = ListTasksRequest {
        context_id: Some(task.context_id.clone()),
        ..Default::default()
    };
    let in_context = client.list_all_tasks(&by_context).await.unwrap();
    assert!(in_context.iter().all(|t| t.context_id == task.context_id) && !in_context.is_empty());

    wait_for_state(client, &task.id, &TaskState::Working).await;
    let stream = client.subscribe(&task.id).await.expect("subscribe");
    let mut run = Run::default();
    let canceler = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        client.cancel_task(&task.id).await
    };
    let (canceled, ()) = tokio::join!(
        canceler,
        read(stream, &mut run, |r| r.last_state() == Some(&TaskState::Canceled))
    );
    assert_eq!(
        run.first,
        Some("task"),
        "subscribe starts with the snapshot (spec section 3.1.6)"
    );
    assert_eq!(canceled.expect("CancelTask").status.state, TaskState::Canceled);
    assert_eq!(run.last_state(), Some(&TaskState::Canceled), "{:?}", run.states);

    let err = client
        .subscribe(&task.id)
        .await
        .err()
        .expect("terminal tasks refuse subscription");
    assert!(err.is_kind(ErrorKind::UnsupportedOperation), "{err}");
    let again = client.cancel_task(&task.id).await.err();
    if let Some(e) = again {
        assert!(e.is_kind(ErrorKind::TaskNotCancelable), "{e}");
    }
}

pub async fn unknown_tasks_are_not_found(client: &Client) {
    let err = client
        .get_task("00000000-0000-0000-0000-000000000000", None)
        .await
        .unwrap_err();
    assert!(err.is_kind(ErrorKind::TaskNotFound), "{err}");
    let err = client
        .subscribe("00000000-0000-0000-0000-000000000000")
        .await
        .err()
        .unwrap();
    assert!(err.is_kind(ErrorKind::TaskNotFound), "{err}");
}

/// Without a token: a 401 that names the scheme and the env var; with it: success.
pub async fn bearer_is_required(url: &str, binding: Binding, token: &str, env_var: &str) {
    let anonymous = connect(url, binding, None).await;
    let err = anonymous.list_tasks(&ListTasksRequest::default()).await.unwrap_err();
    let Error::Unauthorized { status: 401, .. } = &err else {
        panic!("expected 401, got {err}")
    };
    let msg = err.to_string();
    assert!(msg.contains("Bearer") && msg.contains(env_var), "{msg}");
    assert!(!msg.contains(token), "no token in messages");
    let authed = connect(url, binding, Some(token)).await;
    authed
        .list_tasks(&ListTasksRequest::default())
        .await
        .expect("the token is accepted");
}
