//! A confirmation (drawn by `ui::popups::confirm`): cancel, approve, deny, connected? It
//! answers what it showed, and only that: `y` compares it with the store before anything leaves.

use crossterm::event::KeyCode;

use super::{Behaviour, ModeKeys};
use crate::a2a::SendMessageRequest;
use crate::a2a::interactions::{self, Answer, Interaction, Kind};
use crate::a2a::{StateClass, TaskState};
use crate::app::App;
use crate::app::keys::{Action, Key};
use crate::app::steer::Confirmed;
use crate::event::{ActionId, Command};
use crate::store::{TaskEntry, TaskKey};
use crate::text::one_line;

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

    /// What the held call is, in one line: its subject, else its prompt ("" for a cancel).
    pub fn subject(&self) -> String {
        match self {
            Ask::Approve { shown, .. } | Ask::Connection { shown, .. } => {
                one_line(&shown.subject().unwrap_or_else(|| shown.prompt.clone()))
            }
            Ask::Cancel { .. } => String::new(),
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

pub const KEYS: ModeKeys = ModeKeys {
    name: "confirm",
    title: "confirmation",
    help: &CHOICES,
    defaults: || {
        let c = |ch: char| Key::plain(KeyCode::Char(ch));
        vec![
            (c('y'), Action::Yes),
            (c('Y'), Action::Yes),
            (c('n'), Action::No),
            (c('N'), Action::No),
            (Key::plain(KeyCode::Esc), Action::Back),
            (Key::ctrl('c'), Action::Quit),
        ]
    },
};

/// The choices, as help lists them and the box's last line shows them.
pub const CHOICES: [(Action, &str); 3] = [(Action::Yes, "yes"), (Action::No, "no"), (Action::Back, "back")];

impl Behaviour for Confirm {
    fn on_action(app: &mut App, action: Action) {
        match action {
            Action::Yes => app.confirmed(true),
            Action::No => app.confirmed(false),
            Action::Back => app.close::<Confirm>(),
            _ => {}
        }
    }
}

impl App {
    /// Shows a confirmation, in place of one already open.
    pub fn show_confirm(&mut self, confirm: Confirm) {
        self.close::<Confirm>();
        self.push(confirm);
    }

    /// `y` or `n` on a confirmation: answers what it showed, and only that. If the task moved
    /// on, nothing is sent; if what it asks changed (another interaction, another held call,
    /// another state), nothing is sent and the new question is shown instead.
    fn confirmed(&mut self, yes: bool) {
        let Some(confirm) = self.popup::<Confirm>() else {
            return;
        };
        let ask = confirm.ask.clone();
        let sends = yes || matches!(ask, Ask::Connection { .. });
        if !sends {
            self.close::<Confirm>();
            return;
        }
        let current = self.store.task(ask.key()).and_then(|t| ask.now(t));
        let Some(current) = current else {
            self.close::<Confirm>();
            let now = self
                .store
                .task(ask.key())
                .map_or("gone".to_string(), |t| t.state().short_name().to_string());
            return self.flash(format!("no longer waiting (now {now}); nothing sent"), true);
        };
        if current != ask {
            let mut shown = Confirm::new(current);
            shown.note = Some((
                "It changed before you answered: this is what it asks now.".into(),
                false,
            ));
            self.show_confirm(shown);
            return;
        }
        let key = ask.key().clone();
        let action = match &ask {
            Ask::Cancel { .. } => {
                let action = self.action_id();
                self.steer.outbox.push((
                    key.agent,
                    Command::Cancel {
                        action,
                        task: key.id.to_string(),
                    },
                ));
                Some(action)
            }
            // The open interaction is the one shown (compared just above), so it is the one answered.
            Ask::Approve { approved, .. } => self.answer_interaction(&key, Answer::Approved(*approved)),
            Ask::Connection { .. } => self.answer_interaction(&key, Answer::Connected(yes)),
        };
        let Some(action) = action else {
            self.close::<Confirm>();
            return self.flash("the interaction is no longer open; nothing sent", true);
        };
        // The confirmation closes; its outcome comes back through `report`.
        self.close::<Confirm>();
        let sent = self.now;
        self.steer.confirmed.insert(
            action,
            Confirmed {
                ask,
                sent,
                given_up: false,
            },
        );
    }

    /// Sends the answer to the task's open interaction (`interactions::reply`, the builder the
    /// CLI uses too); nothing when none is open.
    fn answer_interaction(&mut self, key: &TaskKey, answer: Answer) -> Option<ActionId> {
        let task = self.store.task(key)?;
        let message = interactions::reply(&key.id, &task.context, &task.status_as_sent(), &answer, None)?;
        Some(self.send(
            key.agent,
            SendMessageRequest {
                message,
                ..Default::default()
            },
        ))
    }
}
