//! What the user asks of the agents, from the keys: answer, approve or deny, cancel, start a
//! task, open or copy a link. Each opens the box that asks first, or leaves as a command in the
//! outbox (`steer`), checked once more against the store at the moment it leaves.

use super::effects::{Effect, is_web_link};
use super::keys::Action;
use super::popup::answer::{AnswerBox, Question};
use super::popup::confirm::{Ask, Confirm};
use super::popup::new_task::NewTask;
use super::popup::pick::LinkPick;
use super::{App, Pane};
use crate::a2a::{StateClass, TaskState};
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
            self.push(boxed);
        }
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
        self.push(NewTask::new(agent, &context));
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
                self.push(LinkPick {
                    links: web,
                    open,
                    selected: 0,
                });
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

    /// The selected task's box; else the box of the question held while the person typed,
    /// which the footer offers on this key.
    pub fn reply_to_selected(&mut self) {
        match self.selected_task().map(|t| (t.key.clone(), t.class())) {
            Some((key, StateClass::Interrupted)) => self.open_answer(&key),
            _ => match self.held_question().cloned() {
                Some(key) => self.open_answer(&key),
                None => self.flash("the selected task is not waiting for anything", true),
            },
        }
    }
}
