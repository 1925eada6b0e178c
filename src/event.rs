//! The vocabulary the parts share: what the watch engine tells the store (`Event`), what the
//! front end asks of the engine (`Command`), and the ids both name. Plain data on `a2a` types
//! alone, so the store and the front ends depend on it rather than on the engine.

use jiff::Timestamp;

use crate::a2a::{Binding, ProtocolVersion, SendMessageRequest, StreamResponse, Task};

/// Agents are numbered in the order they were configured; names are kept once, in the store.
pub type AgentId = usize;

/// How an agent is doing, as a person reads it on the agent's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    Connecting,
    /// Card read, tasks found, live tasks streamed.
    Streaming,
    /// Watching by polling (no streaming capability, or streams refused).
    Polling {
        reason: String,
    },
    Reconnecting {
        attempt: u32,
        reason: String,
    },
    /// 401/403: the message says which scheme the card asks for and which env var to set.
    Unauthorized {
        message: String,
    },
    Unreachable {
        reason: String,
    },
}

impl Health {
    /// A short word for badges and NDJSON.
    pub fn label(&self) -> &'static str {
        match self {
            Health::Connecting => "connecting",
            Health::Streaming => "streaming",
            Health::Polling { .. } => "polling",
            Health::Reconnecting { .. } => "reconnecting",
            Health::Unauthorized { .. } => "unauthorized",
            Health::Unreachable { .. } => "unreachable",
        }
    }

    pub fn detail(&self) -> Option<String> {
        match self {
            Health::Connecting | Health::Streaming => None,
            Health::Polling { reason } | Health::Unreachable { reason } => Some(reason.clone()),
            Health::Reconnecting { attempt, reason } => Some(format!("attempt {attempt}: {reason}")),
            Health::Unauthorized { message } => Some(message.clone()),
        }
    }
}

/// What we learned from an agent's card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    pub name: String,
    pub version: ProtocolVersion,
    pub binding: Binding,
    pub streaming: bool,
    /// False for 0.3 agents: only tasks we started or were given by id are watched.
    pub lists_tasks: bool,
}

/// How one task is being watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    Streaming,
    Polling,
    /// Terminal: nothing more to watch.
    Done,
}

/// Names one thing the user asked for (an answer, a cancel, a new task), so its outcome can be
/// shown where it was asked.
pub type ActionId = u64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionOutcome {
    /// The agent took it; `task` is the task it concerns (new tasks learn their id here).
    Done { task: Option<String> },
    /// Not delivered, or refused; the message says why, in words for a person.
    Failed { message: String },
}

#[derive(Debug, Clone)]
pub enum Event {
    Info {
        agent: AgentId,
        info: AgentInfo,
    },
    Health {
        agent: AgentId,
        health: Health,
    },
    /// A whole task: from ListTasks, GetTask, or the first frame of a subscription.
    Snapshot {
        agent: AgentId,
        task: Task,
        seen: Timestamp,
    },
    /// One stream event.
    Update {
        agent: AgentId,
        event: StreamResponse,
        seen: Timestamp,
    },
    Watching {
        agent: AgentId,
        task: String,
        mode: WatchMode,
    },
    /// The agent has no such task (TaskNotFound): never existed, or not the caller's. The task
    /// shows as a row marked not found, even if nothing else was ever seen of it.
    NotFound {
        agent: AgentId,
        task: String,
        message: String,
        seen: Timestamp,
    },
    /// The task's stream has carried nothing since `since` (GetTask was asked meanwhile).
    Quiet {
        agent: AgentId,
        task: String,
        since: Timestamp,
    },
    /// Whether the agent's last listing stopped at the page cap.
    ListingCut {
        agent: AgentId,
        cut: bool,
    },
    /// Something went wrong for one task; shown on its row, never fatal.
    TaskError {
        agent: AgentId,
        task: String,
        message: String,
    },
    /// What became of an action.
    Action {
        agent: AgentId,
        action: ActionId,
        outcome: ActionOutcome,
    },
}

/// Requests from the front end to one agent's task.
#[derive(Debug, Clone)]
pub enum Command {
    /// Watch this task (one the dashboard started, or one given by id).
    Watch(String),
    /// Send a message: a new task, or an answer on a task. Its events flow into the store; the
    /// outcome comes back as `Event::Action`.
    Send {
        action: ActionId,
        request: Box<SendMessageRequest>,
    },
    Cancel {
        action: ActionId,
        task: String,
    },
    /// A call got a 401: resolve the credential again (run `token_command`, re-read `token_env`
    /// or `A2A_TOKEN_<NAME>`). Asked for by whichever call was refused; refreshes that come
    /// close together run once.
    Refresh,
}
