//! The small boxes that act on tasks, as state: confirmations (cancel, approve, deny,
//! connected?), the new-task form and the link picker. They are drawn by `ui::dialogs`.

use crossterm::event::KeyEvent;
use ratatui::style::Style;
use ratatui_textarea::TextArea;

use super::steer::Sending;
use crate::a2a::interactions::{Interaction, Kind};
use crate::a2a::{StateClass, TaskState};
use crate::store::{TaskEntry, TaskKey};

/// What a confirmation asks, as it was shown: a `y` answers exactly this, so it carries what
/// the person saw (the interaction, or the task's state) to compare with the store at `y`.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    Cancel {
        key: TaskKey,
        state: TaskState,
    },
    /// An interactions/v1 approval: `approved` is what "yes" sends.
    Approve {
        key: TaskKey,
        approved: bool,
        shown: Interaction,
    },
    /// An interactions/v1 connection request: yes = connected, no = declined.
    Connection {
        key: TaskKey,
        shown: Interaction,
    },
}

impl Ask {
    pub fn key(&self) -> &TaskKey {
        match self {
            Ask::Cancel { key, .. } | Ask::Approve { key, .. } | Ask::Connection { key, .. } => key,
        }
    }

    /// What the open interaction of an interrupted task asks: an approval (`approved` is what
    /// yes sends) or a connection request. Nothing for a question or an out-of-band approval.
    pub fn interaction(task: &TaskEntry, approved: bool) -> Option<Ask> {
        if task.class() != StateClass::Interrupted {
            return None;
        }
        let key = task.key.clone();
        let shown = task.status.message.as_ref().and_then(Interaction::of)?;
        match shown.kind {
            Kind::Approval => Some(Ask::Approve { key, approved, shown }),
            Kind::Connection => Some(Ask::Connection { key, shown }),
            _ => None,
        }
    }

    /// The same question asked about the task as it is now, if it still makes sense.
    pub fn now(&self, task: &TaskEntry) -> Option<Ask> {
        match self {
            Ask::Cancel { .. } => (!task.state().is_terminal()).then(|| Ask::Cancel {
                key: task.key.clone(),
                state: task.state().clone(),
            }),
            Ask::Approve { approved, .. } => Ask::interaction(task, *approved),
            Ask::Connection { .. } => Ask::interaction(task, true),
        }
    }
}

/// A question that needs a yes or a no before anything is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    pub ask: Ask,
    /// Why it is shown again: it changed before `y`, or the last attempt failed (an error).
    pub note: Option<(String, bool)>,
}

impl Confirm {
    pub fn new(ask: Ask) -> Confirm {
        Confirm { ask, note: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewTaskField {
    Agent,
    Message,
    Context,
}

/// The new-task form: which agent, what to ask, in which context.
pub struct NewTask {
    pub agent: usize,
    pub message: TextArea<'static>,
    pub context: TextArea<'static>,
    pub field: NewTaskField,
    pub message_id: String,
    pub sending: Sending,
    pub error: Option<String>,
}

impl NewTask {
    pub fn new(agent: usize, context: &str) -> NewTask {
        let mut message = TextArea::default();
        message.set_cursor_line_style(Style::new());
        message.set_placeholder_text("what should the agent do?");
        let mut ctx = TextArea::new(vec![context.to_string()]);
        ctx.set_cursor_line_style(Style::new());
        ctx.set_placeholder_text("a new context");
        NewTask {
            agent,
            message,
            context: ctx,
            field: NewTaskField::Message,
            message_id: uuid::Uuid::new_v4().to_string(),
            sending: Sending::default(),
            error: None,
        }
    }

    /// A key for the text field that has the focus.
    pub fn type_key(&mut self, key: KeyEvent) {
        match self.field {
            NewTaskField::Message => {
                self.message.input(key);
            }
            NewTaskField::Context => {
                self.context.input(key);
            }
            NewTaskField::Agent => {}
        }
    }

    pub fn next_field(&mut self) {
        self.field = match self.field {
            NewTaskField::Agent => NewTaskField::Message,
            NewTaskField::Message => NewTaskField::Context,
            NewTaskField::Context => NewTaskField::Agent,
        };
    }
}

/// An approval with several web links: the person picks the one to open or copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPick {
    /// Web links only (`effects::is_web_link`), each shown exactly as it would be used.
    pub links: Vec<String>,
    pub open: bool,
    pub selected: usize,
}
