//! The input box (drawn by `ui::popups::answer`): a person answers an INPUT_REQUIRED task (or an interactions/v1 question)
//! without leaving the dashboard. The box answers the question it shows and nothing else: when
//! the question changes under it, the box shows the new one and the next Enter only takes note.
//! Failure loses nothing: the text stays, the error is shown under it, and a retry sends the
//! same messageId (`interactions::message_id`), so an agent that deduplicates answers once.

use crossterm::event::KeyEvent;
use jiff::{SignedDuration, Timestamp};
use ratatui::style::Style;
use ratatui_textarea::TextArea;

use super::{Behaviour, Member, ModeKeys, text_box_keys};
use crate::a2a::interactions::{self, Answer, fingerprint_of};
use crate::a2a::{Message, SendMessageRequest, StateClass, TaskState};
use crate::app::App;
use crate::app::keys::Action;
use crate::app::steer::{Sending, Settled};
use crate::store::{Store, TaskEntry, TaskKey};
use crate::text::one_line;

/// Enter this soon after a question appears does not send: it was typed for something else.
pub const GUARD: SignedDuration = SignedDuration::from_millis(500);

/// A question as the box showed it. Another state, status timestamp or status message (its id,
/// parts and metadata, so also the interaction) is another question.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Question {
    state: TaskState,
    at: Option<Timestamp>,
    message: u64,
}

impl Question {
    pub fn of(task: &TaskEntry) -> Question {
        Question {
            state: task.state().clone(),
            at: task.status.timestamp,
            message: fingerprint_of(&task.status.message),
        }
    }
}

pub struct AnswerBox {
    pub key: TaskKey,
    /// The question the box shows and answers.
    pub question: Question,
    shown: Option<Message>,
    pub editor: TextArea<'static>,
    pub sending: Sending,
    /// When the box, or the new question in it, appeared: the `GUARD` runs from here.
    pub armed_at: Timestamp,
    /// The question changed since the last Enter: the next Enter only takes note of it.
    pub changed: bool,
    pub error: Option<String>,
    /// Why nothing was sent (the task moved on, the question changed, the box just opened).
    pub notice: Option<String>,
}

/// What pressing Enter in the box leads to.
pub enum Submit {
    Send(Box<SendMessageRequest>),
    /// Nothing to send (empty, already sending, too soon, or the question moved); the box says why.
    Nothing,
}

impl AnswerBox {
    /// A box on the task's question, with what was typed for it before Esc (a retry of the
    /// same text sends the same messageId, `interactions::message_id`).
    pub fn new(task: &TaskEntry, now: Timestamp, draft: Option<String>) -> AnswerBox {
        let draft = draft.unwrap_or_default();
        let mut editor = TextArea::new(draft.lines().map(str::to_string).collect());
        editor.move_cursor(ratatui_textarea::CursorMove::Bottom);
        editor.move_cursor(ratatui_textarea::CursorMove::End);
        editor.set_cursor_line_style(Style::new());
        editor.set_placeholder_text("type the answer");
        AnswerBox {
            key: task.key.clone(),
            question: Question::of(task),
            shown: task.status.message.clone(),
            editor,
            sending: Sending::default(),
            armed_at: now,
            changed: false,
            error: None,
            notice: None,
        }
    }

    /// The status message of the question on screen.
    pub fn shown(&self) -> Option<&Message> {
        self.shown.as_ref()
    }

    pub fn text(&self) -> String {
        self.editor.lines().join("\n")
    }

    /// Follows the task: a task that stopped waiting is said to have moved on; a changed
    /// question replaces the one shown and disarms the next Enter.
    pub fn track(&mut self, store: &Store, now: Timestamp) {
        if self.sending.is_busy() {
            return;
        }
        let Some(task) = store.task(&self.key) else {
            self.notice = Some("This task is gone from the store; nothing will be sent.".into());
            return;
        };
        if task.class() != StateClass::Interrupted {
            self.notice = Some(format!(
                "No longer waiting for this answer (now {}): someone else answered. Nothing will be sent.",
                task.state().short_name()
            ));
            return;
        }
        let question = Question::of(task);
        if question != self.question {
            self.question = question;
            self.shown = task.status.message.clone();
            self.changed = true;
            self.armed_at = now;
            self.error = None;
            self.notice = Some("The question changed (draft kept): read it, then ⏎ ⏎ answers this one.".into());
        }
    }

    /// Builds the answer to the question on screen, if the task still waits for it (spec
    /// section 3.4.3: same taskId and contextId; interactions/v1 questions carry the
    /// extension's metadata).
    pub fn submit(&mut self, store: &Store, now: Timestamp) -> Submit {
        if self.sending.is_busy() {
            return Submit::Nothing;
        }
        self.track(store, now);
        let Some(task) = store.task(&self.key).filter(|t| t.class() == StateClass::Interrupted) else {
            return Submit::Nothing;
        };
        if self.changed {
            self.changed = false;
            self.notice = Some("⏎ again sends your answer to the question above.".into());
            return Submit::Nothing;
        }
        if now.duration_since(self.armed_at) < GUARD {
            self.notice = Some("This question just appeared: press ⏎ again to send.".into());
            return Submit::Nothing;
        }
        let text = self.text();
        if text.trim().is_empty() {
            self.error = Some("An empty answer is not sent.".into());
            return Submit::Nothing;
        }
        // The builder the CLI uses too (spec section 3.4.3); a value always has a message.
        let answer = Answer::Value(text);
        let Some(message) = interactions::reply(&task.key.id, &task.context, &task.status_as_sent(), &answer, None)
        else {
            return Submit::Nothing;
        };
        self.error = None;
        self.notice = None;
        Submit::Send(Box::new(SendMessageRequest {
            message,
            ..Default::default()
        }))
    }

    /// Takes in the outcome of the send: true when the answer was taken and the box can close.
    pub fn settle(&mut self, store: &Store) -> bool {
        match self.sending.settle(store) {
            Settled::Done(_) => true,
            Settled::Failed(message) => {
                self.error = Some(format!("{} · ⏎ retries", one_line(&message)));
                false
            }
            Settled::Pending => false,
        }
    }

    /// Gives up waiting for the outcome after `timeout`; a retry sends the same messageId.
    pub fn expire(&mut self, now: Timestamp, timeout: SignedDuration) {
        if self.sending.expire(now, timeout) {
            self.error = Some(format!(
                "No reply from the agent in {}s: it may not have the answer · ⏎ retries (same messageId)",
                timeout.as_secs()
            ));
        }
    }
}

pub const KEYS: ModeKeys = ModeKeys {
    name: "answer",
    title: "answer box",
    help: &HINTS,
    defaults: text_box_keys,
};

/// The box's hint line, as help lists it too.
pub const HINTS: [(Action, &str); 3] = [
    (Action::Send, "send"),
    (Action::Newline, "new line"),
    (Action::Back, "later (draft kept)"),
];

impl Behaviour for AnswerBox {
    fn on_action(app: &mut App, action: Action) {
        match action {
            Action::Send => app.send_answer(),
            Action::Newline => {
                if let Some(boxed) = AnswerBox::top_mut(&mut app.popups) {
                    boxed.editor.insert_newline();
                }
            }
            Action::Back => app.answer_later(),
            _ => {}
        }
    }

    fn on_other_key(app: &mut App, key: KeyEvent) -> bool {
        if let Some(boxed) = AnswerBox::top_mut(&mut app.popups) {
            boxed.editor.input(key);
            boxed.error = None;
        }
        true
    }

    fn on_paste(app: &mut App, text: &str) -> bool {
        if let Some(boxed) = AnswerBox::top_mut(&mut app.popups) {
            boxed.editor.insert_str(text);
        }
        true
    }
}

impl App {
    /// Enter in the answer box: sends the answer to the question on screen, if it may go.
    fn send_answer(&mut self) {
        let (store, now) = (&self.store, self.now);
        let Some(boxed) = self.popups.iter_mut().find_map(AnswerBox::of_mut) else {
            return;
        };
        if let Submit::Send(request) = boxed.submit(store, now) {
            let agent = boxed.key.agent;
            let action = self.send(agent, *request);
            if let Some(b) = self.popup_mut::<AnswerBox>() {
                b.sending.start(action, now);
            }
        }
    }

    /// Esc in the answer box: the draft waits for this question, which stays in the inbox;
    /// the ones waiting now do not pop up.
    fn answer_later(&mut self) {
        let Some(boxed) = self.take::<AnswerBox>() else { return };
        let draft = boxed.text();
        if !draft.trim().is_empty() {
            self.steer.drafts.insert((boxed.key, boxed.question), draft);
        }
        for t in self.store.interrupts() {
            if *t.state() == TaskState::InputRequired {
                self.steer.dismissed.insert((t.key.clone(), Question::of(t)));
            }
        }
    }
}
