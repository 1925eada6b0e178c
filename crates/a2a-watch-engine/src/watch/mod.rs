//! The watch engine: one tokio task per agent finds its tasks and keeps every live one watched,
//! sending events to the store through one bounded channel (a full channel slows the network
//! side down; nothing is dropped). Knows nothing of the UI.

mod agent;
mod budget;
mod cadence;
mod task;

pub use budget::DEFAULT_CHECK_RATE;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::a2a::ClientOptions;
use crate::a2a::auth::Secret;
use crate::a2a::shown::{GivenUrl, ShownUrl};
use crate::event::{self, AgentId, Command};

/// Where an agent's credential comes from; resolved by the agent's task, so a failing
/// `token_command` shows on the agent's row instead of stopping the dashboard. Resolved again
/// after a 401, so a rotated token is picked up without a restart.
#[derive(Debug, Clone, Default)]
pub enum Credential {
    /// `A2A_TOKEN_<NAME>` (NAME given by the user) or `A2A_TOKEN`, looked up by the client.
    #[default]
    Default,
    /// `--token` for this agent alone, or the config's `token`.
    Value(Secret),
    /// `--token` on a dashboard of several agents: only for agents whose card asks for one.
    Shared(Secret),
    Env(String),
    /// A command that prints a token, like `gh auth token`.
    Command(String),
}

#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The name the user gave (it selects `A2A_TOKEN_<NAME>`); the card's is shown otherwise.
    pub name: Option<String>,
    pub url: GivenUrl,
    pub client: ClientOptions,
    pub credential: Credential,
    /// How often tasks are listed again (and polled tasks fetched).
    pub poll_interval: Duration,
    /// Tasks to watch by id, even if ListTasks does not show them.
    pub tasks: Vec<String>,
    /// Where a tap in front of this agent listens for a planner (`--tap`; see `crate::tap`).
    pub tap: Option<std::net::SocketAddr>,
    /// The tap rewrites a signed card without its signatures rather than pass it on unchanged.
    pub tap_strip_signatures: bool,
    /// The config's `group` (README, "The dashboard"): how the screen and `status --group` gather agents.
    pub group: Option<String>,
}

impl AgentSpec {
    pub fn new(url: impl Into<String>) -> AgentSpec {
        AgentSpec {
            name: None,
            url: GivenUrl::new(url),
            client: ClientOptions::default(),
            credential: Credential::Default,
            poll_interval: Duration::from_secs(3),
            tasks: Vec::new(),
            tap: None,
            tap_strip_signatures: false,
            group: None,
        }
    }

    /// What to call the agent before its card is read (its URL without what could hold a secret).
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| ShownUrl::of_input(&self.url).to_string())
    }
}

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Watch only this context (one planner's delegations).
    pub context: Option<String>,
    /// At most this many open streams per agent; the rest are followed through ListTasks.
    pub max_streams: usize,
    /// Longest wait between reconnection attempts.
    pub max_backoff: Duration,
    /// A send or subscription with no response (headers, and for a send its first event) by
    /// then is given up: a send fails, a subscription is retried later with backoff.
    pub first_byte_timeout: Duration,
    /// A stream silent this long is checked with GetTask (it stays open), and again at most 2x
    /// this later while it stays quiet, as the agent's `check_rate` allows.
    pub quiet_after: Duration,
    /// GetTasks a second per agent for quiet streams (config `check_rate`).
    pub check_rate: f64,
    /// ListTasks pages read per listing at most.
    pub max_pages: usize,
    /// How often an agent is listed while every live task of it has its stream open and nothing
    /// was missed for as long (`cadence`); otherwise every `AgentSpec::poll_interval`.
    pub streamed_list_interval: Duration,
    /// A `token_command` that takes longer is stopped, with everything it started (a login
    /// prompt waiting for input, say).
    pub token_command_timeout: Duration,
    /// The push receiver (`--push-listen`): tasks of agents that push are registered with it.
    pub push: Option<Arc<crate::push::Push>>,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            context: None,
            max_streams: 256,
            max_backoff: Duration::from_secs(30),
            first_byte_timeout: Duration::from_secs(30),
            quiet_after: Duration::from_secs(30),
            check_rate: DEFAULT_CHECK_RATE,
            max_pages: crate::a2a::client::MAX_PAGES,
            streamed_list_interval: Duration::from_secs(30),
            token_command_timeout: Duration::from_secs(30),
            push: None,
        }
    }
}

/// After a 401 from any call (a listing, GetTask, a subscription, a send, a cancel): asks the
/// agent's loop to refresh the credential. Never waits: a full channel already holds work for
/// the loop, and the next 401 asks again.
pub(crate) fn refresh_after(e: &crate::a2a::Error, agent: &mpsc::Sender<Command>) {
    if matches!(e, crate::a2a::Error::Unauthorized { .. }) {
        let _ = agent.try_send(Command::Refresh);
    }
}

/// The running engine; dropping it stops every agent task.
pub struct Engine {
    commands: Vec<mpsc::Sender<Command>>,
    tasks: JoinSet<()>,
    push: Option<Arc<crate::push::Push>>,
}

/// How long the push configs still registered at shutdown may take to delete (best effort:
/// `dashboard::run` gives the whole shutdown 2 s).
const PUSH_CLEANUP: Duration = Duration::from_millis(1500);

impl Engine {
    pub fn start(specs: Vec<AgentSpec>, opts: WatchOptions, events: event::Sender) -> Engine {
        let http = crate::a2a::client::http_client(Duration::from_secs(10)).ok();
        let mut tasks = JoinSet::new();
        let mut commands = Vec::new();
        if let Some(push) = &opts.push {
            tasks.spawn(push.clone().serve(events.clone()));
        }
        for (id, spec) in specs.into_iter().enumerate() {
            let (tx, rx) = mpsc::channel(64);
            commands.push(tx.clone());
            let watcher = agent::AgentWatcher {
                id,
                spec,
                opts: opts.clone(),
                events: events.clone(),
                http: http.clone(),
                myself: tx,
                open: task::OpenStreams::default(),
                checks: Arc::new(budget::CheckBudget::new(opts.check_rate)),
            };
            tasks.spawn(watcher.run(rx));
        }
        Engine {
            commands,
            tasks,
            push: opts.push,
        }
    }

    /// Hands a command to one agent's task; false if that agent is gone.
    pub async fn command(&self, agent: AgentId, command: Command) -> bool {
        match self.commands.get(agent) {
            Some(tx) => tx.send(command).await.is_ok(),
            None => false,
        }
    }

    /// Stops every agent task and the push receiver, then deletes the push configs left.
    pub async fn shutdown(mut self) {
        self.tasks.shutdown().await;
        if let Some(push) = self.push {
            push.unregister_all(PUSH_CLEANUP).await;
        }
    }
}

/// Exponential backoff from 250 ms, capped, with "equal jitter": somewhere between half the
/// step and the step, so many watchers that failed together do not come back together.
pub(crate) fn backoff(attempt: u32, max: Duration) -> Duration {
    let ms = 250u64.saturating_mul(1u64 << attempt.min(16));
    let step = Duration::from_millis(ms).min(max);
    step / 2 + (step / 2).mul_f64(jitter())
}

/// The wait after a failure: what the server asked for (`Retry-After` on 429/503), or backoff.
pub(crate) fn wait_after(e: &crate::a2a::Error, attempt: u32, max: Duration) -> Duration {
    e.retry_after().unwrap_or_else(|| backoff(attempt, max))
}

/// A number in [0, 1) from the standard library's per-process random hash keys (no RNG
/// dependency for this one use).
fn jitter() -> f64 {
    use std::hash::BuildHasher;
    let bits = std::collections::hash_map::RandomState::new().hash_one(0u8);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_the_cap_with_jitter() {
        let max = Duration::from_secs(30);
        for attempt in 0..20 {
            let step = Duration::from_millis(250u64 << attempt.min(16)).min(max);
            let d = backoff(attempt, max);
            assert!(
                d >= step / 2 && d <= step,
                "attempt {attempt}: {d:?} outside {step:?}/2..{step:?}"
            );
        }
        let draws: std::collections::HashSet<Duration> = (0..20).map(|_| backoff(10, max)).collect();
        assert!(draws.len() > 1, "twenty draws were all {draws:?}");
    }

    #[test]
    fn retry_after_wins_over_backoff() {
        let e = crate::a2a::Error::Http {
            status: 429,
            what: "GetTask".into(),
            excerpt: String::new(),
            retry_after: Some(Duration::from_secs(7)),
        };
        assert_eq!(wait_after(&e, 0, Duration::from_secs(1)), Duration::from_secs(7));
    }
}
