//! Watching one task until it is terminal. Servers disagree on when streams close
//! (docs/protocol-notes.md, "Stream closes"), so a close is never read as a state: after every
//! close GetTask tells the truth, and while the task lives we subscribe again (spec section 3.1.6),
//! or poll where subscribing keeps failing or is refused (some SDKs refuse to subscribe to an
//! interrupted task).

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use jiff::Timestamp;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use super::agent::Listed;
use super::budget::CheckBudget;
use super::{backoff, refresh_after, wait_after};
use crate::a2a::{Client, Error, ErrorKind, EventStream, StateClass, StreamResponse, Task};
use crate::event::{AgentId, Command, Event, WatchMode};

/// History asked for with GetTask; the store keeps no more than this either.
const HISTORY: u32 = 50;
/// Failed subscriptions in a row before we poll instead.
const MAX_FAILURES: u32 = 3;
/// A stream that closes sooner than this after opening counts as short.
const SHORT_STREAM: Duration = Duration::from_secs(1);
/// Short streams in a row resubscribed at once; past this each waits longer (a server that
/// closes after every event must not get a tight loop).
const FREE_RESUBSCRIBES: u32 = 5;
/// A task that the agent pushes to us and that cannot be streamed is still polled, this many
/// times slower: a safety net for a delivery lost (pushes are best effort: no retries).
pub(crate) const PUSHED_POLL: u32 = 10;

/// At most this many events of one stream cross to the store in one send.
const MAX_BATCH: usize = 256;

/// The tasks of one agent with a subscription open right now. A send's own stream leaves their
/// artifact chunks to the subscription, so each chunk is applied once; the agent's listing slows
/// down only while every live task is among them and none lapsed (`cadence`).
#[derive(Debug, Clone, Default)]
pub(crate) struct OpenStreams(Arc<Mutex<Streams>>);

#[derive(Debug, Default)]
struct Streams {
    open: HashSet<String>,
    /// Times a subscription ended (for whatever reason) or skipped events (`Generation`) since
    /// the agent was first followed.
    lapses: u64,
}

impl OpenStreams {
    pub fn contains(&self, task: &str) -> bool {
        self.0.lock().is_ok_and(|s| s.open.contains(task))
    }

    /// How many subscriptions are open, and how many times one lapsed so far.
    pub fn tally(&self) -> (usize, u64) {
        self.0.lock().map_or((0, 0), |s| (s.open.len(), s.lapses))
    }

    /// A subscription skipped events: what else it missed, only a listing may tell.
    fn skipped(&self) {
        if let Ok(mut s) = self.0.lock() {
            s.lapses += 1;
        }
    }

    fn open(&self, task: &str) -> OpenStream {
        if let Ok(mut s) = self.0.lock() {
            s.open.insert(task.to_string());
        }
        OpenStream {
            streams: self.clone(),
            task: task.to_string(),
        }
    }
}

/// Marks a subscription open for as long as it lives.
struct OpenStream {
    streams: OpenStreams,
    task: String,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        if let Ok(mut s) = self.streams.0.lock() {
            s.open.remove(&self.task);
            s.lapses += 1;
        }
    }
}

/// Where a subscription's quiet spell stands: when the watcher next wakes if nothing comes.
struct Quiet {
    deadline: Instant,
    /// The row has been told the stream is quiet.
    marked: bool,
    /// `deadline` is a slot taken from the agent's budget: the GetTask is due at it.
    slot_taken: bool,
    /// The task as the last GetTask of this spell found it, and the store took it. Boxed: a
    /// `Task` inline would add its size to every open stream's watcher (issue 23).
    last_checked: Option<Box<Task>>,
}

impl Quiet {
    /// A spell that begins now (the stream just carried something).
    fn new(quiet_after: Duration) -> Quiet {
        Quiet {
            deadline: Instant::now() + quiet_after,
            marked: false,
            slot_taken: false,
            last_checked: None,
        }
    }

    /// At the deadline: true if the GetTask must wait for a later slot (now the deadline).
    fn wait_for_slot(&mut self, budget: &CheckBudget) -> bool {
        if std::mem::take(&mut self.slot_taken) {
            return false;
        }
        let slot = budget.take_slot();
        if slot <= Instant::now() {
            return false;
        }
        self.deadline = slot;
        self.slot_taken = true;
        true
    }

    /// After a GetTask that found the task live: the next one between 1x and 2x `quiet_after` on,
    /// on the budget's grid (so checks due together wake together).
    fn checked(&mut self, quiet_after: Duration, budget: &CheckBudget) {
        // The grid's step is at most `quiet_after`, so the check stays within 2x.
        let step = budget.group_time().min(quiet_after);
        let due = Instant::now() + quiet_after + (quiet_after - step).mul_f64(super::jitter());
        self.deadline = budget.on_grid(due, quiet_after);
    }

    /// True if a GetTask found the task as the last one of this spell did: the store holds it
    /// already, so it is not sent again. Waking the store's thread for a snapshot that changes
    /// nothing was most of a quiet check's cost (BENCHMARKS.md, section 5).
    fn repeats(&mut self, task: &Task) -> bool {
        if self.last_checked.as_deref() == Some(task) {
            return true;
        }
        self.last_checked = Some(Box::new(task.clone()));
        false
    }
}

/// The last `generation` a subscription carried (A2A 1.1, draft: `Task`, and each status and
/// artifact event after the change it reports, 1 more each time), to see events it missed.
/// Tolerated, never required: 0 ("not implemented"), a repeat or an older one is ignored.
#[derive(Debug, Default)]
struct Generation(u64);

impl Generation {
    /// Takes an event's generation: true if events were missed before it.
    fn missed_before(&mut self, generation: u64) -> bool {
        if generation <= self.0 {
            return false;
        }
        let missed = self.0 > 0 && generation > self.0 + 1;
        self.0 = generation;
        missed
    }
}

/// True if a stream event names a task other than `task` (an event without a task id names none).
pub(crate) fn names_another_task(event: &StreamResponse, task: &str) -> bool {
    event.named_task().is_some_and(|id| id != task)
}

pub(crate) struct TaskWatch {
    pub agent: AgentId,
    pub client: Arc<Client>,
    pub id: String,
    pub events: crate::event::Sender,
    pub poll: Duration,
    pub max_backoff: Duration,
    pub first_byte: Duration,
    pub quiet_after: Duration,
    /// Whether the task came from the agent's listing (then the listing picks it up again).
    pub listed: Listed,
    /// The agent's schedule for GetTasks of quiet streams.
    pub checks: Arc<CheckBudget>,
    pub open: OpenStreams,
    /// Subscriptions in a row that got no response headers in time, before this watcher.
    pub stuck: u32,
    /// The agent's command channel, to ask for a fresh credential after a 401.
    pub agent_commands: mpsc::Sender<Command>,
    /// The push receiver, if the agent pushes (its card says so) and `--push-listen` is on.
    pub push: Option<Arc<crate::push::Push>>,
}

/// Why a watcher ended, so the agent can free its slot and perhaps come back.
pub(crate) struct Ended {
    pub id: String,
    /// Non-zero: a subscription hung before its headers; watch again after backoff(stuck).
    pub stuck: u32,
    pub listed: Listed,
}

/// What one subscription has read so far.
struct Read {
    /// Events that went to the store.
    delivered: usize,
    /// When the stream last carried something.
    heard: Timestamp,
    quiet: Quiet,
    generation: Generation,
}

/// One read's worth of a subscription (`TaskWatch::take_ready`).
struct Ready {
    batch: Vec<Event>,
    /// The stream ended (closed, or an error frame ended it).
    ended: bool,
    /// Events were missed before one of these (`Generation`).
    missed: bool,
}

/// Whether a subscription goes on after one of its items.
enum Taken {
    More,
    End,
}

enum Next {
    /// Terminal, or gone: stop watching.
    Stop,
    /// Subscribe again after the pause.
    Resubscribe,
    /// Poll GetTask after the pause.
    Poll,
}

/// How one subscription went.
enum Subscription {
    /// Read to its close; `progressed` if it carried events past the snapshot.
    Closed {
        progressed: bool,
    },
    /// A check while it was quiet found the task terminal or gone.
    Stop,
    /// No response headers within the first-byte timeout: abandoned.
    Stuck,
    Refused(Error),
}

impl TaskWatch {
    /// Boxed: an `Event` held inline through each layer of sending would size the future of
    /// every watcher (issue 23), though a watcher sends one alone only now and then.
    fn send(&self, event: Event) -> impl Future<Output = bool> + Send + '_ {
        let sending = Box::pin(self.events.send(event));
        async move { sending.await.is_ok() }
    }

    /// Shows a failed call on the task's row; a 401 also asks the agent for a fresh credential,
    /// so a task watched by id recovers even on an agent that does not list (0.3).
    async fn error(&self, e: &Error) -> bool {
        refresh_after(e, &self.agent_commands);
        self.warn(e.to_string()).await
    }

    async fn warn(&self, message: String) -> bool {
        self.send(self.task_error(message)).await
    }

    fn task_error(&self, message: String) -> Event {
        Event::TaskError {
            agent: self.agent,
            task: self.id.clone(),
            message,
        }
    }

    async fn mode(&self, mode: WatchMode) -> bool {
        self.send(self.watching(mode)).await
    }

    fn watching(&self, mode: WatchMode) -> Event {
        Event::Watching {
            agent: self.agent,
            task: self.id.clone(),
            mode,
        }
    }

    /// Puts one item of a subscription into the batch for the store.
    fn take(
        &self,
        item: Result<StreamResponse, Error>,
        seen: Timestamp,
        batch: &mut Vec<Event>,
        delivered: &mut usize,
    ) -> Taken {
        match item {
            Ok(event) if names_another_task(&event, &self.id) => {
                tracing::warn!(agent = self.agent, task = %self.id, other = ?event.task_id(),
                    "ignored an event for another task on this task's stream");
            }
            Ok(event) => {
                *delivered += 1;
                batch.push(Event::Update {
                    agent: self.agent,
                    event,
                    seen,
                });
            }
            // An error frame ends this stream, not the task (a2a-js closes an old stream
            // with -32004 "Stream ordering violation" when the next turn starts; a2a-python
            // 0.3.26 refuses a resubscription with a TaskNotFound frame for a task that
            // exists). GetTask, next, says what is true; the frame goes to the log only.
            Err(e @ Error::Agent { .. }) => {
                tracing::info!(agent = self.agent, task = %self.id, error = %e, "stream ended by an error frame");
                return Taken::End;
            }
            // A frame that does not decode is reported (as `error` does); the stream goes on.
            Err(e) => {
                refresh_after(&e, &self.agent_commands);
                batch.push(self.task_error(e.to_string()));
            }
        }
        Taken::More
    }

    fn ended(&self, stuck: u32) -> Ended {
        Ended {
            id: self.id.clone(),
            stuck,
            listed: self.listed,
        }
    }

    /// Runs until the task is terminal, unknown to the agent, stuck, or the store is gone.
    /// Returns the task id so the agent can free its slot. A push config registered for the
    /// task is deleted then.
    pub async fn run(self) -> Ended {
        let ended = self.follow().await;
        if let Some(push) = &self.push {
            Box::pin(push.unregister(self.agent, &self.id)).await;
        }
        ended
    }

    /// Registers the task with the push receiver, if the agent pushes: Some, what wakes when
    /// a delivery says the task ended.
    async fn register_push(&self) -> Option<Arc<Notify>> {
        let push = self.push.as_ref()?;
        match push.register(self.agent, &self.client, &self.id).await {
            Ok(ended) => Some(ended),
            Err(e) => {
                refresh_after(&e, &self.agent_commands);
                let error = push.shown_error(&e);
                tracing::info!(agent = self.agent, task = %self.id, %error, "push config refused; polling");
                None
            }
        }
    }

    /// The watcher's loop: subscribe (or poll), then ask GetTask what is true, until the task ends.
    async fn follow(&self) -> Ended {
        let mut failures = 0u32;
        let mut short = 0u32;
        let mut check_failures = 0u32;
        let mut polling = !self.client.streams();
        let pushed = Box::pin(self.register_push()).await;
        // Followed by deliveries: GetTask only as a slow safety net, or at once when a delivery
        // says the task ended.
        let poll = match &pushed {
            Some(_) if polling => self.poll * PUSHED_POLL,
            _ => self.poll,
        };
        if polling {
            self.mode(WatchMode::Polling).await;
        }
        loop {
            let asked_to_wait = if polling {
                None
            } else {
                match self.subscribe_once(&mut failures, &mut short).await {
                    ControlFlow::Break(ended) => return ended,
                    ControlFlow::Continue(asked_to_wait) => asked_to_wait,
                }
            };
            let (next, failed) = Box::pin(self.check()).await;
            check_failures = if failed.is_some() { check_failures + 1 } else { 0 };
            let asked_to_wait = asked_to_wait.or(failed.as_ref().and_then(Error::retry_after));
            let attempt = failures.max(short.saturating_sub(FREE_RESUBSCRIBES));
            match next {
                Next::Stop => return self.ended(0),
                // A stream that carried the task forward is picked up again at once; one that
                // failed, only repeated the snapshot, or closed at once again and again waits
                // longer each time.
                Next::Resubscribe if !polling && failures < MAX_FAILURES => {
                    if attempt > 0 || asked_to_wait.is_some() {
                        let wait = asked_to_wait.unwrap_or_else(|| backoff(attempt, self.max_backoff));
                        tokio::time::sleep(wait).await;
                    }
                }
                _ => {
                    if !polling {
                        polling = true;
                        self.mode(WatchMode::Polling).await;
                    }
                    let wait = match &failed {
                        Some(e) => wait_after(e, check_failures, self.max_backoff).max(self.poll),
                        None => poll,
                    };
                    match &pushed {
                        Some(ended) => {
                            let _ = tokio::time::timeout(wait, ended.notified()).await;
                        }
                        None => tokio::time::sleep(wait).await,
                    }
                }
            }
            // An interrupted task that becomes active again may accept a subscription now.
            if polling && self.client.streams() && matches!(next, Next::Resubscribe) {
                polling = false;
                failures = 0;
            }
        }
    }

    /// Subscribes once and counts how it went in `failures` (subscriptions in a row that failed
    /// or carried nothing past the snapshot) and `short` (closes in a row soon after opening).
    /// Goes on with the wait the agent asked for, if it did; breaks with how the watcher ends.
    async fn subscribe_once(&self, failures: &mut u32, short: &mut u32) -> ControlFlow<Ended, Option<Duration>> {
        let opened = Instant::now();
        match self.stream_once().await {
            Subscription::Closed { progressed } => {
                *failures = if progressed { 0 } else { *failures + 1 };
                *short = if opened.elapsed() < SHORT_STREAM { *short + 1 } else { 0 };
            }
            Subscription::Stop => return ControlFlow::Break(self.ended(0)),
            Subscription::Stuck => {
                let secs = self.first_byte.as_secs();
                self.warn(format!("the subscription got no response in {secs} s; retrying later"))
                    .await;
                return ControlFlow::Break(self.ended(self.stuck + 1));
            }
            // Some servers refuse a subscription to a live task with TaskNotFound
            // (docs/protocol-notes.md, "SDK quirks: other servers"); GetTask next says whether it
            // really is gone.
            Subscription::Refused(e) if e.is_kind(ErrorKind::TaskNotFound) => *failures += 1,
            // Terminal tasks refuse subscription; so do some servers for interrupted ones.
            // GetTask next tells which.
            Subscription::Refused(e) if e.is_kind(ErrorKind::UnsupportedOperation) => *failures = MAX_FAILURES,
            Subscription::Refused(e) => {
                *failures += 1;
                if !self.error(&e).await {
                    return ControlFlow::Break(self.ended(0));
                }
                return ControlFlow::Continue(e.retry_after());
            }
        }
        ControlFlow::Continue(None)
    }

    /// One subscription, read to its end. Once it has been quiet for `quiet_after` the row says
    /// so, and GetTask checks it without dropping it, again and again while it stays quiet, each
    /// time between 1x and 2x `quiet_after` (jittered, so that streams that went quiet together
    /// drift apart) after the last. The listing is not trusted for this: an index that updates
    /// late shows a finished task WORKING for minutes (issue 20). Each GetTask waits for a slot
    /// of the agent's `CheckBudget` (reading the stream meanwhile), so that a thousand quiet
    /// streams cost `check_rate` GetTasks a second at most (BENCHMARKS.md, section 5).
    async fn stream_once(&self) -> Subscription {
        // The calls a watcher makes now and then (subscribing, GetTask) are boxed while they
        // run: held inline they would size the future that every open stream keeps resident
        // while it waits for its next event (issue 23).
        let subscribing = Box::pin(self.client.subscribe(&self.id));
        let mut stream = match tokio::time::timeout(self.first_byte, subscribing).await {
            Err(_) => return Subscription::Stuck,
            Ok(Err(e)) => return Subscription::Refused(e),
            Ok(Ok(stream)) => stream,
        };
        let _open = self.open.open(&self.id);
        self.mode(WatchMode::Streaming).await;
        let mut read = Read {
            delivered: 0,
            heard: Timestamp::now(),
            quiet: Quiet::new(self.quiet_after),
            generation: Generation::default(),
        };
        loop {
            let first = match tokio::time::timeout_at(read.quiet.deadline, stream.next()).await {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(_quiet) => {
                    if !Box::pin(self.while_quiet(&mut read)).await {
                        return Subscription::Stop;
                    }
                    continue;
                }
            };
            read.heard = Timestamp::now();
            read.quiet = Quiet::new(self.quiet_after);
            let ready = self.take_ready(first, &mut stream, &mut read);
            if self.events.send_all(ready.batch).await.is_err() {
                return Subscription::Stop;
            }
            // Events were lost on the way: the task as the agent holds it fills them in.
            if ready.missed {
                self.open.skipped();
                let counted = self.send(Event::EventsMissed { agent: self.agent }).await;
                if !counted || matches!(Box::pin(self.check()).await.0, Next::Stop) {
                    return Subscription::Stop;
                }
            }
            if ready.ended {
                break;
            }
        }
        Subscription::Closed {
            progressed: read.delivered > 1,
        }
    }

    /// The stream has been quiet until `read.quiet.deadline`: the row says so (once a spell), and
    /// GetTask checks the task when the agent's budget gives a slot. False when the watcher stops.
    async fn while_quiet(&self, read: &mut Read) -> bool {
        let quiet = &mut read.quiet;
        if !quiet.marked {
            quiet.marked = true;
            let mark = Event::Quiet {
                agent: self.agent,
                task: self.id.clone(),
                since: read.heard,
            };
            if !self.send(mark).await {
                return false;
            }
        }
        if quiet.wait_for_slot(&self.checks) {
            return true;
        }
        let found = self.client.get_task(&self.id, Some(HISTORY)).await;
        let repeated = match &found {
            Ok(task) => quiet.repeats(task),
            // A failure shows on the row: the next task found is news again.
            Err(_) => {
                quiet.last_checked = None;
                false
            }
        };
        if !repeated && matches!(self.report(found).await.0, Next::Stop) {
            return false;
        }
        quiet.checked(self.quiet_after, &self.checks);
        true
    }

    /// Whatever else the read brought (or the socket already holds) goes in the same batch as
    /// `first`: one send to the store per read, not per event. Nothing waits for more.
    fn take_ready(&self, first: Result<StreamResponse, Error>, stream: &mut EventStream, read: &mut Read) -> Ready {
        let mut ready = Ready {
            batch: Vec::new(),
            ended: false,
            missed: false,
        };
        let mut item = Some(first);
        while let Some(next) = item.take() {
            let first_event = read.delivered == 0;
            if let Ok(event) = &next
                && !names_another_task(event, &self.id)
            {
                ready.missed |= read.generation.missed_before(event.generation());
                // The store holds the task as a snapshot on the stream says (the first
                // event of a subscription, spec section 3.1.6): a quiet check that finds
                // the same need not send it again.
                read.quiet.last_checked = match event {
                    StreamResponse::Task(task) => Some(Box::new(task.clone())),
                    _ => None,
                };
            }
            match self.take(next, read.heard, &mut ready.batch, &mut read.delivered) {
                Taken::More => {}
                Taken::End => {
                    ready.ended = true;
                    break;
                }
            }
            // Said again once the task surely has a row: a task given by id may have
            // none before its snapshot, and the store drops news of unknown tasks.
            if first_event && read.delivered == 1 {
                ready.batch.push(self.watching(WatchMode::Streaming));
            }
            if ready.batch.len() >= MAX_BATCH {
                break;
            }
            match stream.next().now_or_never() {
                Some(Some(next)) => item = Some(next),
                Some(None) => ready.ended = true,
                None => {}
            }
        }
        ready
    }

    /// GetTask: the truth, what to do next, and the error if it failed.
    async fn check(&self) -> (Next, Option<Error>) {
        let found = self.client.get_task(&self.id, Some(HISTORY)).await;
        self.report(found).await
    }

    /// Sends what a GetTask found to the store: what to do next, and the error if it failed.
    async fn report(&self, found: Result<Task, Error>) -> (Next, Option<Error>) {
        match found {
            Ok(task) => {
                let class = task.status.state.class();
                if !self
                    .send(Event::Snapshot {
                        agent: self.agent,
                        task,
                        seen: Timestamp::now(),
                    })
                    .await
                {
                    return (Next::Stop, None);
                }
                let next = match class {
                    StateClass::Terminal => {
                        self.mode(WatchMode::Done).await;
                        Next::Stop
                    }
                    StateClass::Active => Next::Resubscribe,
                    StateClass::Interrupted | StateClass::Unknown => Next::Poll,
                };
                (next, None)
            }
            Err(e) if e.is_kind(ErrorKind::TaskNotFound) => {
                self.send(Event::NotFound {
                    agent: self.agent,
                    task: self.id.clone(),
                    message: e.to_string(),
                    seen: Timestamp::now(),
                })
                .await;
                (Next::Stop, None)
            }
            Err(e) => {
                let next = if self.error(&e).await { Next::Poll } else { Next::Stop };
                (next, Some(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(state: &str) -> Task {
        serde_json::from_value(serde_json::json!({"id": "t1", "contextId": "c1", "status": {"state": state}})).unwrap()
    }

    #[test]
    fn a_quiet_check_that_finds_the_task_unchanged_is_not_sent_again() {
        let mut quiet = Quiet::new(Duration::from_secs(30));
        assert!(
            !quiet.repeats(&task("TASK_STATE_WORKING")),
            "the first check of a spell is news"
        );
        assert!(quiet.repeats(&task("TASK_STATE_WORKING")), "the same task again is not");
        assert!(!quiet.repeats(&task("TASK_STATE_COMPLETED")), "a changed task is news");
        assert!(quiet.repeats(&task("TASK_STATE_COMPLETED")));
        // A stream event begins a new spell: what it carried is all the store holds.
        let mut quiet = Quiet::new(Duration::from_secs(30));
        assert!(!quiet.repeats(&task("TASK_STATE_COMPLETED")));
    }
}
