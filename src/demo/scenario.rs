//! What a demo agent is: a card and a script. A script is a list of turns; each turn is the steps
//! the agent plays with pacing, then what it waits for. Scenarios are pure: they build turns from
//! messages and never touch the store or the network, so they test without HTTP.

use serde_json::Value;

use super::error::ApiResult;
use crate::a2a::card::AgentCard;
use crate::a2a::{Artifact, Message, Part, TaskState};

/// What the agent knows about the task it works on.
pub struct TaskContext {
    pub task_id: String,
    /// The agent's own base URL, for links outside A2A (the deployer's approval page).
    pub base_url: String,
}

/// One thing the agent does; the store turns it into a stream event.
pub enum Step {
    /// A new task status with the agent's note (spec §4.2: the question, the ask, the outcome).
    Status(TaskState, Message),
    Artifact {
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    },
}

/// Reads a user's reply to an interrupted task; refuses it (task unchanged) or gives the next turn.
pub type Answer = Box<dyn Fn(&Message) -> ApiResult<Turn> + Send + Sync>;

/// What an interrupted task waits for once a turn's steps are played.
pub enum Next {
    /// Nothing: the turn ended in a terminal state.
    End,
    /// A message on the same task (INPUT_REQUIRED, or AUTH_REQUIRED answered in-band; spec §3.4.3).
    Reply(Answer),
    /// An operator outside A2A (`POST /approve/<id>`, spec §7.6.1); then this turn plays.
    Operator(Box<Turn>),
}

pub struct Turn {
    /// Played in order; the last one is a terminal or interrupted status.
    pub steps: Vec<Step>,
    pub then: Next,
    /// Multiplies the configured pause between steps.
    pub pace: u32,
    /// Ends a SendStreamingMessage stream right after its first WORKING status, so a client can
    /// be shown a mid-task close that is not a state change.
    pub drops_stream: bool,
}

impl Turn {
    pub fn new(steps: Vec<Step>, then: Next) -> Turn {
        Turn {
            steps,
            then,
            pace: 1,
            drops_stream: false,
        }
    }

    /// A turn that ends the task.
    pub fn last(steps: Vec<Step>) -> Turn {
        Turn::new(steps, Next::End)
    }
}

pub trait Scenario: Send + Sync {
    fn card(&self, base_url: &str) -> AgentCard;
    /// The first turn of a new task.
    fn start(&self, task: &TaskContext, request: &Message) -> Turn;
}

pub fn status(state: TaskState, text: impl Into<String>) -> Step {
    Step::Status(state, Message::agent(vec![Part::text(text)]))
}

pub fn working(text: impl Into<String>) -> Step {
    status(TaskState::Working, text)
}

/// An artifact in one piece.
pub fn artifact(id: &str, name: &str, parts: Vec<Part>) -> Step {
    Step::Artifact {
        artifact: Artifact {
            artifact_id: id.into(),
            name: Some(name.into()),
            parts,
            ..Artifact::default()
        },
        append: false,
        last_chunk: true,
    }
}

pub fn plain_text(text: impl Into<String>) -> Part {
    Part {
        media_type: Some("text/plain".into()),
        ..Part::text(text)
    }
}

pub fn json_data(value: Value) -> Part {
    Part {
        media_type: Some("application/json".into()),
        ..Part::data(value)
    }
}

/// The request's text, lower-cased, for the trigger words each scenario documents.
pub fn lowered_text(message: &Message) -> String {
    message.text().to_lowercase()
}

/// Starts a task on `scenario` with a one-line request, as the scenario tests do.
#[cfg(test)]
pub fn start_with(scenario: &dyn Scenario, text: &str) -> Turn {
    let task = TaskContext {
        task_id: "t-1".into(),
        base_url: "http://127.0.0.1:41243".into(),
    };
    scenario.start(&task, &Message::user(vec![Part::text(text)]))
}
