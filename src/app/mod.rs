//! The running dashboard: its state (the store, the view over it, the selection, the popups),
//! the loop that feeds it (`run`), the keys that become actions (`keys`), and the steering that
//! turns what the user asks for into `event::Command`s (`steer`). `ui` draws it and only reads.

pub mod answer;
pub mod dialogs;
pub mod effects;
pub mod keys;
mod run;
pub mod steer;

pub use run::{on_terminal_event, run};

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::store::query::{Filter, OrderedView, ViewSpec};
use crate::store::{Journal, Store, TaskEntry, TaskKey};
use crate::ui::theme::Theme;
use keys::{Action, KeyMap};
use steer::Steer;

/// What sits on top of the main screen; the top one gets the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help,
    /// The detail pane of one task, scrolled by `scroll` lines.
    Detail {
        key: TaskKey,
        scroll: usize,
    },
    /// The filter being typed.
    Filter {
        input: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Tasks,
    Approvals,
}

pub struct App {
    pub store: Store,
    pub spec: ViewSpec,
    pub keys: KeyMap,
    pub theme: Theme,
    /// The selected task; the selection follows the task, not the row number.
    pub selected: Option<TaskKey>,
    /// First visible row of the table.
    pub offset: usize,
    /// Rows the table shows at once (set from the layout before each draw).
    pub page: usize,
    pub overlays: Vec<Overlay>,
    pub focus: Focus,
    pub approval: usize,
    pub frozen: Option<Frozen>,
    /// The time the view is drawn at; set by the loop, fixed in tests.
    pub now: Timestamp,
    /// The zone wall-clock times are shown in: the system's, fixed in tests.
    pub tz: TimeZone,
    pub quit: bool,
    /// Answers, approvals, cancels, new tasks: what the user asked of the agents.
    pub steer: Steer,
    /// The rows of the view, kept in order as tasks change (never re-sorted whole per frame).
    view: OrderedView,
}

/// The table as it was when the user froze it.
#[derive(Debug, Clone)]
pub struct Frozen {
    pub rows: Vec<TaskKey>,
    /// How many tasks the store held then (tasks are never removed, so the difference is what is
    /// new).
    pub held: usize,
}

impl App {
    pub fn new(store: Store, keys: KeyMap, theme: Theme) -> App {
        App {
            store,
            spec: ViewSpec::default(),
            keys,
            theme,
            selected: None,
            offset: 0,
            page: 10,
            overlays: Vec::new(),
            focus: Focus::Tasks,
            approval: 0,
            frozen: None,
            now: Timestamp::now(),
            tz: TimeZone::system(),
            quit: false,
            steer: Steer::default(),
            view: OrderedView::default(),
        }
    }

    /// Brings the rows up to date: only the tasks that changed move, unless the view itself
    /// changed (sort, filter) or too much did.
    pub fn refresh(&mut self) {
        match self.store.take_journal() {
            Journal::Changed(keys) if *self.view.spec() == self.spec => self.view.update(&self.store, &keys),
            _ => self.view = OrderedView::build(&self.store, &self.spec),
        }
        if self.selected.as_ref().is_none_or(|k| self.store.task(k).is_none()) {
            self.selected = self.row(0).cloned();
        }
        self.keep_selection_visible();
    }

    pub fn row_count(&self) -> usize {
        match &self.frozen {
            Some(frozen) => frozen.rows.len(),
            None => self.view.len(),
        }
    }

    /// The rows from `offset` on: the frozen ones while frozen.
    pub fn rows_from(&self, offset: usize) -> Box<dyn Iterator<Item = &TaskKey> + '_> {
        match &self.frozen {
            Some(frozen) => Box::new(frozen.rows.iter().skip(offset)),
            None => Box::new(self.view.from(offset)),
        }
    }

    pub fn row(&self, i: usize) -> Option<&TaskKey> {
        self.rows_from(i).next()
    }

    /// Every row, in order (walks them all: for freezing and tests, not for frames).
    pub fn rows(&self) -> Vec<TaskKey> {
        self.rows_from(0).cloned().collect()
    }

    /// Tasks that appeared since the table was frozen.
    pub fn new_since_freeze(&self) -> usize {
        match &self.frozen {
            Some(frozen) => self.store.len().saturating_sub(frozen.held),
            None => 0,
        }
    }

    pub fn selected_index(&self) -> Option<usize> {
        let key = self.selected.as_ref()?;
        match &self.frozen {
            Some(frozen) => frozen.rows.iter().position(|k| k == key),
            None => self.view.position(key),
        }
    }

    pub fn selected_task(&self) -> Option<&TaskEntry> {
        self.selected.as_ref().and_then(|k| self.store.task(k))
    }

    /// The `i`-th approval of the pane.
    pub fn approval_at(&self, i: usize) -> Option<&TaskEntry> {
        self.store.approvals_from(i).next()
    }

    fn keep_selection_visible(&mut self) {
        let len = self.row_count();
        let page = self.page.max(1);
        match self.selected_index() {
            Some(i) if i < self.offset => self.offset = i,
            Some(i) if i >= self.offset + page => self.offset = i + 1 - page,
            _ => {}
        }
        self.offset = self.offset.min(len.saturating_sub(page));
    }

    fn select_index(&mut self, i: usize) {
        if let Some(k) = self.row(i).cloned() {
            self.selected = Some(k);
        }
        self.keep_selection_visible();
    }

    fn move_by(&mut self, delta: isize) {
        let len = self.row_count();
        if len == 0 {
            return;
        }
        let current = self.selected_index().unwrap_or(0) as isize;
        self.select_index((current + delta).clamp(0, len as isize - 1) as usize);
    }

    /// Selects the row at a screen position inside the table body (mouse click).
    pub fn click_row(&mut self, visible_row: usize) {
        self.select_index(self.offset + visible_row);
    }

    /// A typed character or edit while the filter box is open. Returns false if it was no edit.
    pub fn edit_filter(&mut self, edit: FilterEdit) -> bool {
        let Some(Overlay::Filter { input }) = self.overlays.last_mut() else {
            return false;
        };
        match edit {
            FilterEdit::Char(c) => input.push(c),
            FilterEdit::Backspace => {
                input.pop();
            }
        }
        self.spec.filter = Filter::parse(input);
        true
    }

    pub fn handle(&mut self, action: Action) {
        match self.overlays.last().cloned() {
            Some(Overlay::Help) => match action {
                Action::Quit => self.quit = true,
                _ => {
                    self.overlays.pop();
                }
            },
            Some(Overlay::Detail { key, scroll }) => {
                let scroll = match action {
                    Action::Up => scroll.saturating_sub(1),
                    Action::Down => scroll + 1,
                    Action::PageUp => scroll.saturating_sub(self.page.max(1)),
                    Action::PageDown => scroll + self.page.max(1),
                    Action::Top => 0,
                    Action::Bottom => usize::MAX / 2,
                    Action::Quit => {
                        self.quit = true;
                        scroll
                    }
                    Action::Help => {
                        self.overlays.push(Overlay::Help);
                        return;
                    }
                    _ => {
                        self.overlays.pop();
                        return;
                    }
                };
                if let Some(top) = self.overlays.last_mut() {
                    *top = Overlay::Detail { key, scroll };
                }
            }
            Some(Overlay::Filter { .. }) => match action {
                // Enter keeps the filter, Esc drops it.
                Action::Details => {
                    self.overlays.pop();
                }
                Action::Back => {
                    self.overlays.pop();
                    self.spec.filter = Filter::default();
                }
                _ => {}
            },
            None => self.handle_main(action),
        }
    }

    fn handle_main(&mut self, action: Action) {
        let approvals = self.store.approval_count();
        let in_approvals = self.focus == Focus::Approvals && approvals > 0;
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.overlays.push(Overlay::Help),
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
                    self.overlays.push(Overlay::Detail { key, scroll: 0 });
                }
            }
            Action::Back => {
                if self.frozen.is_some() {
                    self.frozen = None;
                } else if !self.spec.filter.is_empty() {
                    self.spec.filter = Filter::default();
                }
            }
            Action::Filter => self.overlays.push(Overlay::Filter {
                input: self.spec.filter.text().to_string(),
            }),
            Action::Sort => self.spec.sort = self.spec.sort.next(),
            Action::ToggleTerminal => self.spec.hide_terminal = !self.spec.hide_terminal,
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
                self.focus = match self.focus {
                    Focus::Tasks if approvals > 0 => Focus::Approvals,
                    _ => Focus::Tasks,
                };
            }
            Action::Inbox => self.steer.inbox = Some(0),
            Action::Reply => self.reply_to_selected(),
            Action::Approve => self.ask_approval(true),
            Action::Deny => self.ask_approval(false),
            Action::OpenLink => self.link_effect(true),
            Action::CopyLink => self.link_effect(false),
            Action::Cancel => self.ask_cancel(),
            Action::NewTask => self.open_new_task(),
            Action::None => {}
        }
        self.approval = self.approval.min(approvals.saturating_sub(1));
        self.refresh();
    }

    pub fn sort_label(&self) -> &'static str {
        self.spec.sort.label()
    }
}

pub enum FilterEdit {
    Char(char),
    Backspace,
}
