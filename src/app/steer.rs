//! Acting from the dashboard: answering questions, approvals, cancel, new tasks. What the user
//! asks for leaves as `event::Command`s in the outbox; what became of it comes back through
//! the store (`Event::Action`), so the box that asked can show it.

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};

use super::answer::{AnswerBox, Question, Submit};
use super::dialogs::{Ask, Confirm, LinkPick, NewTask};
use super::effects::{Effect, is_web_link};
use super::keys::Action;
use super::popup::Popup;
use super::{App, Pane};
use crate::a2a::interactions::{self, Answer};
use crate::a2a::{Message, Part, SendMessageRequest, StateClass, TaskState};
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
struct Confirmed {
    ask: Ask,
    sent: Timestamp,
    given_up: bool,
}

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
    dismissed: HashSet<(TaskKey, Question)>,
    /// What was typed into a box closed with Esc, by the question it answered.
    drafts: HashMap<(TaskKey, Question), String>,
    /// Commands for the engine, taken by the loop.
    pub outbox: Vec<(AgentId, Command)>,
    /// Terminal side effects, carried out by the loop.
    pub effects: Vec<Effect>,
    pub flash: Option<Flash>,
    confirmed: HashMap<ActionId, Confirmed>,
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
    fn action_id(&mut self) -> ActionId {
        self.steer.next_action += 1;
        self.steer.next_action
    }

    fn send(&mut self, agent: AgentId, request: SendMessageRequest) -> ActionId {
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

    /// The approval the approval keys act on: the pane's selection when it has the focus, the
    /// selected task when it waits for one, else the pane's selection.
    pub fn target_approval(&self) -> Option<TaskKey> {
        let from_pane = self.approval_at(self.approval).map(|t| t.key.clone());
        if self.focus == Pane::Approvals {
            return from_pane;
        }
        match self.selected_task() {
            Some(t) if *t.state() == TaskState::AuthRequired => Some(t.key.clone()),
            _ => from_pane,
        }
    }

    /// Opens the input box on an interrupted task, with the draft kept for its question.
    pub fn open_answer(&mut self, key: &TaskKey) {
        if let Some(task) = self.store.task(key).filter(|t| t.class() == StateClass::Interrupted) {
            let draft = self.steer.drafts.remove(&(key.clone(), Question::of(task)));
            let boxed = AnswerBox::new(task, self.now, draft);
            self.push(Popup::Answer(Box::new(boxed)));
        }
    }

    /// The oldest question nobody dismissed, if no box is open.
    fn pop_next_question(&mut self) {
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
        if let Some(key) = next {
            self.open_answer(&key);
        }
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
        let answered = self.popups.iter_mut().any(|p| match p {
            Popup::Answer(b) => b.settle(store),
            _ => false,
        });
        if answered {
            if let Some(answered) = self.take_answer() {
                // Answered: this question does not pop up again while the agent takes it in.
                self.steer.dismissed.insert((answered.key, answered.question));
            }
            self.flash("answer sent", false);
        }
        let (store, now) = (&self.store, self.now);
        for popup in &mut self.popups {
            if let Popup::Answer(b) = popup {
                b.track(store, now);
            }
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

    /// The clock moved (`self.now`): sends that got no outcome in time can be retried.
    pub fn on_tick(&mut self) {
        let (now, timeout) = (self.now, self.steer.prefs.answer_timeout);
        if let Some(b) = self.answer_mut() {
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
        if let Some(form) = self.new_task_mut()
            && form.sending.expire(now, timeout)
        {
            form.error = Some(format!("{no_reply} · ⏎ retries (same messageId)"));
        }
    }

    /// The outcome of a confirmed action: done is said in the footer; a failure shows the
    /// confirmation again with the error, for `y` to retry.
    fn report(&mut self, id: ActionId) {
        let Some(confirmed) = self.steer.confirmed.remove(&id) else {
            return;
        };
        match self.store.action(id).cloned() {
            Some(ActionOutcome::Done { .. }) => {
                self.close(|p| matches!(p, Popup::Confirm(c) if c.ask == confirmed.ask));
                self.flash(format!("{}: done", confirm_what(&confirmed.ask)), false);
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
    fn show_again(&mut self, ask: Ask, error: String) {
        let free = !self.modal() || self.confirm().is_some_and(|c| c.ask == ask);
        if free {
            let mut again = Confirm::new(ask);
            again.note = Some((error, true));
            self.show_confirm(again);
        } else {
            self.flash(format!("{}: {error}", confirm_what(&ask)), true);
        }
    }

    fn settle_new_task(&mut self) {
        let store = &self.store;
        let Some(form) = self.popups.iter_mut().find_map(|p| match p {
            Popup::NewTask(form) => Some(form),
            _ => None,
        }) else {
            return;
        };
        match form.sending.settle(store) {
            Settled::Done(task) => {
                let key = task.map(|id| TaskKey {
                    agent: form.agent,
                    id: id.as_str().into(),
                });
                self.close(|p| matches!(p, Popup::NewTask(_)));
                if let Some(key) = key {
                    self.selected = Some(key);
                }
                self.flash("task started", false);
            }
            Settled::Failed(message) => form.error = Some(format!("{} · ⏎ retries", one_line(&message))),
            Settled::Pending => {}
        }
    }

    /// Enter in the answer box: sends the answer to the question on screen, if it may go.
    pub(super) fn send_answer(&mut self) {
        let (store, now) = (&self.store, self.now);
        let Some(boxed) = self.popups.iter_mut().find_map(|p| match p {
            Popup::Answer(b) => Some(b),
            _ => None,
        }) else {
            return;
        };
        if let Submit::Send(request) = boxed.submit(store, now) {
            let agent = boxed.key.agent;
            let action = self.send(agent, *request);
            if let Some(b) = self.answer_mut() {
                b.sending.start(action, now);
            }
        }
    }

    /// Esc in the answer box: the draft waits for this question, which stays in the inbox;
    /// the ones waiting now do not pop up.
    pub(super) fn answer_later(&mut self) {
        let Some(boxed) = self.take_answer() else { return };
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

    pub(super) fn submit_new_task(&mut self) {
        let Some(form) = self.new_task_mut() else {
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
        if let Some(form) = self.new_task_mut() {
            form.sending.start(action, now);
        }
    }

    /// `y` or `n` on a confirmation: answers what it showed, and only that. If the task moved
    /// on, nothing is sent; if what it asks changed (another interaction, another held call,
    /// another state), nothing is sent and the new question is shown instead.
    pub(super) fn confirmed(&mut self, yes: bool) {
        let Some(confirm) = self.confirm() else {
            return;
        };
        let ask = confirm.ask.clone();
        let sends = yes || matches!(ask, Ask::Connection { .. });
        if !sends {
            self.close(|p| matches!(p, Popup::Confirm(_)));
            return;
        }
        let current = self.store.task(ask.key()).and_then(|t| ask.now(t));
        let Some(current) = current else {
            self.close(|p| matches!(p, Popup::Confirm(_)));
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
            self.close(|p| matches!(p, Popup::Confirm(_)));
            return self.flash("the interaction is no longer open; nothing sent", true);
        };
        // The confirmation closes; its outcome comes back through `report`.
        self.close(|p| matches!(p, Popup::Confirm(_)));
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
        let message = interactions::reply(&key.id, &task.context, &task.status, &answer, None)?;
        Some(self.send(
            key.agent,
            SendMessageRequest {
                message,
                ..Default::default()
            },
        ))
    }

    /// `a` and `d` on an approval; on a connection request `a` asks "connected?".
    pub fn ask_approval(&mut self, approved: bool) {
        let Some(key) = self.target_approval() else {
            return self.flash("no approval is waiting", true);
        };
        let ask = self.store.task(&key).and_then(|t| Ask::interaction(t, approved));
        match ask {
            Some(ask) => self.show_confirm(Confirm::new(ask)),
            // Out-of-band approvals travel outside A2A: open or copy the link instead.
            None => self.flash(
                format!(
                    "this approval happens outside A2A: {} opens its link, {} copies it",
                    self.keys.hint(Action::OpenLink),
                    self.keys.hint(Action::CopyLink)
                ),
                false,
            ),
        }
    }

    pub fn ask_cancel(&mut self) {
        match self.selected_task() {
            Some(t) if !t.state().is_terminal() => {
                let ask = Ask::Cancel {
                    key: t.key.clone(),
                    state: t.state().clone(),
                };
                self.show_confirm(Confirm::new(ask));
            }
            Some(t) => {
                let state = t.state().short_name().to_string();
                self.flash(format!("the task is {state}: nothing to cancel"), true)
            }
            None => self.flash("no task selected", true),
        }
    }

    pub fn open_new_task(&mut self) {
        let (agent, context) = match self.selected_task() {
            Some(t) => (t.key.agent, t.context.clone()),
            None => (0, String::new()),
        };
        if self.store.agents.is_empty() {
            return self.flash("no agents to start a task on", true);
        }
        self.push(Popup::NewTask(Box::new(NewTask::new(agent, &context))));
    }

    /// The target approval's web link: opened, or copied; with several, a picker. Never sent
    /// to the agent. A link that is not a web link is never opened or copied.
    pub fn link_effect(&mut self, open: bool) {
        let found = self
            .target_approval()
            .and_then(|k| self.store.task(&k))
            .and_then(|t| t.status.message.as_ref())
            .map(crate::ui::format::links)
            .unwrap_or_default();
        let (web, other): (Vec<String>, Vec<String>) = found.into_iter().partition(|l| is_web_link(l));
        match (web.len(), other.first()) {
            (0, Some(other)) => self.use_link(other.clone(), open),
            (0, None) => self.flash("no link in the selected approval", true),
            (1, _) => self.use_link(web.into_iter().next().unwrap_or_default(), open),
            _ => {
                self.push(Popup::Pick(LinkPick {
                    links: web,
                    open,
                    selected: 0,
                }));
            }
        }
    }

    pub(super) fn use_link(&mut self, link: String, open: bool) {
        // Checked once more where it is used: the picker and the single link alike.
        if !is_web_link(&link) {
            return self.flash(
                format!("not a web link, not opened or copied: {}", one_line(&link)),
                true,
            );
        }
        if open {
            self.flash(format!("opening {link}"), false);
            self.steer.effects.push(Effect::Open(link));
        } else {
            self.flash(format!("copied {link}"), false);
            self.steer.effects.push(Effect::Copy(link));
        }
    }

    pub fn reply_to_selected(&mut self) {
        match self.selected_task().map(|t| (t.key.clone(), t.class())) {
            Some((key, StateClass::Interrupted)) => self.open_answer(&key),
            _ => self.flash("the selected task is not waiting for anything", true),
        }
    }
}

/// A confirmation's action in a few words, for the footer.
fn confirm_what(ask: &Ask) -> String {
    let subject = ask.subject();
    match ask {
        Ask::Cancel { key, .. } => format!("cancel {}", crate::ui::format::short_id(&key.id)),
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
