//! What the user asks of the agents, from the keys: answer, approve or deny, cancel, start a
//! task, open or copy a link. Each opens the box that asks first, or leaves as a command in the
//! outbox (`steer`), checked once more against the store at the moment it leaves.

use super::answer::{AnswerBox, Question, Submit};
use super::dialogs::{Ask, Confirm, LinkPick, NewTask};
use super::effects::{Effect, is_web_link};
use super::keys::Action;
use super::popup::Popup;
use super::steer::Confirmed;
use super::{App, Pane};
use crate::a2a::interactions::{self, Answer};
use crate::a2a::{Message, Part, SendMessageRequest, StateClass, TaskState};
use crate::event::{ActionId, Command};
use crate::store::TaskKey;
use crate::text::one_line;

impl App {
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
        let message = interactions::reply(&key.id, &task.context, &task.status_as_sent(), &answer, None)?;
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
            Some(t) => (t.key.agent, t.context.to_string()),
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
            .map(super::effects::links)
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
