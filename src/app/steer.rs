//! Acting from the dashboard: answering questions, approvals, cancel, new tasks. What the user
//! asks for leaves as `event::Command`s in the outbox; what became of it comes back through
//! the store (`Event::Action`), so the box that asked can show it.

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};

use super::App;
use super::effects::Effect;
use super::popup::Member;
use super::popup::answer::{AnswerBox, Question};
use super::popup::confirm::{Ask, Confirm};
use super::popup::new_task::NewTask;
use crate::a2a::{SendMessageRequest, StateClass, TaskState};
use crate::event::{ActionId, ActionOutcome, AgentId, Command};
use crate::store::{Change, Store, TaskEntry, TaskKey};
use crate::text::one_line;

/// Switches from the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefs {
    /// Open the input box by itself when a question arrives.
    pub auto_popup: bool,
    pub bell: bool,
    /// OSC 9 / OSC 777 desktop notifications.
    pub desktop: bool,
    /// How long a send may go without an outcome before the box offers a retry.
    pub answer_timeout: SignedDuration,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            auto_popup: true,
            bell: true,
            desktop: true,
            answer_timeout: SignedDuration::from_secs(30),
        }
    }
}

/// The attempts of one send (an answer, an approval, a new task), all with the same messageId.
/// Only the latest can fail the box; any that went through means the agent has it, even one
/// given up on after a timeout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sending {
    current: Option<(ActionId, Timestamp)>,
    earlier: Vec<ActionId>,
}

/// What became of a send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    Pending,
    /// The agent took it; the task it concerns, when the agent said.
    Done(Option<String>),
    Failed(String),
}

impl Sending {
    pub fn is_busy(&self) -> bool {
        self.current.is_some()
    }

    /// The attempt in flight, if any.
    pub fn current(&self) -> Option<ActionId> {
        self.current.map(|(id, _)| id)
    }

    pub fn start(&mut self, action: ActionId, now: Timestamp) {
        self.current = Some((action, now));
    }

    pub fn settle(&mut self, store: &Store) -> Settled {
        let current = self.current();
        let done = current
            .iter()
            .chain(&self.earlier)
            .find_map(|id| match store.action(*id) {
                Some(ActionOutcome::Done { task }) => Some(task.clone()),
                _ => None,
            });
        if let Some(task) = done {
            self.current = None;
            return Settled::Done(task);
        }
        match current.and_then(|id| store.action(id)) {
            Some(ActionOutcome::Failed { message }) => {
                self.current = None;
                Settled::Failed(message.clone())
            }
            _ => Settled::Pending,
        }
    }

    /// Gives up on the current attempt after `timeout`; true if it did. Its outcome, should it
    /// come after all, counts only if it went through.
    pub fn expire(&mut self, now: Timestamp, timeout: SignedDuration) -> bool {
        match self.current {
            Some((id, at)) if now.duration_since(at) >= timeout => {
                self.earlier.push(id);
                self.current = None;
                true
            }
            _ => false,
        }
    }
}

/// A confirmed action in flight: what was confirmed, when it left, and whether the person
/// was already told it got no reply (a late failure then changes nothing).
#[derive(Debug, Clone)]
pub(super) struct Confirmed {
    pub(super) ask: Ask,
    pub(super) sent: Timestamp,
    pub(super) given_up: bool,
}

/// How long the keyboard must rest before a question takes it: a box that opened mid-keystroke
/// would swallow the next keys (`v`, `j`...) meant for the table (issue 23).
pub const HOLD: SignedDuration = SignedDuration::from_millis(1500);

/// A one-line message for the footer, shown for a few seconds after it was said.
#[derive(Debug, Clone)]
pub struct Flash {
    pub text: String,
    pub error: bool,
    pub at: Timestamp,
}

#[derive(Default)]
pub struct Steer {
    pub prefs: Prefs,
    /// Questions the user closed with Esc or answered: not popped again.
    pub(super) dismissed: HashSet<(TaskKey, Question)>,
    /// What was typed into a box closed with Esc, by the question it answered.
    pub(super) drafts: HashMap<(TaskKey, Question), String>,
    /// Commands for the engine, taken by the loop.
    pub outbox: Vec<(AgentId, Command)>,
    /// Terminal side effects, carried out by the loop.
    pub effects: Vec<Effect>,
    pub flash: Option<Flash>,
    /// When the person last pressed a key, pasted or used the mouse.
    pub(super) last_input: Option<Timestamp>,
    /// The question whose box waits for the keyboard to rest (`HOLD`); the footer says so.
    pub(super) held: Option<TaskKey>,
    pub(super) confirmed: HashMap<ActionId, Confirmed>,
    next_action: ActionId,
    title_count: Option<usize>,
}

impl Steer {
    pub fn new(prefs: Prefs) -> Steer {
        Steer {
            prefs,
            ..Steer::default()
        }
    }
}

impl App {
    pub(super) fn action_id(&mut self) -> ActionId {
        self.steer.next_action += 1;
        self.steer.next_action
    }

    pub(super) fn send(&mut self, agent: AgentId, request: SendMessageRequest) -> ActionId {
        let action = self.action_id();
        self.steer.outbox.push((
            agent,
            Command::Send {
                action,
                request: Box::new(request),
            },
        ));
        action
    }

    pub(crate) fn flash(&mut self, text: impl Into<String>, error: bool) {
        self.steer.flash = Some(Flash {
            text: text.into(),
            error,
            at: self.now,
        });
    }

    /// The oldest question nobody dismissed, if no box is open: its box opens once the
    /// keyboard rested for `HOLD`, and is held until then.
    pub(super) fn pop_next_question(&mut self) {
        self.steer.held = None;
        if !self.steer.prefs.auto_popup || self.modal() {
            return;
        }
        let next = self
            .store
            .interrupts()
            .into_iter()
            .find(|t| {
                *t.state() == TaskState::InputRequired
                    && !self.steer.dismissed.contains(&(t.key.clone(), Question::of(t)))
            })
            .map(|t| t.key.clone());
        match next {
            Some(key) if self.question_due().is_some_and(|due| self.now < due) => self.steer.held = Some(key),
            Some(key) => self.open_answer(&key),
            None => {}
        }
    }

    /// The person pressed a key, pasted or used the mouse (at `self.now`): a question that
    /// would pop up now waits for the keyboard to rest. A held one whose box the key opened
    /// (or that another box now covers) is no longer held.
    pub(super) fn on_input(&mut self) {
        self.steer.last_input = Some(self.now);
        if self.modal() {
            self.steer.held = None;
        }
    }

    /// When a held question's box may open: `HOLD` after the last input.
    fn question_due(&self) -> Option<Timestamp> {
        self.steer.last_input.map(|at| at + HOLD)
    }

    /// When the loop should look at the clock again for the held question's box, if one waits.
    pub fn held_until(&self) -> Option<Timestamp> {
        self.steer.held.as_ref().and(self.question_due())
    }

    /// The question whose box waits for the keyboard to rest.
    pub fn held_question(&self) -> Option<&TaskKey> {
        self.steer.held.as_ref()
    }

    /// Takes in what the store just did: notifications, the pop-up, outcomes of actions.
    pub fn on_changes(&mut self, changes: &[Change]) {
        let mut notify = None;
        for change in changes {
            match change {
                Change::State(key) => {
                    let Some(t) = self.store.task(key) else { continue };
                    // Only moves seen live: not every old task the first listing brings.
                    let seen_before = t.timeline.len() > 1;
                    let alarming = t.class() == StateClass::Interrupted || *t.state() == TaskState::Failed;
                    if seen_before && alarming {
                        notify = Some(notice_text(self.store.agent_name(key.agent), t));
                    }
                }
                Change::Action(id) => self.report(*id),
                _ => {}
            }
        }
        if let Some(text) = notify {
            if self.steer.prefs.bell {
                self.steer.effects.push(Effect::Bell);
            }
            if self.steer.prefs.desktop {
                self.steer.effects.push(Effect::Notify(text));
            }
        }
        let store = &self.store;
        let answered = (self.popups.iter_mut().filter_map(AnswerBox::of_mut)).any(|b| b.settle(store));
        if answered {
            if let Some(answered) = self.take::<AnswerBox>() {
                // Answered: this question does not pop up again while the agent takes it in.
                self.steer.dismissed.insert((answered.key, answered.question));
            }
            self.flash("answer sent", false);
        }
        let (store, now) = (&self.store, self.now);
        for b in self.popups.iter_mut().filter_map(AnswerBox::of_mut) {
            b.track(store, now);
        }
        self.settle_new_task();
        self.pop_next_question();
        let waiting = self.store.total_counts().interrupted;
        if self.steer.title_count != Some(waiting) {
            self.steer.title_count = Some(waiting);
            let title = if waiting == 0 {
                "a2a-watch".to_string()
            } else {
                format!("a2a-watch ({waiting} waiting)")
            };
            self.steer.effects.push(Effect::Title(title));
        }
    }

    /// The clock moved (`self.now`): sends that got no outcome in time can be retried, and a
    /// held question's box opens once the keyboard rested.
    pub fn on_tick(&mut self) {
        let (now, timeout) = (self.now, self.steer.prefs.answer_timeout);
        if let Some(b) = self.popup_mut::<AnswerBox>() {
            b.expire(now, timeout);
        }
        let no_reply = format!("No reply from the agent in {}s", timeout.as_secs());
        let late: Vec<Ask> = self
            .steer
            .confirmed
            .values_mut()
            .filter(|c| !c.given_up && now.duration_since(c.sent) >= timeout)
            .map(|c| {
                c.given_up = true;
                c.ask.clone()
            })
            .collect();
        for ask in late {
            self.show_again(ask, format!("{no_reply} · y retries (same messageId)"));
        }
        if let Some(form) = self.popup_mut::<NewTask>()
            && form.sending.expire(now, timeout)
        {
            form.error = Some(format!("{no_reply} · ⏎ retries (same messageId)"));
        }
        self.pop_next_question();
    }

    /// The outcome of a confirmed action: done is said in the footer; a failure shows the
    /// confirmation again with the error, for `y` to retry.
    fn report(&mut self, id: ActionId) {
        let Some(confirmed) = self.steer.confirmed.remove(&id) else {
            return;
        };
        match self.store.action(id).cloned() {
            Some(ActionOutcome::Done { .. }) => {
                self.close_if(|c: &Confirm| c.ask == confirmed.ask);
                self.flash(format!("{}: done", confirm_what(&confirmed.ask, &self.store)), false);
            }
            // Already said it got no reply: the retry, if any, reports for itself.
            Some(ActionOutcome::Failed { .. }) if confirmed.given_up => {}
            Some(ActionOutcome::Failed { message }) => {
                self.show_again(confirmed.ask, format!("{} · y retries", one_line(&message)));
            }
            None => {
                self.steer.confirmed.insert(id, confirmed);
            }
        }
    }

    /// Shows a confirmation again with an error, unless another box has the keyboard (then
    /// the footer says it).
    pub(super) fn show_again(&mut self, ask: Ask, error: String) {
        let free = !self.modal() || self.popup::<Confirm>().is_some_and(|c| c.ask == ask);
        if free {
            let mut again = Confirm::new(ask);
            again.note = Some((error, true));
            self.show_confirm(again);
        } else {
            self.flash(format!("{}: {error}", confirm_what(&ask, &self.store)), true);
        }
    }
}

/// A confirmation's action in a few words, for the footer.
fn confirm_what(ask: &Ask, store: &Store) -> String {
    let subject = ask.subject();
    match ask {
        Ask::Cancel { key, .. } => format!("cancel {}", crate::columns::task_id(store, &key.id)),
        Ask::Approve { approved: true, .. } => format!("approve {subject}"),
        Ask::Approve { .. } => format!("deny {subject}"),
        Ask::Connection { .. } => format!("connect {subject}"),
    }
}

fn notice_text(agent: &str, task: &TaskEntry) -> String {
    let what = match task.state() {
        TaskState::InputRequired => "asks",
        TaskState::AuthRequired => "needs approval",
        TaskState::Failed => "failed",
        _ => "changed",
    };
    format!("{} {what}: {}", one_line(agent), one_line(&task.status.text()))
}
