//! The new-task form (drawn by `ui::popups::new_task`): which agent, what to ask, in which
//! context. Keys its map does not name are typed into the field with the focus; a failed send
//! keeps the text, and a retry sends the same messageId.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::style::Style;
use ratatui_textarea::TextArea;

use super::{Behaviour, Member, ModeKeys, text_box_keys};
use crate::a2a::{Message, Part, SendMessageRequest};
use crate::app::App;
use crate::app::keys::{Action, Key};
use crate::app::steer::{Sending, Settled};
use crate::store::TaskKey;
use crate::text::one_line;

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

pub const KEYS: ModeKeys = ModeKeys {
    name: "new_task",
    title: "new task",
    help: &[
        (Action::Send, "send"),
        (Action::Newline, "new line"),
        (Action::NextField, "next field"),
        (Action::PreviousAgent, "previous agent"),
        (Action::NextAgent, "next agent"),
        (Action::Back, "close"),
    ],
    defaults: || {
        let mut keys = text_box_keys();
        keys.extend([
            (Key::plain(KeyCode::Tab), Action::NextField),
            (Key::plain(KeyCode::Left), Action::PreviousAgent),
            (Key::plain(KeyCode::Right), Action::NextAgent),
        ]);
        keys
    },
};

/// The form's hint line: these, then the agent keys, then `HINTS_AFTER`.
pub const HINTS: [(Action, &str); 3] = [
    (Action::Send, "send"),
    (Action::Newline, "new line"),
    (Action::NextField, "next field"),
];
pub const HINTS_AFTER: [(Action, &str); 1] = [(Action::Back, "close")];

impl Behaviour for NewTask {
    fn on_action(app: &mut App, action: Action) {
        let agents = app.store.agents.len().max(1);
        let Some(form) = NewTask::top_mut(&mut app.popups) else {
            return;
        };
        match (action, form.field) {
            (Action::Back, _) => app.close::<NewTask>(),
            (Action::NextField, _) => form.next_field(),
            (Action::PreviousAgent, NewTaskField::Agent) => form.agent = (form.agent + agents - 1) % agents,
            (Action::NextAgent, NewTaskField::Agent) => form.agent = (form.agent + 1) % agents,
            (Action::Newline, NewTaskField::Message) => form.message.insert_newline(),
            (Action::Send | Action::Newline, _) => app.submit_new_task(),
            _ => {}
        }
    }

    fn on_other_key(app: &mut App, key: KeyEvent) -> bool {
        if let Some(form) = NewTask::top_mut(&mut app.popups) {
            form.type_key(key);
        }
        true
    }

    fn on_paste(app: &mut App, text: &str) -> bool {
        let Some(form) = NewTask::top_mut(&mut app.popups) else {
            return false;
        };
        match form.field {
            NewTaskField::Message => form.message.insert_str(text),
            NewTaskField::Context => form.context.insert_str(text.lines().next().unwrap_or("")),
            NewTaskField::Agent => false,
        };
        true
    }

    /// The keys that choose the agent move the cursor in its text fields.
    fn types(&self, action: Action) -> bool {
        matches!(action, Action::PreviousAgent | Action::NextAgent) && self.field != NewTaskField::Agent
    }
}

impl App {
    fn submit_new_task(&mut self) {
        let Some(form) = self.popup_mut::<NewTask>() else {
            return;
        };
        if form.sending.is_busy() {
            return;
        }
        let text = form.message.lines().join("\n");
        if text.trim().is_empty() {
            form.error = Some("Type what the agent should do first.".into());
            return;
        }
        let mut message = Message::user(vec![Part::text(text)]);
        message.message_id = form.message_id.clone();
        let context = form.context.lines().join("").trim().to_string();
        message.context_id = Some(context).filter(|c| !c.is_empty());
        form.error = None;
        let agent = form.agent;
        let action = self.send(
            agent,
            SendMessageRequest {
                message,
                ..Default::default()
            },
        );
        let now = self.now;
        if let Some(form) = self.popup_mut::<NewTask>() {
            form.sending.start(action, now);
        }
    }

    /// What became of the form's send: a started task is selected, a failure shown in it.
    pub(in crate::app) fn settle_new_task(&mut self) {
        let store = &self.store;
        let Some(form) = self.popups.iter_mut().find_map(NewTask::of_mut) else {
            return;
        };
        match form.sending.settle(store) {
            Settled::Done(task) => {
                let key = task.map(|id| TaskKey {
                    agent: form.agent,
                    id: id.as_str().into(),
                });
                self.close::<NewTask>();
                if let Some(key) = key {
                    self.selected = Some(key);
                }
                self.flash("task started", false);
            }
            Settled::Failed(message) => form.error = Some(format!("{} · ⏎ retries", one_line(&message))),
            Settled::Pending => {}
        }
    }
}
