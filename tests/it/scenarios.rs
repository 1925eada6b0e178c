//! The lifecycle scenarios every peer must pass, whoever built it: our demo agents and the official
//! SDKs' agents run the same checks through the real client over real HTTP. Where the SDKs differ
//! on the wire, a `Quirks` value says what one peer does, so each difference is pinned per SDK (the
//! "SDK quirks" sections of docs/protocol-notes.md; tests/golden/README.md) instead of being
//! tolerated silently.

use std::time::Duration;

use a2a_watch::a2a::auth::Secret;
use a2a_watch::a2a::client::MAX_PAGES;
use a2a_watch::a2a::wire::{jsonrpc, rest};
use a2a_watch::a2a::{
    Artifact, Binding, Client, ClientOptions, Error, ErrorKind, EventStream, ListTasksRequest, Message, Part,
    PartContent, ProtocolVersion, SendMessageConfiguration, SendMessageRequest, StreamResponse, Task, TaskState,
};
use futures::{Stream, StreamExt};
use serde_json::Value;

use crate::cli;

/// How a peer ends a stream whose executor throws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashEnd {
    /// An error frame, then the end; the task is FAILED (a2a-python 1.3.0).
    ErrorFrame,
    /// A synthesized FAILED status "Agent execution error: …", no error (a2a-js 1.3.0).
    FailedStatus,
    /// The connection breaks; the task stays WORKING for ever (a2a-python 0.3.26).
    BrokenConnection,
}

/// What one peer does where the SDKs differ on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Quirks {
    /// The version the client must pick from the card.
    pub version: ProtocolVersion,
    /// SubscribeToTask opens with the Task snapshot (spec section 3.1.6).
    pub subscribe_snapshot: bool,
    /// A stream that continues a task (the reply) opens with a Task snapshot still showing the
    /// question just answered.
    pub reply_snapshot: bool,
    /// A refused subscription is a 200 event stream with one error frame, not an error reply.
    pub refusals_in_stream: bool,
    /// SubscribeToTask on a terminal task.
    pub terminal_subscribe: ErrorKind,
    /// SubscribeToTask on an INPUT_REQUIRED task: None = allowed, it carries the next turn.
    pub interrupted_subscribe: Option<ErrorKind>,
    /// The CANCELED status reaches the task's subscribers before their streams end.
    pub cancel_reaches_subscribers: bool,
    /// Each open subscription makes the server store the appended chunks it relays once more,
    /// so GetTask shows them twice.
    pub subscribers_store_chunks_again: bool,
    /// CancelTask on a CANCELED task: this error, or None when the task comes back.
    pub recancel: Option<ErrorKind>,
    pub crash: CrashEnd,
    pub in_band: InBand,
}

/// A message on a task that waits in AUTH_REQUIRED (the agent still inside its turn, waiting
/// for an out-of-band approval), sent while the first stream is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InBand {
    /// The message starts the next turn, which completes the task; the first stream ends,
    /// with this error frame if `Some`.
    NewTurn(Option<ErrorKind>),
    /// The message waits for the running turn to end (a2a-python 1.3.0 runs one request per
    /// task at a time): not exercised, since the approval it waits for never comes.
    Queued,
}

impl Quirks {
    /// The spec's reading, which our demo agents follow, and a2a-python 1.3.0 but for one point
    /// (sdk_python.rs); where the spec says nothing (a crashing executor), what a2a-python does.
    pub const SPEC: Quirks = Quirks {
        version: ProtocolVersion::V1_0,
        subscribe_snapshot: true,
        reply_snapshot: false,
        refusals_in_stream: false,
        terminal_subscribe: ErrorKind::UnsupportedOperation,
        interrupted_subscribe: None,
        cancel_reaches_subscribers: true,
        subscribers_store_chunks_again: false,
        recancel: Some(ErrorKind::TaskNotCancelable),
        crash: CrashEnd::ErrorFrame,
        in_band: InBand::NewTurn(None),
    };
}

pub async fn connect(url: &str, binding: Binding, token: Option<&str>) -> Client {
    let client = connect_with(url, Some(binding), token).await;
    assert_eq!(client.endpoint.binding, binding);
    client
}

/// Connects as a user would: the binding is the card's first choice, unless forced.
pub async fn connect_with(url: &str, binding: Option<Binding>, token: Option<&str>) -> Client {
    let opts = ClientOptions {
        binding,
        token: token.map(Secret::new),
        ..Default::default()
    };
    Client::connect(url, opts)
        .await
        .unwrap_or_else(|e| panic!("connect {url}: {e}"))
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
    pub errors: Vec<Error>,
    /// The server ended the stream (the client's `None`).
    pub closed: bool,
}

impl Run {
    pub fn last_state(&self) -> Option<&TaskState> {
        self.states.last()
    }

    /// The states without repeats in a row: the order a person reads.
    pub fn steps(&self) -> Vec<TaskState> {
        let mut out = self.states.clone();
        out.dedup();
        out
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
            StreamResponse::ArtifactUpdate(u) => {
                u.apply_to(&mut self.artifacts);
            }
            StreamResponse::Message(_) => {}
        }
    }
}

const STREAM_DEADLINE: Duration = Duration::from_secs(30);

/// Reads a stream to its end (the server closing it), or until `stop` says enough. Takes the
/// stream or `&mut` it, to read on later.
pub async fn read<S>(mut stream: S, run: &mut Run, stop: impl Fn(&Run) -> bool)
where
    S: Stream<Item = a2a_watch::a2a::Result<StreamResponse>> + Unpin,
{
    let body = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(ev) => run.take(&ev),
                Err(e) => run.errors.push(e),
            }
            if stop(run) {
                return;
            }
        }
        run.closed = true;
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
    let mut stream = client.send_streaming_message(req).await.expect("stream opens");
    read(&mut stream, &mut run, |_| false).await;
    run
}

/// SendMessage with `returnImmediately` (0.3: `blocking: false`): the task, still running.
pub async fn send_non_blocking(client: &Client, text: &str) -> Task {
    let mut req = message(text);
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let StreamResponse::Task(task) = client.send_message(&req).await.expect("send") else {
        panic!("a task, not a message")
    };
    assert!(
        matches!(task.status.state, TaskState::Submitted | TaskState::Working),
        "the call returned before the run ended: {}",
        task.status.state
    );
    task
}

/// Polls GetTask until the task is in `want` (the truth after a stream closed).
pub async fn wait_for_state(client: &Client, task: &str, want: &TaskState) -> Task {
    wait_for(client, task, &want.to_string(), |t| &t.status.state == want).await
}

/// Polls GetTask until the stored task is as `ready` wants it.
pub async fn wait_for(client: &Client, task: &str, what: &str, ready: impl Fn(&Task) -> bool) -> Task {
    let deadline = tokio::time::Instant::now() + STREAM_DEADLINE;
    loop {
        let t = client.get_task(task, None).await.expect("GetTask");
        if ready(&t) {
            return t;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {task} stuck in {} waiting for {what}",
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

fn data_part(a: &Artifact) -> &Value {
    a.parts
        .iter()
        .find_map(|p| match &p.content {
            PartContent::Data(d) => Some(d),
            _ => None,
        })
        .expect("a data part")
}

/// The test run's artifacts: a log in chunks, and a summary.
fn assert_test_run_artifacts(arts: &[Artifact]) {
    let log = artifact(arts, "test-log");
    assert!(log.parts.len() >= 3, "chunks become parts of one artifact: {log:?}");
    assert!(log.text().contains("collected 12 items"), "{}", log.text());
    // a2a-python sends numbers as floats: compare as numbers.
    let summary = data_part(artifact(arts, "summary"));
    assert_eq!(summary["passed"].as_f64(), Some(11.0));
    assert_eq!(summary["failed"].as_f64(), Some(1.0));
}

/// The three chunks of the log the SDK agents (tests/interop) send.
const LOG: [&str; 3] = [
    "collected 12 items\n",
    "tests/test_api.py ........... [ 91%]\n",
    "tests/test_refunds.py F [100%]\n",
];

/// The log holds these chunks of `LOG`, exactly, in this order.
fn assert_log(arts: &[Artifact], chunks: &[usize]) {
    let want: String = chunks.iter().map(|&i| LOG[i]).collect();
    assert_eq!(artifact(arts, "test-log").text(), want);
}

/// The whole log the SDK agents send, every chunk once, in order.
pub fn assert_interop_test_log(arts: &[Artifact]) {
    assert_log(arts, &[0, 1, 2]);
}

/// A test run streams to COMPLETED "1 failed, 11 passed" with a chunked log and a summary.
pub async fn test_run_completes(client: &Client, text: &str) -> Run {
    let run = stream_all(client, &message(text)).await;
    assert_eq!(
        run.first,
        Some("task"),
        "a new task's stream starts with the task (spec section 3.1.2)"
    );
    assert_eq!(
        run.steps(),
        [TaskState::Submitted, TaskState::Working, TaskState::Completed],
        "every state, in order"
    );
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.texts.last().map(String::as_str), Some("1 failed, 11 passed"));
    assert_test_run_artifacts(&run.artifacts);
    // The stored task agrees with what the stream said.
    let stored = client.get_task(&run.task, None).await.unwrap();
    assert_eq!(stored.status.state, TaskState::Completed);
    run
}

pub async fn failing_run_fails(client: &Client, text: &str) {
    let run = stream_all(client, &message(text)).await;
    assert_eq!(run.states.first(), Some(&TaskState::Submitted), "{:?}", run.states);
    assert_eq!(run.last_state(), Some(&TaskState::Failed), "{:?}", run.states);
    assert!(
        run.errors.is_empty(),
        "a failed task is no stream error: {:?}",
        run.errors
    );
}

/// An executor that throws: the client reports how the stream ended, and GetTask tells the truth.
pub async fn crash_is_reported(client: &Client, q: &Quirks, text: &str) {
    let run = stream_all(client, &message(text)).await;
    assert!(run.closed);
    let failed = match q.crash {
        CrashEnd::ErrorFrame => {
            assert!(matches!(run.errors[..], [Error::Agent { .. }]), "{:?}", run.errors);
            assert_eq!(run.last_state(), Some(&TaskState::Working), "{:?}", run.states);
            true
        }
        CrashEnd::FailedStatus => {
            assert!(run.errors.is_empty(), "{:?}", run.errors);
            assert_eq!(run.last_state(), Some(&TaskState::Failed), "{:?}", run.states);
            let said = run.texts.last().unwrap();
            assert!(said.starts_with("Agent execution error"), "{said}");
            true
        }
        CrashEnd::BrokenConnection => {
            assert!(matches!(run.errors[..], [Error::Stream(_)]), "{:?}", run.errors);
            assert_eq!(run.last_state(), Some(&TaskState::Working), "{:?}", run.states);
            false
        }
    };
    if failed {
        wait_for_state(client, &run.task, &TaskState::Failed).await;
    } else {
        let stored = client.get_task(&run.task, None).await.unwrap();
        assert_eq!(stored.status.state, TaskState::Working, "left running for ever");
    }
}

/// INPUT_REQUIRED closes the stream; a subscriber to the waiting task sees the next turn; the
/// reply on the same task and context completes it.
pub async fn question_is_answered(client: &Client, q: &Quirks, text: &str, branch: &str) {
    let run = stream_all(client, &message(text)).await;
    assert_eq!(
        run.steps(),
        [TaskState::Submitted, TaskState::Working, TaskState::InputRequired]
    );
    assert!(run.closed, "every SDK closes the stream at INPUT_REQUIRED");
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

    // The answer waits for the subscription's first event: from then on the subscription is in
    // place and must see the whole next turn.
    let (subscribed, in_place) = tokio::sync::oneshot::channel();
    let watch = async {
        if let Some(kind) = q.interrupted_subscribe {
            return assert_subscribe_refused(client, q, &run.task, kind).await;
        }
        let mut stream = client.subscribe(&run.task).await.expect("subscribe");
        let mut seen = Run::default();
        read(&mut stream, &mut seen, |r| r.first.is_some()).await;
        let _ = subscribed.send(());
        if !seen.closed {
            read(&mut stream, &mut seen, |_| false).await;
        }
        assert_eq!(seen.first, Some("task"), "the snapshot first");
        assert_eq!(
            seen.steps(),
            [TaskState::InputRequired, TaskState::Working, TaskState::Completed],
            "the subscription carries the next turn"
        );
    };
    let answer = async {
        // No subscription (refused) drops the sender: nothing to wait for then.
        let _ = in_place.await;
        stream_all(client, &reply(&run.task, &run.context, branch)).await
    };
    let ((), answer) = tokio::join!(watch, answer);
    assert_eq!(answer.task, run.task, "same task");
    if q.reply_snapshot {
        assert_eq!(answer.first, Some("task"));
        assert_eq!(
            answer.steps(),
            [TaskState::InputRequired, TaskState::Working, TaskState::Completed],
            "a snapshot still showing the question, then the turn"
        );
    } else {
        assert_eq!(answer.steps(), [TaskState::Working, TaskState::Completed]);
    }
    let done = client.get_task(&run.task, None).await.unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let review = serde_json::to_string(&done.artifacts).unwrap();
    assert!(review.contains(branch), "the review names the branch: {review}");
}

pub fn first_link(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("a link in the status text")
        .to_string()
}

/// Opens a stream and reads it until the task waits in AUTH_REQUIRED.
pub async fn until_auth_required(client: &Client, text: &str) -> (EventStream, Run) {
    let mut run = Run::default();
    let mut stream = client
        .send_streaming_message(&message(text))
        .await
        .expect("stream opens");
    let waiting = |r: &Run| r.last_state() == Some(&TaskState::AuthRequired);
    read(&mut stream, &mut run, waiting).await;
    assert!(waiting(&run), "{:?}", run.states);
    (stream, run)
}

/// AUTH_REQUIRED with a link; a plain POST to it (outside A2A) lets the task complete, and the
/// same stream, left open, carries the rest.
pub async fn approval_out_of_band(client: &Client, text: &str) {
    let (mut stream, mut run) = until_auth_required(client, text).await;
    let link = first_link(run.texts.last().unwrap());
    let resp = reqwest::Client::new().post(&link).send().await.expect("approval POST");
    assert!(resp.status().is_success(), "approve: {}", resp.status());
    read(&mut stream, &mut run, |_| false).await;
    assert_eq!(run.last_state(), Some(&TaskState::Completed), "{:?}", run.states);
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    wait_for_state(client, &run.task, &TaskState::Completed).await;
}

/// AUTH_REQUIRED answered in band, by a message on the task, while the first stream is open:
/// that stream ends (a2a-js: with an error frame, which ends the stream, not the task), and
/// GetTask shows the task the new turn completed.
pub async fn approval_in_band(client: &Client, q: &Quirks, text: &str) {
    let InBand::NewTurn(old_stream_error) = q.in_band else {
        return;
    };
    let (mut stream, mut run) = until_auth_required(client, text).await;
    let answered = client
        .send_message(&reply(&run.task, &run.context, "approved, go ahead"))
        .await
        .expect("the in-band answer");
    let StreamResponse::Task(answered) = answered else {
        panic!("a task")
    };
    assert_eq!(answered.id, run.task);
    read(&mut stream, &mut run, |_| false).await;
    match old_stream_error {
        Some(kind) => assert!(matches!(&run.errors[..], [e] if e.is_kind(kind)), "{:?}", run.errors),
        None => assert!(run.errors.is_empty(), "{:?}", run.errors),
    }
    wait_for_state(client, &run.task, &TaskState::Completed).await;
}

/// SubscribeToTask refused with `kind`: an error reply before any stream, or (where the peer
/// does so) a 200 event stream whose one event is that error, and then its end.
pub async fn assert_subscribe_refused(client: &Client, q: &Quirks, id: &str, kind: ErrorKind) {
    let err = match client.subscribe(id).await {
        Err(e) => {
            assert!(!q.refusals_in_stream, "refused before any stream: {e}");
            e
        }
        Ok(mut stream) => {
            assert!(q.refusals_in_stream, "a stream opened for {id}");
            let mut run = Run::default();
            read(&mut stream, &mut run, |_| false).await;
            assert!(run.states.is_empty() && run.errors.len() == 1, "{run:?}");
            run.errors.remove(0)
        }
    };
    assert!(err.is_kind(kind), "{err}");
}

/// A running task: ListTasks finds it (0.3 has no ListTasks: a clear error), SubscribeToTask
/// starts with its snapshot where the SDK sends one, CancelTask ends it and subscribers see
/// CANCELED; then the terminal task refuses subscription.
pub async fn cancel_and_subscribe(client: &Client, q: &Quirks, text: &str) {
    let mut task = send_non_blocking(client, text).await;
    if q.version == ProtocolVersion::V0_3 {
        let err = client.list_tasks(&ListTasksRequest::default()).await.unwrap_err();
        let Error::NotInVersion {
            operation: "ListTasks",
            version: "0.3",
        } = err
        else {
            panic!("{err}")
        };
        assert_eq!(err.to_string(), "ListTasks does not exist in A2A 0.3");
    } else {
        let listed = client
            .list_pages(&ListTasksRequest::default(), MAX_PAGES)
            .await
            .expect("ListTasks")
            .tasks;
        assert!(listed.iter().any(|t| t.id == task.id), "ListTasks finds the new task");
        let by_context = ListTasksRequest {
            context_id: Some(task.context_id.clone()),
            ..Default::default()
        };
        let in_context = client.list_pages(&by_context, MAX_PAGES).await.unwrap().tasks;
        assert!(in_context.iter().all(|t| t.context_id == task.context_id) && !in_context.is_empty());
    }

    // CancelTask goes only once the subscription is live, or CANCELED could pass it by. The
    // snapshot says so where the SDK sends one. a2a-python 0.3 sends none and taps the task's
    // events only after its headers, so nothing says so: a cancel that came first shows as the
    // refusal of a terminal task, and the run starts again on a new task.
    let mut attempts = 1;
    let (canceled, run) = loop {
        let working = wait_for_state(client, &task.id, &TaskState::Working).await;
        assert_eq!(working.context_id, task.context_id, "GetTask");
        let mut stream = client.subscribe(&task.id).await.expect("subscribe");
        let mut run = Run::default();
        if q.subscribe_snapshot {
            read(&mut stream, &mut run, |r| r.first.is_some()).await;
        }
        let canceled = client.cancel_task(&task.id).await;
        if !run.closed {
            read(&mut stream, &mut run, |_| false).await;
        }
        if q.subscribe_snapshot || run.errors.is_empty() || attempts == 5 {
            break (canceled, run);
        }
        attempts += 1;
        task = send_non_blocking(client, text).await;
    };
    assert_eq!(canceled.expect("CancelTask").status.state, TaskState::Canceled);
    assert_eq!(
        run.first == Some("task"),
        q.subscribe_snapshot,
        "snapshot first? {:?}",
        run.first
    );
    let mut want = Vec::new();
    if q.subscribe_snapshot {
        want.push(TaskState::Working);
    }
    if q.cancel_reaches_subscribers {
        want.push(TaskState::Canceled);
    }
    assert_eq!(run.steps(), want);
    assert!(
        run.closed && run.errors.is_empty(),
        "the subscription just ends: {run:?}"
    );
    let stored = client.get_task(&task.id, None).await.expect("GetTask");
    assert_eq!(stored.status.state, TaskState::Canceled, "GetTask tells the truth");

    assert_subscribe_refused(client, q, &task.id, q.terminal_subscribe).await;
    let again = client.cancel_task(&task.id).await;
    match q.recancel {
        Some(kind) => assert!(again.as_ref().is_err_and(|e| e.is_kind(kind)), "{again:?}"),
        None => assert_eq!(again.expect("the task again").status.state, TaskState::Canceled),
    }
}

/// SubscribeToTask on a test run under way, its log one chunk in: the snapshot first (where the
/// SDK sends one, with that chunk), then the rest of the run, the log assembled from the
/// snapshot and the chunks that followed. Without a snapshot the first chunk is missed, and
/// GetTask tells the truth. Then the finished task refuses a subscription.
pub async fn subscribe_to_a_running_task(client: &Client, q: &Quirks, text: &str) {
    let task = send_non_blocking(client, text).await;
    wait_for(client, &task.id, "the first chunk", |t| !t.artifacts.is_empty()).await;
    let mut stream = client.subscribe(&task.id).await.expect("subscribe");
    let mut run = Run::default();
    read(&mut stream, &mut run, |_| false).await;
    assert!(run.closed && run.errors.is_empty(), "{run:?}");
    if q.subscribe_snapshot {
        assert_eq!(run.first, Some("task"), "the snapshot first");
        assert_eq!(run.steps(), [TaskState::Working, TaskState::Completed]);
        assert_interop_test_log(&run.artifacts);
    } else {
        assert_eq!(run.steps(), [TaskState::Completed], "what followed, no snapshot");
        assert_log(&run.artifacts, &[1, 2]);
    }
    let stored = client.get_task(&task.id, None).await.expect("GetTask");
    assert_test_run_artifacts(&stored.artifacts);
    if q.subscribers_store_chunks_again {
        assert_log(&stored.artifacts, &[0, 1, 1, 2, 2]);
    } else {
        assert_interop_test_log(&stored.artifacts);
    }
    assert_subscribe_refused(client, q, &task.id, q.terminal_subscribe).await;
}

/// 1.0 peers refuse a request without `A2A-Version` (missing means 0.3, spec section 3.6.2) and
/// our decoders make that the typed error; the client sends the header on every call.
pub async fn version_header_is_sent(client: &Client) {
    let url = client.endpoint.url.clone();
    let http = reqwest::Client::new();
    let err = match client.endpoint.binding {
        Binding::JsonRpc => {
            let body = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}"#;
            let resp = http.post(url).header("Content-Type", "application/json").body(body);
            let bytes = resp.send().await.unwrap().bytes().await.unwrap();
            jsonrpc::decode::<Value>("GetTask", &bytes).unwrap_err()
        }
        Binding::Rest => {
            let path = format!("{}/tasks/no-such-task", url.as_str().trim_end_matches('/'));
            let resp = http.get(path).send().await.unwrap();
            let status = resp.status().as_u16();
            rest::error_from_body(status, "GetTask", &resp.bytes().await.unwrap())
        }
        Binding::Grpc => unreachable!("interop_lifecycle asks this of HTTP bindings only"),
    };
    assert!(err.is_kind(ErrorKind::VersionNotSupported), "{err}");
    let err = client.get_task("no-such-task", None).await.unwrap_err();
    assert!(err.is_kind(ErrorKind::TaskNotFound), "with the header: {err}");
}

pub async fn unknown_tasks_are_not_found(client: &Client, q: &Quirks) {
    let unknown = "00000000-0000-0000-0000-000000000000";
    let err = client.get_task(unknown, None).await.unwrap_err();
    assert!(err.is_kind(ErrorKind::TaskNotFound), "{err}");
    let err = client.cancel_task(unknown).await.unwrap_err();
    assert!(err.is_kind(ErrorKind::TaskNotFound), "{err}");
    assert_subscribe_refused(client, q, unknown, ErrorKind::TaskNotFound).await;
}

/// Every scenario against an agent of tests/interop, on the binding its card lists first; they
/// run at once, each on its own task.
pub async fn interop_lifecycle(url: &str, binding: Binding, q: &Quirks) {
    let client = connect_with(url, None, None).await;
    assert_eq!(
        (client.endpoint.binding, client.endpoint.version),
        (binding, q.version),
        "the first interface of the card that we speak"
    );
    assert_eq!(client.card.name, "test-runner");
    assert!(client.card_source.ends_with("/.well-known/agent-card.json"));
    let version_header = async {
        // Over gRPC the JS peer refuses every call without `a2a-version: 1.0` (tests/interop/
        // GRPC.md), so each scenario below proves the metadata is sent; Python does not check.
        if q.version == ProtocolVersion::V1_0 && binding != Binding::Grpc {
            version_header_is_sent(&client).await;
        }
    };
    let test_run = async {
        let run = test_run_completes(&client, "run tests").await;
        assert_interop_test_log(&run.artifacts);
    };
    tokio::join!(
        version_header,
        test_run,
        failing_run_fails(&client, "fail the build"),
        crash_is_reported(&client, q, "crash"),
        question_is_answered(&client, q, "question: review this diff", "release/2026.10"),
        approval_out_of_band(&client, "deploy 2026.10.06-1 to staging, approve first"),
        approval_in_band(&client, q, "deploy 2026.10.06-2 to staging, approve first"),
        cancel_and_subscribe(&client, q, "wait for me"),
        subscribe_to_a_running_task(&client, q, "run tests slow"),
        unknown_tasks_are_not_found(&client, q),
        binary_sends_and_follows(url, binding, None),
        binary_answers_the_question(url, binding),
    );
}

/// The real binary, as scripts use it: `send --follow` prints every state of the run as NDJSON,
/// in order, the artifact chunks included. With `token`, the agent wants it: without `A2A_TOKEN`
/// the binary exits 1 with one line naming the 401 and the env var; with it, the run goes through.
pub async fn binary_sends_and_follows(url: &str, binding: Binding, token: Option<&str>) {
    let send = ["--binding", cli_binding(binding), "send", url, "run tests", "--follow"];
    let env: Vec<(&str, &str)> = token.map(|t| ("A2A_TOKEN", t)).into_iter().collect();
    if token.is_some() {
        let refused = cli::run(&send, &[]).await;
        assert_eq!(refused.status.code(), Some(1));
        let msg = cli::stderr(&refused);
        // No name given: the card's name selects no variable, so the hint says how to name it.
        assert!(
            msg.contains("401") && msg.contains("--name") && !msg.contains("A2A_TOKEN_TEST_RUNNER"),
            "{msg}"
        );
        assert_eq!(msg.lines().count(), 1, "one clear line: {msg}");
    }
    let out = cli::run(&send, &env).await;
    assert!(out.status.success(), "{}", cli::stderr(&out));
    let lines = cli::lines(&out);
    let mut states: Vec<&str> = lines.iter().filter_map(|l| l["state"].as_str()).collect();
    states.dedup();
    assert_eq!(states, ["SUBMITTED", "WORKING", "COMPLETED"], "{lines:?}");
    assert_eq!(lines.last().unwrap()["text"], "1 failed, 11 passed");
    let chunks = lines.iter().filter(|l| l["event"] == "artifact").count();
    assert_eq!(chunks, 4, "three log chunks and the summary: {lines:?}");
}

fn cli_binding(binding: Binding) -> &'static str {
    match binding {
        Binding::JsonRpc => "jsonrpc",
        Binding::Rest => "rest",
        Binding::Grpc => "grpc",
    }
}

/// The real binary asks, and `reply --follow` answers on the same task until it completes. A
/// reply stream that opens with the stale INPUT_REQUIRED snapshot (a2a-js) must not stop it.
pub async fn binary_answers_the_question(url: &str, binding: Binding) {
    let b = cli_binding(binding);
    let asked = cli::run(
        &["--binding", b, "send", url, "question: review this diff", "--follow"],
        &[],
    )
    .await;
    assert!(asked.status.success(), "{}", cli::stderr(&asked));
    let last = cli::lines(&asked).pop().expect("lines");
    assert_eq!(last["state"], "INPUT_REQUIRED", "{last}");
    let task = last["task"].as_str().unwrap();
    let answered = cli::run(&["--binding", b, "reply", url, task, "main", "--follow"], &[]).await;
    assert!(answered.status.success(), "{}", cli::stderr(&answered));
    let done = cli::lines(&answered).pop().expect("lines");
    assert_eq!(
        (done["state"].as_str(), done["task"].as_str()),
        (Some("COMPLETED"), Some(task)),
        "{done}"
    );
}

/// An agent started with `--token`: through the client on both bindings and through the real
/// binary with `A2A_TOKEN`, refused without the token and served with it.
pub async fn token_is_required(url: &str, token: &str) {
    let env_var = "A2A_TOKEN_TEST_RUNNER";
    tokio::join!(
        bearer_is_required(url, Binding::JsonRpc, token, env_var),
        bearer_is_required(url, Binding::Rest, token, env_var),
        binary_sends_and_follows(url, Binding::JsonRpc, Some(token)),
        binary_sends_and_follows(url, Binding::Rest, Some(token)),
    );
}

/// Without a token: a 401 that names the scheme and, since the user gave no name, does not offer
/// `env_var` (the card's name never selects a credential); with it: success.
pub async fn bearer_is_required(url: &str, binding: Binding, token: &str, env_var: &str) {
    let anonymous = connect(url, binding, None).await;
    let err = anonymous.list_tasks(&ListTasksRequest::default()).await.unwrap_err();
    let Error::Unauthorized { status: 401, .. } = &err else {
        panic!("expected 401, got {err}")
    };
    let msg = err.to_string();
    assert!(
        msg.contains("Bearer") && msg.contains("--agent NAME=URL") && !msg.contains(env_var),
        "{msg}"
    );
    assert!(!msg.contains(token), "no token in messages");
    let authed = connect(url, binding, Some(token)).await;
    authed
        .list_tasks(&ListTasksRequest::default())
        .await
        .expect("the token is accepted");
}
