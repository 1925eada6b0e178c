//! Acting from the dashboard: answering questions, approvals, cancel, new tasks. What the user
//! asks for leaves as `watch::Command`s in the outbox; what became of it comes back through
//! the store (`Event::Action`), so the box that asked can show it.

use std::collections::{HashMap, HashSet};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;

use super::answer::{AnswerBox, Submit};
use super::app::{App, Focus};
use super::dialogs::{Confirm, NewTask, NewTaskField};
use super::effects::Effect;
use crate::a2a::interactions::{self, Answer, Interaction, Kind};
use crate::a2a::{Message, Part, SendMessageRequest, StateClass, TaskState};
use crate::store::{Change, TaskEntry, TaskKey};
use crate::text::one_line;
use crate::watch::{ActionId, ActionOutcome, AgentId, Command};

/// Switches from the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefs {
    /// Open the input box by itself when a question arrives.
    pub auto_popup: bool,
    pub bell: bool,
    /// OSC 9 / OSC 777 desktop notifications.
    pub desktop: bool,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            auto_popup: true,
            bell: true,
            desktop: true,
        }
    }
}

/// An action whose outcome is reported as a one-line message rather than in a box.
#[derive(Debug, Clone)]
struct Reported {
    what: String,
}

#[derive(Default)]
pub struct Steer {
    pub prefs: Prefs,
    pub answer: Option<AnswerBox>,
    pub confirm: Option<Confirm>,
    pub new_task: Option<NewTask>,
    /// The inbox is open, with this row selected.
    pub inbox: Option<usize>,
    /// Questions the user closed with Esc (by task and the time it was asked): not popped again.
    dismissed: HashSet<(TaskKey, Timestamp)>,
    /// Commands for the engine, taken by the loop.
    pub outbox: Vec<(AgentId, Command)>,
    /// Terminal side effects, carried out by the loop.
    pub effects: Vec<Effect>,
    /// A one-line message for the footer: text, is it an error, when it was said.
    pub flash: Option<(String, bool, Timestamp)>,
    reported: HashMap<ActionId, Reported>,
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

    /// Is a box open that takes the keyboard?
    pub fn modal(&self) -> bool {
        self.answer.is_some() || self.confirm.is_some() || self.new_task.is_some() || self.inbox.is_some()
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

    fn flash(&mut self, text: impl Into<String>, error: bool) {
        self.steer.flash = Some((text.into(), error, self.now));
    }

    /// The approval the approval keys act on: the pane's selection when it has the focus, the
    /// selected task when it waits for one, else the pane's selection.
    pub fn target_approval(&self) -> Option<TaskKey> {
        let from_pane = self.approval_at(self.approval).map(|t| t.key.clone());
        if self.focus == Focus::Approvals {
            return from_pane;
        }
        match self.selected_task() {
            Some(t) if *t.state() == TaskState::AuthRequired => Some(t.key.clone()),
            _ => from_pane,
        }
    }

    /// Opens the input box on an interrupted task.
    pub fn open_answer(&mut self, key: &TaskKey) {
        if let Some(task) = self.store.task(key).filter(|t| t.class() == StateClass::Interrupted) {
            self.steer.answer = Some(AnswerBox::new(task));
        }
    }

    /// The oldest question nobody dismissed, if no box is open.
    fn pop_next_question(&mut self) {
        if !self.steer.prefs.auto_popup || self.steer.modal() {
            return;
        }
        let next = self
            .store
            .interrupts()
            .into_iter()
            .find(|t| {
                *t.state() == TaskState::InputRequired
                    && !self.steer.dismissed.contains(&(t.key.clone(), t.state_since))
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
        if self.steer.answer.as_mut().is_some_and(|b| b.settle(&self.store)) {
            if let Some(answered) = self.steer.answer.take() {
                // Answered: this question does not pop up again while the agent takes it in.
                self.steer.dismissed.insert((answered.key, answered.asked.1));
            }
            self.flash("answer sent", false);
        }
        if let Some(b) = self.steer.answer.as_mut() {
            b.notice_if_moved_on(&self.store);
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

    fn report(&mut self, id: ActionId) {
        let Some(reported) = self.steer.reported.remove(&id) else {
            return;
        };
        match self.store.action(id).cloned() {
            Some(ActionOutcome::Done { .. }) => self.flash(format!("{}: done", reported.what), false),
            Some(ActionOutcome::Failed { message }) => {
                self.flash(format!("{}: {}", reported.what, one_line(&message)), true);
            }
            None => {
                self.steer.reported.insert(id, reported);
            }
        }
    }

    fn settle_new_task(&mut self) {
        let Some(form) = &mut self.steer.new_task else { return };
        let Some(action) = form.sending else { return };
        match self.store.action(action) {
            Some(ActionOutcome::Done { task }) => {
                let key = task.as_ref().map(|id| TaskKey {
                    agent: form.agent,
                    id: id.as_str().into(),
                });
                self.steer.new_task = None;
                if let Some(key) = key {
                    self.selected = Some(key);
                }
                self.flash("task started", false);
            }
            Some(ActionOutcome::Failed { message }) => {
                form.error = Some(format!("{} · ⏎ retries", one_line(message)));
                form.sending = None;
            }
            None => {}
        }
    }

    /// Keys while a box is open. True if a box took the key.
    pub fn on_modal_key(&mut self, key: KeyEvent) -> bool {
        // Ctrl-C quits from anywhere; every other key belongs to the box.
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return true;
        }
        if let Some(confirm) = self.steer.confirm.clone() {
            match key.code {
                KeyCode::Char('y' | 'Y') => self.confirmed(confirm, true),
                KeyCode::Char('n' | 'N') => self.confirmed(confirm, false),
                KeyCode::Esc => {}
                _ => return true,
            }
            self.steer.confirm = None;
            return true;
        }
        if self.steer.answer.is_some() {
            self.on_answer_key(key);
            return true;
        }
        if self.steer.new_task.is_some() {
            self.on_new_task_key(key);
            return true;
        }
        if let Some(i) = self.steer.inbox {
            let waiting: Vec<TaskKey> = self.store.interrupts().iter().map(|t| t.key.clone()).collect();
            match key.code {
                KeyCode::Up | KeyCode::Char('k') => self.steer.inbox = Some(i.saturating_sub(1)),
                KeyCode::Down | KeyCode::Char('j') => {
                    self.steer.inbox = Some((i + 1).min(waiting.len().saturating_sub(1)));
                }
                KeyCode::Enter => {
                    self.steer.inbox = None;
                    if let Some(k) = waiting.get(i) {
                        self.selected = Some(k.clone());
                        self.open_answer(k);
                    }
                }
                KeyCode::Esc | KeyCode::Char('q' | 'i') => self.steer.inbox = None,
                _ => {}
            }
            return true;
        }
        false
    }

    fn on_answer_key(&mut self, key: KeyEvent) {
        let newline = key.modifiers.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Esc => {
                // Later: the question stays in the inbox, and the ones waiting now do not pop up.
                for t in self.store.interrupts() {
                    if *t.state() == TaskState::InputRequired {
                        self.steer.dismissed.insert((t.key.clone(), t.state_since));
                    }
                }
                self.steer.answer = None;
            }
            KeyCode::Enter if !newline => {
                let Some(boxed) = self.steer.answer.as_mut() else {
                    return;
                };
                if let Submit::Send(request) = boxed.submit(&self.store) {
                    let agent = boxed.key.agent;
                    let action = self.send(agent, *request);
                    if let Some(b) = self.steer.answer.as_mut() {
                        b.sending = Some(action);
                    }
                }
            }
            KeyCode::Enter => {
                if let Some(b) = self.steer.answer.as_mut() {
                    b.editor.insert_newline();
                }
            }
            _ => {
                if let Some(b) = self.steer.answer.as_mut() {
                    b.editor.input(key);
                    b.error = None;
                }
            }
        }
    }

    fn on_new_task_key(&mut self, key: KeyEvent) {
        let agents = self.store.agents.len().max(1);
        let Some(form) = self.steer.new_task.as_mut() else {
            return;
        };
        let newline = key.modifiers.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT);
        match (key.code, form.field) {
            (KeyCode::Esc, _) => self.steer.new_task = None,
            (KeyCode::Tab, _) => form.next_field(),
            (KeyCode::Left, NewTaskField::Agent) => form.agent = (form.agent + agents - 1) % agents,
            (KeyCode::Right, NewTaskField::Agent) => form.agent = (form.agent + 1) % agents,
            (KeyCode::Enter, NewTaskField::Message) if newline => form.message.insert_newline(),
            (KeyCode::Enter, _) => self.submit_new_task(),
            (_, NewTaskField::Message) => {
                form.message.input(key);
            }
            (_, NewTaskField::Context) => {
                form.context.input(key);
            }
            _ => {}
        }
    }

    fn submit_new_task(&mut self) {
        let Some(form) = self.steer.new_task.as_mut() else {
            return;
        };
        if form.sending.is_some() {
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
        if let Some(form) = self.steer.new_task.as_mut() {
            form.sending = Some(action);
        }
    }

    /// Pasted text goes to the box that has the focus.
    pub fn on_paste(&mut self, text: &str) -> bool {
        if let Some(b) = self.steer.answer.as_mut() {
            b.editor.insert_str(text);
            return true;
        }
        if let Some(form) = self.steer.new_task.as_mut() {
            match form.field {
                NewTaskField::Message => form.message.insert_str(text),
                NewTaskField::Context => form.context.insert_str(text.lines().next().unwrap_or("")),
                NewTaskField::Agent => false,
            };
            return true;
        }
        false
    }

    fn confirmed(&mut self, confirm: Confirm, yes: bool) {
        let key = confirm.key().clone();
        let agent = self.store.agent_name(key.agent).to_string();
        match confirm {
            Confirm::Cancel { .. } if yes => {
                let action = self.action_id();
                self.steer.outbox.push((
                    key.agent,
                    Command::Cancel {
                        action,
                        task: key.id.to_string(),
                    },
                ));
                let what = format!("cancel {} on {}", super::format::short_id(&key.id), one_line(&agent));
                self.steer.reported.insert(action, Reported { what });
            }
            Confirm::Cancel { .. } => {}
            Confirm::Approve { approved, .. } if yes => self.answer_interaction(&key, Answer::Approved(approved)),
            Confirm::Approve { .. } => {}
            Confirm::Connection { .. } => self.answer_interaction(&key, Answer::Connected(yes)),
        }
    }

    fn answer_interaction(&mut self, key: &TaskKey, answer: Answer) {
        let Some(task) = self.store.task(key) else { return };
        let Some(interaction) = task.status.message.as_ref().and_then(Interaction::of) else {
            return self.flash("the task no longer has an open interaction; nothing sent", true);
        };
        if task.class() != StateClass::Interrupted {
            return self.flash(
                format!("no longer waiting (now {}); nothing sent", task.state().short_name()),
                true,
            );
        }
        let snapshot = crate::a2a::Task {
            id: key.id.to_string(),
            context_id: task.context.clone(),
            ..Default::default()
        };
        // The answer's messageId is its idempotency key (third seed): one per interaction.
        let message_id = format!("answer:{}", interaction.id);
        let message = interactions::answer(&snapshot, &interaction, &answer, &message_id);
        let what = match answer {
            Answer::Approved(true) => "approve",
            Answer::Approved(false) => "deny",
            Answer::Connected(true) => "connected",
            Answer::Connected(false) => "not connected",
            Answer::Value(_) => "answer",
        };
        let subject = interaction.subject().unwrap_or(interaction.prompt);
        let action = self.send(
            key.agent,
            SendMessageRequest {
                message,
                ..Default::default()
            },
        );
        self.steer.reported.insert(
            action,
            Reported {
                what: format!("{what} {}", one_line(&subject)),
            },
        );
    }

    /// `a` and `d` on an approval; on a connection request `a` asks "connected?".
    pub fn ask_approval(&mut self, approved: bool) {
        let Some(key) = self.target_approval() else {
            return self.flash("no approval is waiting", true);
        };
        let kind = self
            .store
            .task(&key)
            .and_then(|t| t.status.message.as_ref())
            .and_then(Interaction::of)
            .map(|i| i.kind);
        self.steer.confirm = match kind {
            Some(Kind::Approval) => Some(Confirm::Approve { key, approved }),
            Some(Kind::Connection) => Some(Confirm::Connection { key }),
            // Out-of-band approvals travel outside A2A: open or copy the link instead.
            _ => {
                return self.flash(
                    "this approval happens outside A2A: o opens its link, y copies it",
                    false,
                );
            }
        };
    }

    pub fn ask_cancel(&mut self) {
        match self.selected_task() {
            Some(t) if !t.state().is_terminal() => self.steer.confirm = Some(Confirm::Cancel { key: t.key.clone() }),
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
        self.steer.new_task = Some(NewTask::new(agent, &context));
    }

    /// The first link of the target approval: opened, or copied. Never sent to the agent.
    pub fn link_effect(&mut self, open: bool) {
        let link = self
            .target_approval()
            .and_then(|k| self.store.task(&k))
            .and_then(|t| t.status.message.as_ref())
            .and_then(|m| m.links().into_iter().next());
        match link {
            Some(link) if open => {
                self.flash(format!("opening {}", one_line(&link)), false);
                self.steer.effects.push(Effect::Open(link));
            }
            Some(link) => {
                self.flash(format!("copied {}", one_line(&link)), false);
                self.steer.effects.push(Effect::Copy(link));
            }
            None => self.flash("no link in the selected approval", true),
        }
    }

    pub fn reply_to_selected(&mut self) {
        match self.selected_task().map(|t| (t.key.clone(), t.class())) {
            Some((key, StateClass::Interrupted)) => self.open_answer(&key),
            _ => self.flash("the selected task is not waiting for anything", true),
        }
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
