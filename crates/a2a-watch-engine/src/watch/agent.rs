//! One agent: read its card (retrying while it is unreachable), list its tasks again and again
//! (statusTimestampAfter fetches only what changed; rarely while every live task is streamed:
//! `cadence`), and keep a watcher on every live task, up to a cap on open streams; tasks over the
//! cap are followed through the listing alone.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::cadence::{Cadence, Coverage, Listing};
use super::task::{Ended, OpenStreams, TaskWatch, names_another_task};
use super::{AgentSpec, Credential, WatchOptions, backoff, refresh_after, wait_after};
use crate::a2a::auth::{self, Secret, TokenSource};
use crate::a2a::{Client, Error, ListTasksRequest, ProtocolVersion, SendMessageRequest, StreamResponse, Task};
use crate::event::{ActionId, ActionOutcome, AgentId, AgentInfo, Call, Command, Event, Health, Method};

/// Every this many listings, list everything rather than only what changed, to heal gaps.
const FULL_LISTING_EVERY: u32 = 20;
/// Refreshes asked for sooner than this after the last one began are not run again: every
/// watcher of the agent may meet the same 401 at once.
const REFRESH_DEBOUNCE: Duration = Duration::from_secs(1);

pub(crate) struct AgentWatcher {
    pub id: AgentId,
    pub spec: AgentSpec,
    pub opts: WatchOptions,
    pub events: crate::event::Sender,
    /// The HTTP stack shared by every agent (one connection pool).
    pub http: Option<reqwest::Client>,
    /// Our own command channel, so an action can ask for its task to be watched.
    pub myself: mpsc::Sender<Command>,
    /// This agent's tasks with a subscription open.
    pub open: OpenStreams,
    /// When this agent's quiet streams may be asked about (`budget`).
    pub checks: Arc<super::budget::CheckBudget>,
}

/// Whether a task came from this agent's listing (which then follows its changes too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    Yes,
    No,
}

/// What the agent's loop keeps between listings.
#[derive(Default)]
struct Watched {
    live: HashSet<String>,
    /// Tasks waiting for a free stream slot, first come first served.
    queued: Queue,
    watchers: JoinSet<Ended>,
    /// Tasks whose subscription hung before its headers: their slot is free, and they are
    /// watched again after a backoff (the listing follows them meanwhile).
    resting: HashSet<String>,
    rests: JoinSet<(String, u32, Listed)>,
    /// Sends and cancels under way; they never block the loop.
    actions: JoinSet<()>,
    /// The credential being resolved again after a 401 (at most one at a time), off the loop so
    /// a slow `token_command` blocks no send or cancel.
    refreshing: JoinSet<Result<Option<Secret>, Health>>,
    last_refresh: Option<tokio::time::Instant>,
    /// What the last refresh failed with: the row says so rather than the 401 it follows.
    refresh_failed: Option<Health>,
}

impl Watched {
    /// Whether the task has a watcher, waits for a slot, or rests before it is watched again.
    fn follows(&self, id: &str) -> bool {
        self.live.contains(id) || self.queued.contains(id) || self.resting.contains(id)
    }
}

/// What the agent's loop keeps from one listing to the next.
struct Listings {
    /// When the next listing is due.
    cadence: Cadence,
    /// How many listings began: every `FULL_LISTING_EVERY`th lists everything.
    count: u32,
    /// The newest status stamp of the last listing read whole: the next asks only for newer.
    since: Option<Timestamp>,
    /// Listings failed in a row, for the backoff and the row's health.
    failures: u32,
    /// Whether the last listing had more pages than it reads.
    cut: bool,
}

/// What one listing found, page by page.
struct Found {
    /// The newest status stamp seen.
    newest: Option<Timestamp>,
    /// A live task nobody followed yet.
    new_task: bool,
    /// A row stamped before the `statusTimestampAfter` asked.
    older: bool,
}

/// Tasks waiting for a stream, in order, with a set beside the order so that asking whether a
/// task already waits costs O(1): every listing asks it for every live task, and an agent with
/// 100,000 tasks over the cap has as many waiting.
#[derive(Default)]
struct Queue {
    order: VecDeque<(Arc<str>, Listed)>,
    members: HashSet<Arc<str>>,
}

impl Queue {
    fn contains(&self, id: &str) -> bool {
        self.members.contains(id)
    }

    fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    fn push_back(&mut self, id: String, listed: Listed) {
        let id: Arc<str> = id.into();
        if self.members.insert(id.clone()) {
            self.order.push_back((id, listed));
        }
    }

    fn pop_front(&mut self) -> Option<(String, Listed)> {
        let (id, listed) = self.order.pop_front()?;
        self.members.remove(&id);
        Some((id.to_string(), listed))
    }
}

/// Whether the agent is listed: ListTasks (spec section 3.1.4) is not asked of a 0.3 agent.
fn lists_tasks(client: &Client) -> bool {
    client.endpoint.version != ProtocolVersion::V0_3
}

/// Resolves the credential a spec names; an error is shown as the agent's health.
async fn resolve(credential: Credential, command_timeout: Duration) -> Result<Option<Secret>, Health> {
    match credential {
        Credential::Default => Ok(None),
        Credential::Value(s) | Credential::Shared(s) => Ok(Some(s)),
        Credential::Env(var) => Ok(auth::env_secret(&var)),
        Credential::Command(cmd) => run_token_command(&cmd, command_timeout).await,
    }
}

impl AgentSpec {
    /// The options to connect with, the credential resolved (its `token_command` run); also for
    /// commands that read an agent once (`status`).
    pub async fn client_options(&self, command_timeout: Duration) -> Result<crate::a2a::ClientOptions, Health> {
        let mut options = self.client.clone();
        options.name = self.name.clone().or(options.name);
        if let Some(token) = resolve(self.credential.clone(), command_timeout).await? {
            options.token = Some(token);
            options.token_shared = matches!(self.credential, Credential::Shared(_));
        }
        Ok(options)
    }
}

/// The most a `token_command` may print: a token is a few kilobytes at most, and its output is
/// held in memory.
const TOKEN_OUTPUT_LIMIT: u64 = 64 * 1024;

/// Runs a `token_command` in a process group of its own, so that on timeout everything it
/// started is stopped, not only the shell. Its output may hold the secret, and the command itself
/// may (`vault read …`, a token pasted in): a failure names the config key and the exit status,
/// never the command or what it printed (README "Security").
async fn run_token_command(cmd: &str, limit: Duration) -> Result<Option<Secret>, Health> {
    use std::process::Stdio;
    use tokio::io::AsyncReadExt;
    let failed = |why: String| Health::Unauthorized {
        message: format!("token_command in the agent's config entry {why}"),
    };
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| failed(format!("could not run: {e}")))?;
    let group = child.id();
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let run = async {
        // One byte past the limit tells output that was cut from output that fits.
        let mut out = Vec::new();
        (&mut stdout).take(TOKEN_OUTPUT_LIMIT + 1).read_to_end(&mut out).await?;
        if out.len() as u64 > TOKEN_OUTPUT_LIMIT {
            return Ok(None);
        }
        Ok::<_, std::io::Error>(Some((child.wait().await?, out)))
    };
    match tokio::time::timeout(limit, run).await {
        Ok(Ok(Some((status, out)))) if status.success() => Ok(Some(Secret::new(String::from_utf8_lossy(&out)))),
        Ok(Ok(Some((status, _)))) => Err(failed(format!("failed ({status})"))),
        Ok(Ok(None)) => {
            kill_group(group);
            Err(failed(format!(
                "printed more than {} KiB (the most a token may be); stopped",
                TOKEN_OUTPUT_LIMIT / 1024
            )))
        }
        Ok(Err(e)) => {
            kill_group(group);
            Err(failed(format!("could not run: {e}")))
        }
        Err(_) => {
            kill_group(group);
            Err(failed(format!(
                "did not finish within {} s; stopped",
                limit.as_secs_f64()
            )))
        }
    }
}

/// Stops a process group that `process_group(0)` made for one child (its id is the child's).
fn kill_group(group: Option<u32>) {
    #[cfg(unix)]
    if let Some(pgid) = group.and_then(|g| i32::try_from(g).ok()).filter(|g| *g > 0) {
        // SAFETY: kill(2) only sends a signal; the negative id names the group made for the
        // token command alone, never ours.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = group;
}

impl AgentWatcher {
    async fn send(&self, event: Event) -> bool {
        self.events.send(event).await.is_ok()
    }

    async fn health(&self, health: Health) -> bool {
        self.send(Event::Health { agent: self.id, health }).await
    }

    /// After a 401 from any call: resolves the credential again, off the loop, unless a refresh
    /// is under way or began a moment ago. The result is handed to the client every watcher
    /// shares (`refreshed`).
    fn refresh(&self, watched: &mut Watched) {
        let recent = watched.last_refresh.is_some_and(|t| t.elapsed() < REFRESH_DEBOUNCE);
        if !watched.refreshing.is_empty() || recent {
            return;
        }
        watched.last_refresh = Some(tokio::time::Instant::now());
        watched
            .refreshing
            .spawn(resolve(self.spec.credential.clone(), self.opts.token_command_timeout));
    }

    /// A refresh finished: the new token goes to every watcher from its next request; a failure
    /// to resolve it is what the row shows.
    async fn refreshed(&self, client: &Client, watched: &mut Watched, result: Result<Option<Secret>, Health>) -> bool {
        match result {
            Ok(secret) => {
                watched.refresh_failed = None;
                client.refresh_token(secret);
                true
            }
            Err(health) => {
                watched.refresh_failed = Some(health.clone());
                self.health(health).await
            }
        }
    }

    fn health_for(&self, e: &Error, attempt: u32) -> Health {
        match e {
            Error::Unauthorized { sent_from, .. } => {
                let mut message = e.to_string();
                // The message names a credential that was sent; one that was not, is named here.
                if let Credential::Env(var) = &self.spec.credential
                    && !matches!(sent_from.as_deref(), Some(TokenSource::Explicit(_)))
                {
                    message.push_str(&format!(" ({var}, which token_env in the config names, is not set)"));
                }
                Health::Unauthorized { message }
            }
            Error::Withheld { .. } => Health::Unauthorized { message: e.to_string() },
            Error::Transport { .. } | Error::Unreachable { .. } if attempt == 0 => {
                Health::Unreachable { reason: e.to_string() }
            }
            _ if e.is_retryable() => Health::Reconnecting {
                attempt,
                reason: e.to_string(),
            },
            _ => Health::Unreachable { reason: e.to_string() },
        }
    }

    async fn connect(&self) -> Result<Client, Health> {
        let options = self.spec.client_options(self.opts.token_command_timeout).await?;
        let http = match &self.http {
            Some(h) => h.clone(),
            None => crate::a2a::client::http_client(options.connect_timeout)
                .map_err(|e| Health::Unreachable { reason: e.to_string() })?,
        };
        Client::connect_with(http, &self.spec.url, options)
            .await
            .map_err(|e| self.health_for(&e, 0))
    }

    /// Connects, says what the agent is, then follows it until the app goes away.
    pub async fn run(self, mut commands: mpsc::Receiver<Command>) {
        let mut wanted: Vec<String> = self.spec.tasks.clone();
        let Some(client) = self.connect_until_up(&mut commands, &mut wanted).await else {
            return;
        };
        let Some(healthy) = self.announce(&client).await else {
            return;
        };
        let mut watched = Watched::default();
        // Tasks named by id may be ones the listing does not show (another context, or
        // scoped out): their quiet streams are checked with GetTask.
        for id in wanted {
            self.want(&client, &mut watched, id, 0, Listed::No);
        }
        self.follow(&client, &mut commands, &mut watched, &healthy).await;
    }

    /// Connects, retrying with a backoff while the agent is unreachable; None once the app is gone.
    async fn connect_until_up(
        &self,
        commands: &mut mpsc::Receiver<Command>,
        wanted: &mut Vec<String>,
    ) -> Option<Arc<Client>> {
        let mut attempt = 0;
        loop {
            let health = match self.connect().await {
                Ok(client) => return Some(Arc::new(client)),
                Err(Health::Unreachable { reason }) if attempt > 0 => Health::Reconnecting { attempt, reason },
                Err(other) => other,
            };
            if !self.health(health).await {
                return None;
            }
            attempt += 1;
            if !self
                .pause_before_retry(commands, wanted, backoff(attempt, self.opts.max_backoff))
                .await
            {
                return None;
            }
        }
    }

    /// Waits out a connection backoff. Commands that arrive meanwhile are kept for when the agent
    /// is up (a watch), or refused at once (a send, a cancel). False once the app is gone.
    async fn pause_before_retry(
        &self,
        commands: &mut mpsc::Receiver<Command>,
        wanted: &mut Vec<String>,
        pause: Duration,
    ) -> bool {
        let pause = tokio::time::sleep(pause);
        tokio::pin!(pause);
        loop {
            tokio::select! {
                () = &mut pause => return true,
                cmd = commands.recv() => match cmd {
                    Some(Command::Watch(id)) => wanted.push(id),
                    // The next attempt resolves the credential anyway.
                    Some(Command::Refresh) => {}
                    Some(Command::Send { action, .. } | Command::Cancel { action, .. }) => {
                        let message = format!("{} is not connected yet; try again once it is", self.spec.label());
                        let outcome = ActionOutcome::Failed { message };
                        // Nothing was sent: no call to trace.
                        let refused = Event::Action { agent: self.id, action, outcome, call: None };
                        if !self.send(refused).await {
                            return false;
                        }
                    }
                    None => return false,
                },
            }
        }
    }

    /// Tells the store what the agent is and how it is followed; the health it is followed
    /// with, to show again after a failed listing, or None once the app is gone.
    async fn announce(&self, client: &Client) -> Option<Health> {
        let info = AgentInfo {
            name: client.name.clone(),
            version: client.endpoint.version,
            binding: client.endpoint.binding,
            streaming: client.streams(),
            lists_tasks: lists_tasks(client),
            push_off: self
                .offers_push(client)
                .and(client.credential_withheld())
                .map(|why| format!("push notifications off: their token is a credential, and {why}")),
            card_signature: client.card_signature.clone(),
        };
        if !self.send(Event::Info { agent: self.id, info }).await {
            return None;
        }
        let healthy = match (client.streams(), self.pushes(client)) {
            (true, _) => Health::Streaming,
            (false, None) => Health::Polling {
                reason: "the card declares no streaming".into(),
            },
            (false, Some(_)) => Health::Polling {
                reason: format!(
                    "the card declares no streaming; followed by push notifications (polled {}x slower)",
                    super::task::PUSHED_POLL
                ),
            },
        };
        self.health(healthy.clone()).await.then_some(healthy)
    }

    /// The agent's loop: listings on the ticker, commands, and watchers, refreshes and actions as
    /// they end. Returns once the app is gone.
    async fn follow(
        &self,
        client: &Arc<Client>,
        commands: &mut mpsc::Receiver<Command>,
        watched: &mut Watched,
        healthy: &Health,
    ) {
        let lists_tasks = lists_tasks(client);
        let poll = self.spec.poll_interval.max(Duration::from_millis(100));
        let mut ticker = tokio::time::interval(poll);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut listings = Listings {
            cadence: Cadence::new(poll, self.opts.streamed_list_interval, Instant::now()),
            count: 0,
            since: None,
            failures: 0,
            cut: false,
        };
        loop {
            let go_on = tokio::select! {
                _ = ticker.tick(), if lists_tasks => {
                    if listings.cadence.due(Instant::now(), self.coverage(watched)) {
                        self.list(client, watched, &mut listings, healthy, &mut ticker).await
                    } else {
                        true
                    }
                }
                cmd = commands.recv() => self.command(client, watched, cmd),
                Some(done) = watched.refreshing.join_next() => match done {
                    Ok(result) => self.refreshed(client, watched, result).await,
                    Err(_) => true,
                },
                Some(_) = watched.actions.join_next() => true,
                Some(done) = watched.watchers.join_next() => {
                    self.watcher_ended(client, watched, done.ok());
                    true
                }
                Some(Ok((id, stuck, listed))) = watched.rests.join_next() => {
                    watched.resting.remove(&id);
                    self.want(client, watched, id, stuck, listed);
                    true
                }
            };
            if !go_on {
                return;
            }
        }
    }

    /// One command from the app; false once the app is gone.
    fn command(&self, client: &Arc<Client>, watched: &mut Watched, cmd: Option<Command>) -> bool {
        match cmd {
            Some(Command::Watch(id)) => self.want(client, watched, id, 0, Listed::No),
            Some(Command::Send { action, request }) => {
                watched.actions.spawn(self.act(client.clone()).send(action, request));
            }
            Some(Command::Cancel { action, task }) => {
                watched.actions.spawn(self.act(client.clone()).cancel(action, task));
            }
            Some(Command::Refresh) => self.refresh(watched),
            None => return false,
        }
        true
    }

    /// A task's watcher ended: a hung one rests before it is watched again, and its slot goes to
    /// the tasks waiting for one.
    fn watcher_ended(&self, client: &Arc<Client>, watched: &mut Watched, ended: Option<Ended>) {
        if let Some(Ended { id, stuck, listed }) = ended {
            watched.live.remove(&id);
            if stuck > 0 {
                watched.resting.insert(id.clone());
                let pause = backoff(stuck, self.opts.max_backoff);
                watched.rests.spawn(async move {
                    tokio::time::sleep(pause).await;
                    (id, stuck, listed)
                });
            }
        }
        while watched.watchers.len() < self.opts.max_streams {
            let Some((next, listed)) = watched.queued.pop_front() else {
                break;
            };
            self.spawn_watch(client, watched, next, 0, listed);
        }
    }

    /// Whether every live task has its subscription open, and how many times one lapsed.
    fn coverage(&self, watched: &Watched) -> Coverage {
        let (open, lapses) = self.open.tally();
        // Open streams are of watched tasks only, so equal counts mean every one is streamed.
        // An agent with no live task stays at `poll`: its quiet listing is one small response,
        // and a task started elsewhere (a question, an approval) shows within `poll`.
        let all_streamed = !watched.live.is_empty()
            && watched.queued.is_empty()
            && watched.resting.is_empty()
            && open == watched.live.len();
        Coverage { all_streamed, lapses }
    }

    /// One listing: everything every `FULL_LISTING_EVERY`th time, otherwise only what changed
    /// since the last. Each page goes to the store as it comes: a listing of 100,000 tasks is
    /// never held whole. False once the app is gone.
    async fn list(
        &self,
        client: &Arc<Client>,
        watched: &mut Watched,
        listings: &mut Listings,
        healthy: &Health,
        ticker: &mut tokio::time::Interval,
    ) -> bool {
        let full = listings.count.is_multiple_of(FULL_LISTING_EVERY);
        listings.count += 1;
        listings.cadence.began(Instant::now());
        let since = if full { None } else { listings.since };
        let req = self.list_request(since);
        let mut pages = client.pages(&req, self.opts.max_pages);
        // `newest` is taken as `since` only once every page is read: pages not read yet hold
        // older changes that the next listing must still ask for.
        let mut found = Found {
            newest: listings.since,
            new_task: false,
            older: false,
        };
        let listed = loop {
            let tasks = match pages.next().await {
                Ok(Some(tasks)) => tasks,
                Ok(None) => break Ok(pages.cut),
                Err(e) => break Err(e),
            };
            if listings.failures > 0 {
                listings.failures = 0;
                if !self.health(healthy.clone()).await {
                    return false;
                }
            }
            if !self.take_page(client, watched, tasks, since, &mut found).await {
                return false;
            }
        };
        let listing = match listed {
            Ok(false) if !found.new_task => Listing::Calm,
            _ => Listing::Missed,
        };
        listings.cadence.ended(Instant::now(), listing);
        if found.older && listings.cadence.filter_ignored() {
            tracing::info!(
                agent = self.id,
                "the agent ignores statusTimestampAfter: it is listed every poll_interval"
            );
        }
        match listed {
            Ok(cut) => {
                listings.since = found.newest;
                self.listing_cut(listings, cut).await
            }
            Err(e) => self.listing_failed(watched, listings, &e, ticker).await,
        }
    }

    /// One page of a listing (asked for changes after `since`, if any): its tasks to the store,
    /// a watcher for each live one, and what it found noted. False once the app is gone.
    async fn take_page(
        &self,
        client: &Arc<Client>,
        watched: &mut Watched,
        tasks: Vec<Task>,
        since: Option<Timestamp>,
        found: &mut Found,
    ) -> bool {
        for task in tasks {
            if let Some(ts) = task.status.timestamp {
                found.newest = Some(found.newest.map_or(ts, |s| s.max(ts)));
                found.older |= since.is_some_and(|since| ts < since);
            }
            let live = !task.status.state.is_terminal();
            found.new_task |= live && !watched.follows(&task.id);
            let id = task.id.clone();
            if !self
                .send(Event::Snapshot {
                    agent: self.id,
                    task,
                    seen: Timestamp::now(),
                })
                .await
            {
                return false;
            }
            if live {
                self.want(client, watched, id, 0, Listed::Yes);
            }
        }
        true
    }

    /// Whether the listing read every page; told to the store only when that changes.
    async fn listing_cut(&self, listings: &mut Listings, cut: bool) -> bool {
        if cut == listings.cut {
            return true;
        }
        listings.cut = cut;
        self.send(Event::ListingCut { agent: self.id, cut }).await
    }

    /// A listing failed: the row says why (after a 401, once the credential is resolved again),
    /// and the next listing waits as long as the error asks.
    async fn listing_failed(
        &self,
        watched: &mut Watched,
        listings: &mut Listings,
        e: &Error,
        ticker: &mut tokio::time::Interval,
    ) -> bool {
        listings.failures += 1;
        let health = match e {
            Error::Unauthorized { .. } => {
                self.refresh(watched);
                watched
                    .refresh_failed
                    .clone()
                    .unwrap_or_else(|| self.health_for(e, listings.failures))
            }
            _ => self.health_for(e, listings.failures),
        };
        if !self.health(health).await {
            return false;
        }
        ticker.reset_after(wait_after(e, listings.failures, self.opts.max_backoff));
        true
    }

    fn list_request(&self, since: Option<Timestamp>) -> ListTasksRequest {
        ListTasksRequest {
            context_id: self.opts.context.clone(),
            status_timestamp_after: since,
            // Watchers fetch full tasks; the listing only needs states.
            history_length: Some(0),
            // The most a page may hold (spec section 3.1.4: 1-100): half the round trips of the
            // default 50, and `max_pages` pages reach twice as many tasks.
            page_size: Some(100),
            ..ListTasksRequest::default()
        }
    }

    fn act(&self, client: Arc<Client>) -> Act {
        Act {
            agent: self.id,
            client,
            events: self.events.clone(),
            myself: self.myself.clone(),
            open: self.open.clone(),
            first_byte: self.opts.first_byte_timeout,
        }
    }

    /// Watches a task now, or when a slot frees. `stuck` carries a hung subscription's count
    /// into the next watcher, so its backoff keeps growing.
    fn want(&self, client: &Arc<Client>, watched: &mut Watched, id: String, stuck: u32, listed: Listed) {
        if watched.follows(&id) {
            return;
        }
        if watched.watchers.len() >= self.opts.max_streams {
            watched.queued.push_back(id, listed);
            return;
        }
        self.spawn_watch(client, watched, id, stuck, listed);
    }

    /// The push receiver, if there is one and the agent's card says it pushes.
    fn offers_push(&self, client: &Client) -> Option<Arc<crate::push::Push>> {
        self.opts
            .push
            .clone()
            .filter(|_| client.card.capabilities.push_notifications)
    }

    /// The push receiver, if the agent is to be asked to push: it offers to, and may be given the
    /// receiver's token (the rule for every credential: README "Security").
    fn pushes(&self, client: &Client) -> Option<Arc<crate::push::Push>> {
        self.offers_push(client)
            .filter(|_| client.credential_withheld().is_none())
    }

    fn spawn_watch(&self, client: &Arc<Client>, watched: &mut Watched, id: String, stuck: u32, listed: Listed) {
        watched.live.insert(id.clone());
        let watch = TaskWatch {
            agent: self.id,
            client: client.clone(),
            id,
            events: self.events.clone(),
            poll: self.spec.poll_interval,
            max_backoff: self.opts.max_backoff,
            first_byte: self.opts.first_byte_timeout,
            quiet_after: self.opts.quiet_after,
            listed,
            checks: self.checks.clone(),
            open: self.open.clone(),
            stuck,
            agent_commands: self.myself.clone(),
            push: self.pushes(client),
        };
        watched.watchers.spawn(watch.run());
    }
}

/// One action under way: a send or a cancel, on its own task so the agent's loop goes on.
struct Act {
    agent: AgentId,
    client: Arc<Client>,
    events: crate::event::Sender,
    myself: mpsc::Sender<Command>,
    open: OpenStreams,
    /// How long a send may go without a reply before it is reported failed.
    first_byte: Duration,
}

/// One action's call under way: the action, and what its outcome will say of the call.
struct Asked {
    action: ActionId,
    call: Call,
}

impl Asked {
    /// A call of `method` for `action` about to be sent, on the task and context it names.
    fn new(action: ActionId, method: Method, task: Option<&str>, context: Option<&str>) -> Asked {
        let now = Timestamp::now();
        let call = Call {
            method,
            task: task.map(str::to_string),
            context: context.map(str::to_string),
            sent: now,
            ended: now,
            error_type: None,
        };
        Asked { action, call }
    }
}

impl Act {
    async fn outcome(&self, asked: Asked, outcome: ActionOutcome) {
        let Asked { action, mut call } = asked;
        call.ended = Timestamp::now();
        if let ActionOutcome::Done { task: Some(task) } = &outcome {
            call.task = Some(task.clone());
        }
        let _ = self
            .events
            .send(Event::Action {
                agent: self.agent,
                action,
                outcome,
                call: Some(Box::new(call)),
            })
            .await;
    }

    async fn update(&self, event: StreamResponse) -> bool {
        self.events
            .send(Event::Update {
                agent: self.agent,
                event,
                seen: Timestamp::now(),
            })
            .await
            .is_ok()
    }

    /// A failed call, `error_type` saying what kind of failure (`Call::error_type`).
    async fn fail(&self, mut asked: Asked, error_type: String, message: String) {
        asked.call.error_type = Some(error_type);
        self.outcome(asked, ActionOutcome::Failed { message }).await;
    }

    /// A call the agent refused: reported, and after a 401 the credential is refreshed, so that
    /// retrying the action uses the new one.
    async fn refused(&self, asked: Asked, e: &Error) {
        refresh_after(e, &self.myself);
        self.fail(asked, e.error_type(), refusal(e)).await;
    }

    /// No reply within `first_byte`.
    async fn timed_out(&self, asked: Asked) {
        self.fail(asked, "timeout".into(), self.no_reply()).await;
    }

    fn no_reply(&self) -> String {
        format!(
            "no reply from the agent within {} s; it may or may not have received the message",
            self.first_byte.as_secs()
        )
    }

    /// Streams the message where the agent streams (its events flow into the store as they come),
    /// sends it without waiting otherwise; then the task is watched like any other. Only a first
    /// event that is a task, a message or an update counts as taken: an error frame, a frame that
    /// does not decode, a close with nothing, an HTTP error or silence is reported as a failure.
    async fn send(self, action: ActionId, request: Box<SendMessageRequest>) {
        let method = if self.client.streams() {
            Method::SendStreamingMessage
        } else {
            Method::SendMessage
        };
        let named = &request.message;
        let asked = Asked::new(action, method, named.task_id.as_deref(), named.context_id.as_deref());
        let task = if self.client.streams() {
            match self.send_streaming(asked, &request).await {
                Some(task) => task,
                None => return,
            }
        } else {
            let request = request.returning_immediately();
            match tokio::time::timeout(self.first_byte, self.client.send_message(&request)).await {
                Ok(Ok(result)) => {
                    let task = result.named_task().map(str::to_string);
                    self.update(result).await;
                    self.outcome(asked, ActionOutcome::Done { task: task.clone() }).await;
                    task
                }
                Ok(Err(e)) => return self.refused(asked, &e).await,
                Err(_) => return self.timed_out(asked).await,
            }
        };
        // The stream may close at any state (docs/protocol-notes.md, "Stream closes"): the watcher
        // takes the task from here.
        if let Some(task) = task {
            let _ = self.myself.send(Command::Watch(task)).await;
        }
    }

    /// The streaming send: None if it failed (reported), else the task it concerns, if any.
    async fn send_streaming(&self, asked: Asked, request: &SendMessageRequest) -> Option<Option<String>> {
        use futures::StreamExt;
        let opening = async {
            let mut stream = self.client.send_streaming_message(request).await?;
            let first = stream.next().await;
            Ok::<_, Error>((stream, first))
        };
        let (mut stream, first) = match tokio::time::timeout(self.first_byte, opening).await {
            Ok(Ok(opened)) => opened,
            Ok(Err(e)) => {
                self.refused(asked, &e).await;
                return None;
            }
            Err(_) => {
                self.timed_out(asked).await;
                return None;
            }
        };
        let first = match first {
            Some(Ok(event)) => event,
            Some(Err(e)) => {
                self.refused(asked, &e).await;
                return None;
            }
            None => {
                let why = "the agent closed the stream without replying".to_string();
                self.fail(asked, "refused".into(), why).await;
                return None;
            }
        };
        let mut task = first.named_task().map(str::to_string);
        // The event first, so the task is in the store when its action is reported done.
        if !self.update(first).await {
            return None;
        }
        self.outcome(asked, ActionOutcome::Done { task: task.clone() }).await;
        while let Some(item) = stream.next().await {
            // Past the first event the message was taken; what breaks later is the watcher's.
            let Ok(event) = item else { break };
            if let Some(id) = &task {
                if names_another_task(&event, id) {
                    tracing::warn!(agent = self.agent, task = %id, other = ?event.task_id(),
                        "ignored an event for another task on a send's stream");
                    continue;
                }
                // A subscription to this task carries the same chunks; appending both would
                // show each twice. Its close is followed by GetTask, whose snapshot replaces
                // the artifacts, so nothing is lost.
                if matches!(event, StreamResponse::ArtifactUpdate(_)) && self.open.contains(id) {
                    continue;
                }
            }
            task = task.or_else(|| event.named_task().map(str::to_string));
            if !self.update(event).await {
                return None;
            }
        }
        Some(task)
    }

    async fn cancel(self, action: ActionId, task: String) {
        let asked = Asked::new(action, Method::CancelTask, Some(&task), None);
        match self.client.cancel_task(&task).await {
            Ok(t) => {
                let id = t.id.clone();
                self.update(StreamResponse::Task(t)).await;
                self.outcome(asked, ActionOutcome::Done { task: Some(id) }).await;
            }
            Err(e) => self.refused(asked, &e).await,
        }
    }
}

/// A failed action in words for a person: what the agent said, or what went wrong on the way.
fn refusal(e: &Error) -> String {
    match e {
        Error::Agent { .. } => format!("the agent refused: {e}"),
        Error::Decode { .. } => format!("the agent's reply did not decode: {e}"),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Listed, Queue};

    #[test]
    fn the_queue_keeps_order_and_holds_each_task_once() {
        let mut q = Queue::default();
        for (id, listed) in [
            ("b", Listed::Yes),
            ("a", Listed::No),
            ("b", Listed::No),
            ("c", Listed::Yes),
            ("a", Listed::Yes),
        ] {
            q.push_back(id.to_string(), listed);
        }
        assert!(q.contains("a") && q.contains("c") && !q.contains("d"));
        assert_eq!(
            q.pop_front(),
            Some(("b".to_string(), Listed::Yes)),
            "the first ask stands"
        );
        assert!(!q.contains("b"), "a task taken off the queue is no longer in it");
        q.push_back("b".into(), Listed::No);
        let rest: Vec<String> = std::iter::from_fn(|| q.pop_front().map(|(id, _)| id)).collect();
        assert_eq!(rest, ["a", "c", "b"]);
        assert!(!q.contains("a"));
    }
}
