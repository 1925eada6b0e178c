//! Keys, paste and mouse become actions: the top popup's key map reads the key (`keys::Mode`),
//! and the top popup acts on it (`popup::Behaviour`); with no popup, the main screen does. Keys a
//! text box's map does not name are typed into it.

use crossterm::event::{Event as TermEvent, KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::effects::Effect;
use super::keys::Action;
use super::popup::agents::AgentsView;
use super::popup::detail::Detail;
use super::popup::filter::Filter;
use super::popup::help::Help;
use super::popup::inbox::Inbox;
use super::{App, Frozen, Pane};
use crate::store::query::Filter as Query;

/// Applies one terminal event; true if the screen may have changed. A key, a paste, a click or
/// the wheel also holds a question's box until the keyboard rests (`steer::HOLD`).
pub fn on_terminal_event(app: &mut App, ev: TermEvent) -> bool {
    let by_hand = match &ev {
        TermEvent::Key(key) => key.kind != KeyEventKind::Release,
        TermEvent::Paste(_) => true,
        TermEvent::Mouse(m) => m.kind != MouseEventKind::Moved,
        _ => false,
    };
    let changed = match ev {
        TermEvent::Key(key) if key.kind != KeyEventKind::Release => app.on_key(key),
        TermEvent::Paste(text) => app.on_paste(&text),
        TermEvent::Mouse(m) => app.on_mouse(m),
        TermEvent::Resize(..) => true,
        _ => false,
    };
    if !by_hand {
        return changed;
    }
    let held = app.held_question().cloned();
    app.on_input();
    changed || app.held_question() != held.as_ref()
}

impl App {
    /// One key press, read by the key map of the mode the keyboard is in.
    pub fn on_key(&mut self, key: KeyEvent) -> bool {
        match self.keys.action(self.mode(), &key).filter(|a| !self.is_typing(*a)) {
            Some(action) => {
                self.handle(action);
                true
            }
            None => self.popup_other_key(key),
        }
    }

    /// An action in the mode the keyboard is in.
    pub fn handle(&mut self, action: Action) {
        if action == Action::Quit {
            self.quit = true;
            return;
        }
        self.popup_action(action);
    }

    /// Pasted text goes to the box or filter on top.
    pub fn on_paste(&mut self, text: &str) -> bool {
        self.popup_paste(text)
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

    /// A click in a pane: it takes the focus, and a table row is selected; on the agents, the
    /// agents view opens.
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
            // The agents' row or strip: all of them, in the agents view.
            Pane::Agents => {
                self.push(AgentsView::default());
                true
            }
            Pane::Title | Pane::Footer => false,
        }
    }

    pub(super) fn handle_main(&mut self, action: Action) {
        let approvals = self.store.approval_count();
        let in_approvals = self.focus == Pane::Approvals && approvals > 0;
        let in_tree = self.tree.shown && !in_approvals && self.tree_action(action);
        match action {
            _ if in_tree => {}
            Action::Help => self.push(Help { page: 0 }),
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
                    self.push(Detail::new(key));
                }
            }
            Action::Back => {
                if self.frozen.is_some() {
                    self.frozen = None;
                } else if !self.spec.filter.is_empty() {
                    self.spec.filter = Query::default();
                }
            }
            Action::Filter => self.push(Filter {
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
            Action::Inbox => self.push(Inbox { selected: 0 }),
            Action::Agents => self.push(AgentsView::default()),
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
