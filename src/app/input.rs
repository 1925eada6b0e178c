//! Keys, paste and mouse become actions: the top popup's key map reads the key (`keys::Mode`),
//! and the top popup acts on it; with no popup, the main screen does. Keys a text box's map
//! does not name are typed into it.

use crossterm::event::{Event as TermEvent, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::dialogs::NewTaskField;
use super::effects::Effect;
use super::keys::Action;
use super::popup::Popup;
use super::{App, Frozen, Pane};
use crate::store::TaskKey;
use crate::store::query::Filter;

/// How many pages the help overlay has: the main screen's keys, and the popups' keys.
const HELP_PAGES: usize = 2;

/// Applies one terminal event; true if the screen may have changed.
pub fn on_terminal_event(app: &mut App, ev: TermEvent) -> bool {
    match ev {
        TermEvent::Key(key) if key.kind != KeyEventKind::Release => app.on_key(key),
        TermEvent::Paste(text) => app.on_paste(&text),
        TermEvent::Mouse(m) => app.on_mouse(m),
        TermEvent::Resize(..) => true,
        _ => false,
    }
}

impl App {
    /// One key press, read by the key map of the mode the keyboard is in.
    pub fn on_key(&mut self, key: KeyEvent) -> bool {
        let action = self.keys.action(self.mode(), &key).filter(|a| !self.is_typing(*a));
        match (action, self.top()) {
            (Some(action), _) => {
                self.handle(action);
                true
            }
            (None, Some(Popup::Answer(_) | Popup::NewTask(_) | Popup::Filter { .. })) => {
                self.type_key(key);
                true
            }
            // Any key closes the help.
            (None, Some(Popup::Help { .. })) => {
                self.pop();
                true
            }
            // A box takes every key, even one it does nothing with.
            (None, Some(popup)) => popup.is_box(),
            (None, None) => false,
        }
    }

    /// The keys that choose the agent in the new-task form move the cursor in its text fields.
    fn is_typing(&self, action: Action) -> bool {
        matches!(action, Action::PreviousAgent | Action::NextAgent)
            && matches!(self.top(), Some(Popup::NewTask(form)) if form.field != NewTaskField::Agent)
    }

    /// An action in the mode the keyboard is in.
    pub fn handle(&mut self, action: Action) {
        if action == Action::Quit {
            self.quit = true;
            return;
        }
        match self.popups.last_mut() {
            None => self.handle_main(action),
            Some(Popup::Help { page }) => match action {
                Action::NextPage => *page = (*page + 1) % HELP_PAGES,
                Action::PreviousPage => *page = (*page + HELP_PAGES - 1) % HELP_PAGES,
                _ => {
                    self.pop();
                }
            },
            Some(Popup::Detail { scroll, .. }) => {
                let page = self.detail_page;
                match action {
                    Action::Up => *scroll = scroll.saturating_sub(1),
                    Action::Down => *scroll += 1,
                    Action::PageUp => *scroll = scroll.saturating_sub(page),
                    Action::PageDown => *scroll += page,
                    Action::Top => *scroll = 0,
                    Action::Bottom => *scroll = usize::MAX / 2,
                    Action::Help => self.push(Popup::Help { page: 0 }),
                    _ => {
                        self.pop();
                    }
                }
            }
            Some(Popup::Filter { input }) => match action {
                // Enter keeps the filter, Esc drops it.
                Action::Details => {
                    self.pop();
                }
                Action::Back => {
                    self.pop();
                    self.spec.filter = Filter::default();
                }
                Action::DeleteBack => {
                    input.pop();
                    self.spec.filter = Filter::parse(input);
                    self.refresh();
                }
                _ => {}
            },
            Some(Popup::Inbox { selected }) => {
                let waiting: Vec<TaskKey> = self.store.interrupts().iter().map(|t| t.key.clone()).collect();
                match action {
                    Action::Up => *selected = selected.saturating_sub(1),
                    Action::Down => *selected = (*selected + 1).min(waiting.len().saturating_sub(1)),
                    Action::Details => {
                        let chosen = waiting.get(*selected).cloned();
                        self.pop();
                        if let Some(k) = chosen {
                            self.selected = Some(k.clone());
                            self.open_answer(&k);
                        }
                    }
                    Action::Back => {
                        self.pop();
                    }
                    _ => {}
                }
            }
            Some(Popup::Confirm(_)) => match action {
                Action::Yes => self.confirmed(true),
                Action::No => self.confirmed(false),
                Action::Back => self.close(|p| matches!(p, Popup::Confirm(_))),
                _ => {}
            },
            Some(Popup::Pick(pick)) => {
                let last = pick.links.len().min(9).saturating_sub(1);
                let chosen = match action {
                    Action::Choose(n) => Some(usize::from(n) - 1).filter(|i| *i <= last),
                    Action::Up => {
                        pick.selected = pick.selected.saturating_sub(1);
                        None
                    }
                    Action::Down => {
                        pick.selected = (pick.selected + 1).min(last);
                        None
                    }
                    Action::Details => Some(pick.selected),
                    Action::Back => {
                        self.pop();
                        None
                    }
                    _ => None,
                };
                if let Some(i) = chosen
                    && let Some(Popup::Pick(pick)) = self.pop()
                    && let Some(link) = pick.links.get(i)
                {
                    self.use_link(link.clone(), pick.open);
                }
            }
            Some(Popup::Answer(boxed)) => match action {
                Action::Send => self.send_answer(),
                Action::Newline => {
                    boxed.editor.insert_newline();
                }
                Action::Back => self.answer_later(),
                _ => {}
            },
            Some(Popup::NewTask(form)) => {
                let agents = self.store.agents.len().max(1);
                match (action, form.field) {
                    (Action::Back, _) => self.close(|p| matches!(p, Popup::NewTask(_))),
                    (Action::NextField, _) => form.next_field(),
                    (Action::PreviousAgent, NewTaskField::Agent) => form.agent = (form.agent + agents - 1) % agents,
                    (Action::NextAgent, NewTaskField::Agent) => form.agent = (form.agent + 1) % agents,
                    (Action::Newline, NewTaskField::Message) => form.message.insert_newline(),
                    (Action::Send | Action::Newline, _) => self.submit_new_task(),
                    _ => {}
                }
            }
        }
    }

    /// A key no map names, typed into the text box on top.
    fn type_key(&mut self, key: KeyEvent) {
        match self.popups.last_mut() {
            Some(Popup::Answer(boxed)) => {
                boxed.editor.input(key);
                boxed.error = None;
            }
            Some(Popup::NewTask(form)) => form.type_key(key),
            Some(Popup::Filter { input }) => {
                if let crossterm::event::KeyCode::Char(c) = key.code
                    && !key.modifiers.contains(KeyModifiers::CONTROL)
                {
                    input.push(c);
                    self.spec.filter = Filter::parse(input);
                    self.refresh();
                }
            }
            _ => {}
        }
    }

    /// Pasted text goes to the box or filter on top.
    pub fn on_paste(&mut self, text: &str) -> bool {
        match self.popups.last_mut() {
            Some(Popup::Answer(boxed)) => {
                boxed.editor.insert_str(text);
            }
            Some(Popup::NewTask(form)) => {
                match form.field {
                    NewTaskField::Message => form.message.insert_str(text),
                    NewTaskField::Context => form.context.insert_str(text.lines().next().unwrap_or("")),
                    NewTaskField::Agent => false,
                };
            }
            Some(Popup::Filter { input }) => {
                input.extend(text.chars().filter(|c| !c.is_control()));
                self.spec.filter = Filter::parse(input);
                self.refresh();
            }
            _ => return false,
        }
        true
    }

    /// The wheel moves in the mode the keyboard is in; a click selects a table row.
    fn on_mouse(&mut self, m: MouseEvent) -> bool {
        match m.kind {
            MouseEventKind::ScrollDown => self.handle(Action::Down),
            MouseEventKind::ScrollUp => self.handle(Action::Up),
            MouseEventKind::Down(_) if self.popups.is_empty() => {
                return match self.areas.at(m.column, m.row) {
                    Some((pane, area)) => self.click(pane, area, m.row),
                    None => false,
                };
            }
            _ => return false,
        }
        true
    }

    /// A click in a pane: it takes the focus, and a table row is selected.
    fn click(&mut self, pane: Pane, area: Rect, row: u16) -> bool {
        match pane {
            Pane::Tasks => {
                self.focus = Pane::Tasks;
                // Body rows start below the border and the header row.
                let first = area.y + 2;
                if row >= first && row < area.bottom().saturating_sub(1) {
                    self.click_row(usize::from(row - first));
                }
                true
            }
            Pane::Approvals => {
                self.focus = Pane::Approvals;
                true
            }
            Pane::Title | Pane::Agents | Pane::Footer => false,
        }
    }

    fn handle_main(&mut self, action: Action) {
        let approvals = self.store.approval_count();
        let in_approvals = self.focus == Pane::Approvals && approvals > 0;
        let in_tree = self.tree.shown && !in_approvals && self.tree_action(action);
        match action {
            _ if in_tree => {}
            Action::Help => self.push(Popup::Help { page: 0 }),
            Action::Up if in_approvals => self.approval = self.approval.saturating_sub(1),
            Action::Down if in_approvals => self.approval = (self.approval + 1).min(approvals - 1),
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-(self.page.max(1) as isize)),
            Action::PageDown => self.move_by(self.page.max(1) as isize),
            Action::Top => self.select_index(0),
            Action::Bottom => self.select_index(self.row_count().saturating_sub(1)),
            Action::Details => {
                let key = if in_approvals {
                    self.approval_at(self.approval).map(|t| t.key.clone())
                } else {
                    self.selected.clone()
                };
                if let Some(key) = key {
                    self.push(Popup::Detail { key, scroll: 0 });
                }
            }
            Action::Back => {
                if self.frozen.is_some() {
                    self.frozen = None;
                } else if !self.spec.filter.is_empty() {
                    self.spec.filter = Filter::default();
                }
            }
            Action::Filter => self.push(Popup::Filter {
                input: self.spec.filter.text().to_string(),
            }),
            Action::Sort => self.spec.sort = self.spec.sort.next(),
            Action::ToggleTerminal => self.spec.hide_terminal = !self.spec.hide_terminal,
            Action::ToggleTree => self.toggle_tree(),
            Action::Freeze => {
                self.frozen = match self.frozen.take() {
                    Some(_) => None,
                    None => Some(Frozen {
                        rows: self.rows(),
                        held: self.store.len(),
                    }),
                };
            }
            Action::FocusNext => {
                // The next focusable pane on screen (the approvals only while some wait).
                let on_screen: Vec<Pane> = (Pane::FOCUSABLE.into_iter())
                    .filter(|p| *p != Pane::Approvals || approvals > 0)
                    .collect();
                let at = on_screen.iter().position(|p| *p == self.focus).unwrap_or(0);
                self.focus = on_screen[(at + 1) % on_screen.len()];
                // The approvals take over the approval the table had selected, as the compact
                // strip showed it: focusing them does not jump to another.
                let followed = self.selected.as_ref().and_then(|k| self.store.approval_index(k));
                if let (Pane::Approvals, Some(i)) = (self.focus, followed) {
                    self.approval = i;
                }
            }
            Action::Inbox => self.push(Popup::Inbox { selected: 0 }),
            Action::Reply => self.reply_to_selected(),
            Action::Approve => self.ask_approval(true),
            Action::Deny => self.ask_approval(false),
            Action::Screenshot => self.steer.effects.push(Effect::Screenshot),
            Action::OpenLink => self.link_effect(true),
            Action::CopyLink => self.link_effect(false),
            Action::Cancel => self.ask_cancel(),
            Action::NewTask => self.open_new_task(),
            _ => {}
        }
        self.approval = self.approval.min(approvals.saturating_sub(1));
        self.refresh();
    }
}
