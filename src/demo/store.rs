//! The tasks of one agent and their live subscribers. Every change happens under one lock that
//! also sends the change to every subscriber, and a subscription starts under that same lock from
//! a snapshot, so no subscriber misses or repeats an event (spec §3.5.2: same events, same order).

use std::collections::HashMap;
use std::mem;
use std::sync::{Mutex, MutexGuard, PoisonError};

use futures::stream::{self, BoxStream, StreamExt};
use tokio::sync::mpsc;

use super::error::{ApiError, ApiResult};
use super::listing;
use super::scenario::{Next, Step, Turn};
use super::shutdown::Shutdown;
use crate::a2a::{
    ErrorKind, ListTasksRequest, ListTasksResponse, Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};

#[derive(Default)]
pub struct Store {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Record>,
    /// messageId -> the task it went to: a retry with the same id is answered once (the answer's
    /// idempotency key: docs/protocol-notes.md, "interactions/v1").
    message_ids: HashMap<String, String>,
}

struct Record {
    task: Task,
    /// What the task waits for; meaningful only while it is interrupted.
    next: Next,
    subscribers: Vec<mpsc::UnboundedSender<StreamResponse>>,
}

/// The events of one task from the moment of subscribing; ends when the task does.
pub struct Subscription(mpsc::UnboundedReceiver<StreamResponse>);

impl Subscription {
    pub fn into_stream(self, shutdown: Shutdown) -> BoxStream<'static, StreamResponse> {
        stream::unfold(self.0, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) })
            .take_until(Box::pin(shutdown.signalled()))
            .boxed()
    }
}

/// The outcome of taking a user message.
pub enum Admission {
    /// Taken: the task with the message in its history, a subscription opened before anything
    /// else can happen to the task, and the turn to play (handed back for a new task too, so both
    /// admissions read alike).
    Accepted {
        task: Task,
        subscription: Subscription,
        turn: Turn,
    },
    /// A retry of a message already taken: the task as it is now.
    Duplicate(Task),
}

impl Store {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere must not take every later request down with it.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a SUBMITTED task for `message`, or finds the task a retry of it went to.
    pub fn create(&self, task_id: &str, message: Message, turn: Turn) -> Admission {
        let mut inner = self.lock();
        let Inner { tasks, message_ids } = &mut *inner;
        if let Some(task) = message_ids.get(&message.message_id).and_then(|id| tasks.get(id)) {
            return Admission::Duplicate(task.task.clone());
        }
        let context_id = message
            .context_id
            .clone()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let mut record = Record {
            task: Task {
                id: task_id.into(),
                context_id,
                status: TaskStatus::new(TaskState::Submitted, None),
                ..Task::default()
            },
            next: Next::End,
            subscribers: Vec::new(),
        };
        message_ids.insert(message.message_id.clone(), task_id.into());
        record.push_history(message);
        let subscription = record.subscribe();
        let task = record.task.clone();
        tasks.insert(task_id.into(), record);
        Admission::Accepted {
            task,
            subscription,
            turn,
        }
    }

    /// Takes a reply to an interrupted task; the waiting scenario reads it or refuses it.
    pub fn reply(&self, task_id: &str, message: Message) -> ApiResult<Admission> {
        let mut inner = self.lock();
        let Inner { tasks, message_ids } = &mut *inner;
        let record = tasks.get_mut(task_id).ok_or_else(ApiError::task_not_found)?;
        let task = &record.task;
        // Both ids given: they must match (proto Message; spec §3.4.3).
        if let Some(context) = message.context_id.as_deref()
            && !context.is_empty()
            && context != task.context_id
        {
            return Err(ApiError::invalid_params(format!(
                "Context {context} does not match context {} of task {task_id}",
                task.context_id
            )));
        }
        match message_ids.get(&message.message_id) {
            Some(owner) if owner == task_id => return Ok(Admission::Duplicate(task.clone())),
            Some(_) => {
                return Err(ApiError::invalid_params(format!(
                    "messageId {} already names a message of another task",
                    message.message_id
                )));
            }
            None => {}
        }
        let state = &task.status.state;
        if state.is_terminal() {
            return Err(ApiError::terminal(task_id, state));
        }
        let turn = match &record.next {
            Next::Reply(answer) if state.is_interrupted() => answer(&message)?,
            Next::Operator(_) => {
                return Err(ApiError::unsupported(
                    "this task waits for an operator's approval outside A2A, not for a message",
                ));
            }
            _ => {
                return Err(ApiError::unsupported(format!(
                    "Task {task_id} is {}; it takes a message only while it asks for one",
                    state.proto_name()
                )));
            }
        };
        record.next = Next::End;
        message_ids.insert(message.message_id.clone(), task_id.into());
        // The question comes before its answer in history.
        record.archive_status_message();
        record.push_history(message);
        Ok(Admission::Accepted {
            task: record.task.clone(),
            subscription: record.subscribe(),
            turn,
        })
    }

    /// Plays one step; `then` is what the task waits for after it (given with the last step, so
    /// a reply can never arrive between the interruption and the wait). False once the task has
    /// ended (canceled meanwhile), which stops the scenario.
    pub fn apply(&self, task_id: &str, step: Step, then: Option<Next>) -> bool {
        let mut inner = self.lock();
        let Some(record) = inner.tasks.get_mut(task_id) else {
            return false;
        };
        if record.task.status.state.is_terminal() {
            return false;
        }
        let event = match step {
            Step::Status(state, message) => record.set_status(state, message),
            Step::Artifact {
                artifact,
                append,
                last_chunk,
            } => record.add_artifact(TaskArtifactUpdateEvent {
                task_id: task_id.into(),
                context_id: record.task.context_id.clone(),
                artifact,
                append,
                last_chunk,
                metadata: None,
                generation: 0,
            }),
        };
        if let Some(next) = then {
            record.next = next;
        }
        record.publish(event);
        true
    }

    /// The turn an operator's approval resumes, if the task waits for one.
    pub fn take_operator_turn(&self, task_id: &str) -> Option<Turn> {
        let mut inner = self.lock();
        let record = inner.tasks.get_mut(task_id)?;
        if record.task.status.state != TaskState::AuthRequired {
            return None;
        }
        match mem::replace(&mut record.next, Next::End) {
            Next::Operator(turn) => Some(*turn),
            other => {
                record.next = other;
                None
            }
        }
    }

    /// The task, and whether it waits for an operator's approval now.
    pub fn approval(&self, task_id: &str) -> ApiResult<(Task, bool)> {
        let inner = self.lock();
        let record = inner.tasks.get(task_id).ok_or_else(ApiError::task_not_found)?;
        let waits = record.task.status.state == TaskState::AuthRequired && matches!(record.next, Next::Operator(_));
        Ok((record.task.clone(), waits))
    }

    pub fn get(&self, task_id: &str, history_length: Option<u32>) -> ApiResult<Task> {
        let inner = self.lock();
        let record = inner.tasks.get(task_id).ok_or_else(ApiError::task_not_found)?;
        Ok(listing::view(&record.task, history_length, true))
    }

    pub fn list(&self, request: &ListTasksRequest) -> ApiResult<ListTasksResponse> {
        let tasks: Vec<Task> = self.lock().tasks.values().map(|r| r.task.clone()).collect();
        listing::page(tasks, request)
    }

    /// Cancels a task that has not ended; its subscribers get CANCELED and their streams end.
    pub fn cancel(&self, task_id: &str) -> ApiResult<Task> {
        let mut inner = self.lock();
        let record = inner.tasks.get_mut(task_id).ok_or_else(ApiError::task_not_found)?;
        if record.task.status.state.is_terminal() {
            return Err(ApiError::new(ErrorKind::TaskNotCancelable, "Task cannot be canceled"));
        }
        let event = record.set_status(
            TaskState::Canceled,
            Message::agent(vec![crate::a2a::Part::text("canceled by request")]),
        );
        record.next = Next::End;
        record.publish(event);
        Ok(record.task.clone())
    }

    /// The current task and its later events (spec §3.1.6: only while it has not ended).
    pub fn subscribe(&self, task_id: &str) -> ApiResult<(Task, Subscription)> {
        let mut inner = self.lock();
        let record = inner.tasks.get_mut(task_id).ok_or_else(ApiError::task_not_found)?;
        let state = &record.task.status.state;
        if state.is_terminal() {
            return Err(ApiError::terminal(task_id, state));
        }
        Ok((record.task.clone(), record.subscribe()))
    }
}

impl Record {
    fn subscribe(&mut self) -> Subscription {
        let (tx, rx) = mpsc::unbounded_channel();
        self.subscribers.push(tx);
        Subscription(rx)
    }

    /// Stored messages carry their task and context, as the SDKs store them.
    fn stamp(&self, message: Message) -> Message {
        Message {
            task_id: Some(self.task.id.clone()),
            context_id: Some(self.task.context_id.clone()),
            ..message
        }
    }

    fn push_history(&mut self, message: Message) {
        let message = self.stamp(message);
        self.task.history.push(message);
    }

    /// The status message joins history once (docs/protocol-notes.md, "Answering a task").
    fn archive_status_message(&mut self) {
        let Some(current) = &self.task.status.message else {
            return;
        };
        if !self.task.history.iter().any(|m| m.message_id == current.message_id) {
            self.task.history.push(current.clone());
        }
    }

    fn set_status(&mut self, state: TaskState, message: Message) -> StreamResponse {
        self.archive_status_message();
        self.task.status = TaskStatus::new(state, Some(self.stamp(message)));
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task.id.clone(),
            context_id: self.task.context_id.clone(),
            status: self.task.status.clone(),
            metadata: None,
            generation: 0,
        })
    }

    /// Appended chunks become more parts of one artifact; otherwise the artifact is replaced.
    fn add_artifact(&mut self, event: TaskArtifactUpdateEvent) -> StreamResponse {
        let chunk = &event.artifact;
        let artifacts = &mut self.task.artifacts;
        match artifacts.iter_mut().find(|a| a.artifact_id == chunk.artifact_id) {
            Some(stored) if event.append => stored.parts.extend(chunk.parts.iter().cloned()),
            Some(stored) => *stored = chunk.clone(),
            None => artifacts.push(chunk.clone()),
        }
        StreamResponse::ArtifactUpdate(event)
    }

    /// Sends to every live subscriber; a terminal state ends every subscription (spec §3.1.2).
    fn publish(&mut self, event: StreamResponse) {
        self.subscribers.retain(|tx| tx.send(event.clone()).is_ok());
        if self.task.status.state.is_terminal() {
            self.subscribers.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::{Artifact, Part};
    use crate::demo::scenario::{status, working};

    fn open(store: &Store, text: &str) -> (Task, Subscription) {
        let message = Message::user(vec![Part::text(text)]);
        let id = uuid::Uuid::new_v4().to_string();
        match store.create(&id, message, Turn::last(Vec::new())) {
            Admission::Accepted { task, subscription, .. } => (task, subscription),
            Admission::Duplicate(_) => panic!("new message"),
        }
    }

    fn drain(subscription: Subscription) -> Vec<StreamResponse> {
        let mut rx = subscription.0;
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        events
    }

    fn chunk(text: &str, append: bool) -> Step {
        Step::Artifact {
            artifact: Artifact {
                artifact_id: "log".into(),
                parts: vec![Part::text(text)],
                ..Artifact::default()
            },
            append,
            last_chunk: false,
        }
    }

    #[test]
    fn status_messages_move_into_history_and_chunks_fold_into_one_artifact() {
        let store = Store::default();
        let (task, _sub) = open(&store, "go");
        assert_eq!(task.history.len(), 1);
        assert_eq!(task.history[0].task_id.as_deref(), Some(task.id.as_str()));
        assert!(store.apply(&task.id, working("one"), None));
        assert!(store.apply(&task.id, chunk("a", false), None));
        assert!(store.apply(&task.id, chunk("b", true), None));
        assert!(store.apply(&task.id, working("two"), None));
        let now = store.get(&task.id, None).unwrap();
        assert_eq!(now.artifacts[0].parts.len(), 2);
        let texts: Vec<String> = now.history.iter().map(Message::text).collect();
        assert_eq!(texts, ["go", "one"]);
        assert_eq!(store.get(&task.id, Some(1)).unwrap().history.len(), 1);
        assert!(store.get(&task.id, Some(0)).unwrap().history.is_empty());
    }

    #[test]
    fn cancel_reaches_subscribers_then_ends_them_and_stops_the_scenario() {
        let store = Store::default();
        let (task, first) = open(&store, "go");
        store.apply(&task.id, working("one"), None);
        let (snapshot, second) = store.subscribe(&task.id).unwrap();
        assert_eq!(snapshot.status.state, TaskState::Working);
        let canceled = store.cancel(&task.id).unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled);
        assert!(
            !store.apply(&task.id, working("late"), None),
            "ended tasks take no steps"
        );
        assert_eq!(drain(first).len(), 2, "working, then canceled");
        let events = drain(second);
        assert!(matches!(&events[..], [StreamResponse::StatusUpdate(u)] if u.status.state == TaskState::Canceled));
        let again = store.cancel(&task.id).unwrap_err();
        assert_eq!(again.kind, ErrorKind::TaskNotCancelable);
        assert_eq!(
            store.subscribe(&task.id).err().unwrap().kind,
            ErrorKind::UnsupportedOperation
        );
    }

    #[test]
    fn replies_are_checked_and_deduplicated_by_message_id() {
        let store = Store::default();
        let (task, _sub) = open(&store, "go");
        let asks = Next::Reply(Box::new(|_| Ok(Turn::last(Vec::new()))));
        let answer = Message {
            task_id: Some(task.id.clone()),
            ..Message::user(vec![Part::text("main")])
        };
        let early = store.reply(&task.id, answer.clone()).err().unwrap();
        assert_eq!(early.kind, ErrorKind::UnsupportedOperation, "not asking yet");
        store.apply(&task.id, status(TaskState::InputRequired, "which?"), Some(asks));
        let wrong = Message {
            context_id: Some("elsewhere".into()),
            ..answer.clone()
        };
        assert_eq!(
            store.reply(&task.id, wrong).err().unwrap().kind,
            ErrorKind::InvalidParams
        );
        assert!(matches!(
            store.reply(&task.id, answer.clone()),
            Ok(Admission::Accepted { .. })
        ));
        assert!(matches!(store.reply(&task.id, answer), Ok(Admission::Duplicate(_))));
        assert_eq!(
            store.reply("nope", Message::user(vec![])).err().unwrap().kind,
            ErrorKind::TaskNotFound
        );
    }
}
