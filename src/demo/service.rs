//! The A2A operations of one demo agent, binding-neutral: the JSON-RPC and HTTP+JSON adapters
//! decode a request into a `Call` and encode the `Reply`. Also plays scenario turns with pacing.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use serde_json::Value;

use super::error::{ApiError, ApiResult, to_json};
use super::listing;
use super::scenario::{Next, Scenario, TaskContext, Turn};
use super::shutdown::Shutdown;
use super::store::{Admission, Store};
use crate::a2a::card::AgentCard;
use crate::a2a::{
    ErrorKind, GetTaskRequest, ListTasksRequest, Message, Role, SendMessageRequest, StreamResponse, Task,
    TaskIdRequest, TaskState,
};

pub type EventStream = BoxStream<'static, StreamResponse>;

/// One A2A operation (proto service A2AService), as either binding names it.
pub enum Call {
    Send(SendMessageRequest),
    Stream(SendMessageRequest),
    Get(GetTaskRequest),
    List(ListTasksRequest),
    Cancel(TaskIdRequest),
    Subscribe(TaskIdRequest),
    ExtendedCard,
    /// Any of the four push-notification config operations.
    PushConfig,
}

pub enum Reply {
    Json(Value),
    Events(EventStream),
}

pub struct Agent {
    scenario: Box<dyn Scenario>,
    pub card: AgentCard,
    base_url: String,
    store: Store,
    step: Duration,
    shutdown: Shutdown,
    /// Tasks whose streams the server cuts after each WORKING, subscriptions included, so
    /// clients can prove they resume (the `drop` trigger).
    dropping: Mutex<HashSet<String>>,
}

/// How a SendMessage was taken, for the caller that waits or streams.
enum Admitted {
    Playing {
        task: Task,
        events: EventStream,
        is_new: bool,
        drops_stream: bool,
        /// The turn's interruption is answered by a message on the task, not by an operator.
        /// An operator's approval resumes a turn that ends the task in every demo scenario, so
        /// the stream's one interruption is the admitted turn's.
        waits_for_message: bool,
    },
    Duplicate(Task),
}

impl Agent {
    pub fn new(scenario: Box<dyn Scenario>, base_url: String, step: Duration, shutdown: Shutdown) -> Agent {
        Agent {
            card: scenario.card(&base_url),
            scenario,
            base_url,
            store: Store::default(),
            step,
            shutdown,
            dropping: Mutex::default(),
        }
    }

    pub async fn call(self: &Arc<Self>, call: Call) -> ApiResult<Reply> {
        match call {
            // SendMessageResponse is `{"task": …}`, the same wrapper as a stream's task event.
            Call::Send(request) => to_json(&StreamResponse::Task(self.send(request).await?)),
            Call::Stream(request) => return self.stream(request).map(Reply::Events),
            Call::Get(request) => to_json(&self.store.get(&request.id, request.history_length)?),
            Call::List(request) => to_json(&self.store.list(&request)?),
            Call::Cancel(request) => to_json(&self.store.cancel(&request.id)?),
            Call::Subscribe(request) => return self.subscribe(&request.id).map(Reply::Events),
            // Spec §3.1.11: the card does not declare capabilities.extendedAgentCard.
            Call::ExtendedCard => Err(ApiError::unsupported(
                "The agent does not support authenticated extended cards",
            )),
            Call::PushConfig => Err(ApiError::new(
                ErrorKind::PushNotificationNotSupported,
                "Push notifications are not supported",
            )),
        }
        .map(Reply::Json)
    }

    /// Blocking by default: returns once the task ends or is interrupted (spec §3.2.2).
    async fn send(self: &Arc<Self>, request: SendMessageRequest) -> ApiResult<Task> {
        let immediate = request.returns_immediately();
        let history_length = request.configuration.as_ref().and_then(|c| c.history_length);
        let task = match self.admit(request)? {
            Admitted::Duplicate(task) => task,
            Admitted::Playing { task, .. } if immediate => task,
            Admitted::Playing { task, events, .. } => {
                let mut events = events.take_while(|e| std::future::ready(!settles(e)));
                while events.next().await.is_some() {}
                self.store.get(&task.id, None)?
            }
        };
        Ok(listing::view(&task, history_length, true))
    }

    /// A new task's stream starts with the task; a reply's with its first update, as a2a-python
    /// does. It ends at a terminal state, and at an interrupted state that a message answers
    /// (a question, or an interactions/v1 approval or connection), as a2a-python's agents end
    /// their turn there. It stays open through an AUTH_REQUIRED that an operator answers outside
    /// A2A, where the task resumes without a message (spec §7.6.1; a2a-js and a2a-go alike).
    fn stream(self: &Arc<Self>, request: SendMessageRequest) -> ApiResult<EventStream> {
        match self.admit(request)? {
            Admitted::Duplicate(task) => Ok(stream::iter([StreamResponse::Task(task)]).boxed()),
            Admitted::Playing {
                task,
                events,
                is_new,
                drops_stream,
                waits_for_message,
            } => {
                let ends = move |e: &StreamResponse| match status_of(e) {
                    Some(TaskState::Working) => drops_stream,
                    Some(state) => state.is_terminal() || (state.is_interrupted() && waits_for_message),
                    None => false,
                };
                let live = through_first(events, ends);
                let first = is_new.then_some(StreamResponse::Task(task));
                Ok(stream::iter(first).chain(live).boxed())
            }
        }
    }

    /// The snapshot, then every later event until the task ends (spec §3.1.6).
    fn subscribe(&self, task_id: &str) -> ApiResult<EventStream> {
        let (task, subscription) = self.store.subscribe(task_id)?;
        let mut live = subscription.into_stream(self.shutdown.clone());
        if self
            .dropping
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(task_id)
        {
            live = through_first(live, |e| status_of(e) == Some(&TaskState::Working));
        }
        Ok(stream::iter([StreamResponse::Task(task)]).chain(live).boxed())
    }

    /// Out-of-band approval (`POST /approve/<id>`): resumes a task that waits for an operator.
    pub fn approve(self: &Arc<Self>, task_id: &str) -> bool {
        match self.store.take_operator_turn(task_id) {
            Some(turn) => {
                self.play(task_id.into(), turn);
                true
            }
            None => false,
        }
    }

    /// The task an approval link names, and whether it waits for an operator now.
    pub fn approval(&self, task_id: &str) -> ApiResult<(Task, bool)> {
        self.store.approval(task_id)
    }

    /// Takes the message as a new task or as a reply, and starts the turn it leads to.
    fn admit(self: &Arc<Self>, request: SendMessageRequest) -> ApiResult<Admitted> {
        let message = request.message;
        check_user_message(&message)?;
        let (admission, is_new) = match message.task_id.clone().filter(|id| !id.is_empty()) {
            Some(task_id) => (self.store.reply(&task_id, message)?, false),
            None => {
                let context = TaskContext {
                    task_id: uuid::Uuid::new_v4().to_string(),
                    base_url: self.base_url.clone(),
                };
                let turn = self.scenario.start(&context, &message);
                (self.store.create(&context.task_id, message, turn), true)
            }
        };
        match admission {
            Admission::Duplicate(task) => Ok(Admitted::Duplicate(task)),
            Admission::Accepted {
                task,
                subscription,
                turn,
            } => {
                let drops_stream = turn.drops_stream;
                let waits_for_message = matches!(turn.then, Next::Reply(_));
                if drops_stream {
                    self.dropping
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(task.id.clone());
                }
                self.play(task.id.clone(), turn);
                Ok(Admitted::Playing {
                    task,
                    events: subscription.into_stream(self.shutdown.clone()),
                    is_new,
                    drops_stream,
                    waits_for_message,
                })
            }
        }
    }

    fn play(self: &Arc<Self>, task_id: String, turn: Turn) {
        let agent = Arc::clone(self);
        tokio::spawn(async move { agent.run(&task_id, turn).await });
    }

    /// The first step at once, then one pause between steps; stops when the task ends
    /// elsewhere (canceled) or the demo shuts down.
    async fn run(&self, task_id: &str, turn: Turn) {
        let pause = self.step * turn.pace;
        let mut then = Some(turn.then);
        let count = turn.steps.len();
        for (i, step) in turn.steps.into_iter().enumerate() {
            if i > 0 && !self.shutdown.sleep(pause).await {
                return;
            }
            let next = if i + 1 == count { then.take() } else { None };
            if !self.store.apply(task_id, step, next) {
                return;
            }
        }
    }
}

/// Required fields of a SendMessage message (proto Message: message_id, role, parts).
fn check_user_message(message: &Message) -> ApiResult<()> {
    if message.message_id.is_empty() {
        return Err(ApiError::invalid_params("message.messageId: Field is required."));
    }
    if message.role != Role::User {
        return Err(ApiError::invalid_params("message.role: must be ROLE_USER."));
    }
    if message.parts.is_empty() {
        return Err(ApiError::invalid_params(
            "message.parts: at least one part is required.",
        ));
    }
    Ok(())
}

fn status_of(event: &StreamResponse) -> Option<&TaskState> {
    match event {
        StreamResponse::StatusUpdate(u) => Some(&u.status.state),
        _ => None,
    }
}

/// A blocking SendMessage returns here: terminal or interrupted.
fn settles(event: &StreamResponse) -> bool {
    status_of(event).is_some_and(|s| s.is_terminal() || s.is_interrupted())
}

/// The events up to and including the first one that `ends` the stream, which then closes at
/// once rather than at the next event (there may be none: INPUT_REQUIRED waits).
fn through_first(events: EventStream, ends: impl Fn(&StreamResponse) -> bool + Send + 'static) -> EventStream {
    stream::unfold(Some((events, ends)), |state| async move {
        let (mut events, ends) = state?;
        let event = events.next().await?;
        let rest = (!ends(&event)).then_some((events, ends));
        Some((event, rest))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::Part;
    use crate::a2a::SendMessageConfiguration;
    use crate::demo::code_reviewer::CodeReviewer;
    use crate::demo::test_runner::TestRunner;

    fn agent(scenario: Box<dyn Scenario>) -> (Arc<Agent>, tokio::sync::watch::Sender<bool>) {
        let (stop, shutdown) = Shutdown::channel();
        let agent = Agent::new(scenario, "http://h".into(), Duration::ZERO, shutdown);
        (Arc::new(agent), stop)
    }

    fn request(message: Message) -> SendMessageRequest {
        SendMessageRequest {
            message,
            ..SendMessageRequest::default()
        }
    }

    /// Everything a SendStreamingMessage stream carries until the agent closes it.
    async fn stream_all(agent: &Arc<Agent>, message: Message) -> Vec<StreamResponse> {
        agent.stream(request(message)).unwrap().collect().await
    }

    fn states(events: &[StreamResponse]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::Task(t) => Some(format!("task {}", t.status.state.short_name())),
                StreamResponse::StatusUpdate(u) => Some(u.status.state.short_name().to_string()),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn a_stream_runs_from_the_task_snapshot_to_completion() {
        let (agent, _stop) = agent(Box::new(TestRunner));
        let events = stream_all(&agent, Message::user(vec![Part::text("run")])).await;
        let states = states(&events);
        assert_eq!(states.first().map(String::as_str), Some("task SUBMITTED"));
        assert_eq!(states.last().map(String::as_str), Some("COMPLETED"));
        let artifacts = events
            .iter()
            .filter(|e| matches!(e, StreamResponse::ArtifactUpdate(_)))
            .count();
        assert_eq!(artifacts, 4, "three log chunks and the summary");
    }

    #[tokio::test]
    async fn drop_closes_the_stream_after_the_first_working_but_the_task_goes_on() {
        let (agent, _stop) = agent(Box::new(TestRunner));
        let events = stream_all(&agent, Message::user(vec![Part::text("run, drop")])).await;
        assert_eq!(states(&events), ["task SUBMITTED", "WORKING"]);
        let StreamResponse::Task(task) = &events[0] else {
            panic!("snapshot first")
        };
        let (_, subscription) = agent.store.subscribe(&task.id).unwrap();
        let rest: Vec<_> = subscription.into_stream(agent.shutdown.clone()).collect().await;
        assert_eq!(states(&rest).last().map(String::as_str), Some("COMPLETED"));
    }

    #[tokio::test]
    async fn blocking_send_returns_at_the_question_and_the_reply_completes() {
        let (agent, _stop) = agent(Box::new(CodeReviewer));
        // The stream closes at the question although nothing follows it.
        let asked = stream_all(&agent, Message::user(vec![Part::text("review")])).await;
        assert_eq!(states(&asked), ["task SUBMITTED", "WORKING", "INPUT_REQUIRED"]);
        let first = Message::user(vec![Part::text("review")]);
        let task = agent.send(request(first.clone())).await.unwrap();
        assert_eq!(task.status.state, TaskState::InputRequired);
        // The retry of the same message answers with the task as it is.
        let again = agent.send(request(first)).await.unwrap();
        assert_eq!(
            (again.id.as_str(), again.status.state),
            (task.id.as_str(), TaskState::InputRequired)
        );
        let reply = Message {
            task_id: Some(task.id.clone()),
            context_id: Some(task.context_id.clone()),
            ..Message::user(vec![Part::text("main")])
        };
        let events = stream_all(&agent, reply).await;
        assert_eq!(states(&events), ["WORKING", "COMPLETED"]);
        let done = agent.store.get(&task.id, None).unwrap();
        assert_eq!(done.status.text(), "review against main: 2 comments");
        let texts: Vec<String> = done.history.iter().map(Message::text).collect();
        assert_eq!(
            texts,
            [
                "review",
                "reading the diff",
                crate::demo::code_reviewer::QUESTION,
                "main",
                "comparing the diff against main"
            ]
        );
    }

    #[tokio::test]
    async fn return_immediately_gives_the_submitted_task() {
        let (agent, _stop) = agent(Box::new(TestRunner));
        let immediate = SendMessageRequest {
            configuration: Some(SendMessageConfiguration {
                return_immediately: true,
                ..SendMessageConfiguration::default()
            }),
            ..request(Message::user(vec![Part::text("run")]))
        };
        let task = agent.send(immediate).await.unwrap();
        assert_eq!(task.status.state, TaskState::Submitted);
        let bad = request(Message {
            role: Role::Agent,
            ..Message::user(vec![Part::text("run")])
        });
        assert_eq!(agent.send(bad).await.unwrap_err().kind, ErrorKind::InvalidParams);
    }

    #[tokio::test]
    async fn an_in_band_approval_closes_the_stream_and_an_operator_approval_keeps_it_open() {
        let (assistant, _stop) = agent(Box::new(crate::demo::assistant::Assistant));
        // The stream ends at the interactions/v1 approval although nothing follows it.
        let asked = stream_all(&assistant, Message::user(vec![Part::text("approval: open it")])).await;
        assert_eq!(states(&asked), ["task SUBMITTED", "WORKING", "AUTH_REQUIRED"]);

        let (deployer, _stop) = agent(Box::new(crate::demo::deployer::Deployer));
        let message = Message::user(vec![Part::text("deploy 2026.10.06-1 to staging")]);
        let mut events = deployer.stream(request(message)).unwrap();
        let Some(StreamResponse::Task(task)) = events.next().await else {
            panic!("snapshot first")
        };
        let mut last = String::new();
        while last != "AUTH_REQUIRED" {
            let event = events.next().await.expect("open until the approval");
            last = states(&[event]).pop().unwrap_or_default();
        }
        assert!(deployer.approve(&task.id));
        // The same stream carries the rest.
        let rest: Vec<_> = events.collect().await;
        assert_eq!(states(&rest).last().map(String::as_str), Some("COMPLETED"));
    }
}
