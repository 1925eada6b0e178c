//! The running dashboard: its state (the store, the view over it, the selection, the popups),
//! what the loop (`crate::run`) feeds it (events, keys, the layout of each frame), the keys that become actions (`keys`), and the steering that
//! turns what the user asks for into `event::Command`s (`steer`). `ui` draws it and only reads.

mod access;
mod act;
pub mod effects;
mod input;
pub mod keys;
mod layout;
pub mod popup;
pub mod steer;
pub mod tree;

pub use input::on_terminal_event;
pub use layout::{Areas, ScreenLayout};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use ratatui::layout::Rect;

use crate::store::query::{OrderedView, ViewSpec};
use crate::store::{Journal, Store, TaskEntry, TaskKey};
use crate::theme::Theme;
use crate::traces::ExportStatus;
use keys::KeyMap;
use popup::detail::Detail;
use popup::{Member, Popup};
use steer::Steer;
use tree::TreeView;

/// The parts of the main screen, top to bottom. `ui::view::layout` lays them out, `ui::view::draw`
/// draws each, and a click goes to the pane under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Title,
    Agents,
    Tasks,
    Approvals,
    Footer,
}

impl Pane {
    /// The panes Tab moves between, in order (those on screen).
    pub const FOCUSABLE: [Pane; 2] = [Pane::Tasks, Pane::Approvals];
}

/// The dashboard's state. Its fields are the app's own: the drawing reads them and the loop
/// sets the clock through the narrow methods of `access`.
pub struct App {
    store: Store,
    spec: ViewSpec,
    keys: KeyMap,
    theme: Theme,
    /// The selected task; the selection follows the task, not the row number.
    selected: Option<TaskKey>,
    /// First visible row of the table.
    offset: usize,
    /// Rows the table shows at once (set from the layout before each draw).
    page: usize,
    /// Lines PgUp/PgDn move the detail pane: what it shows at once less one, kept as context.
    /// Set from the layout before each draw like `page`, so the keys move by what the person
    /// sees and drawing stays a pure function of the state.
    detail_page: usize,
    /// The screen the last frame was laid out on.
    screen: Rect,
    /// Where the last frame put each pane: clicks are read against them.
    areas: Areas,
    /// The popups, bottom to top: the top one gets the keys (`popup`).
    popups: Vec<Popup>,
    /// The pane the moves act on.
    focus: Pane,
    approval: usize,
    frozen: Option<Frozen>,
    /// The time the view is drawn at; set by the loop, fixed in tests.
    now: Timestamp,
    /// The zone wall-clock times are shown in: the system's, fixed in tests.
    tz: TimeZone,
    quit: bool,
    /// Answers, approvals, cancels, new tasks: what the user asked of the agents.
    steer: Steer,
    /// The rows of the view, kept in order as tasks change (never re-sorted whole per frame).
    view: OrderedView,
    /// The delegation tree, shown in the table's place when asked for.
    tree: TreeView,
    /// Shown on the title line (a replay's clock).
    banner: Option<String>,
    /// How the traces export goes, with `--otlp`: a warning on the title, a count on the footer.
    export: Option<ExportStatus>,
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
            detail_page: 10,
            screen: Rect::new(0, 0, 80, 24),
            areas: Areas::default(),
            popups: Vec::new(),
            focus: Pane::Tasks,
            approval: 0,
            frozen: None,
            now: Timestamp::now(),
            tz: TimeZone::system(),
            quit: false,
            steer: Steer::default(),
            view: OrderedView::default(),
            tree: TreeView::default(),
            banner: None,
            export: None,
        }
    }

    /// Brings the rows up to date: only the tasks that changed move, unless the view itself
    /// changed (sort, filter) or too much did.
    pub fn refresh(&mut self) {
        let journal = self.store.take_journal();
        match &journal {
            Journal::Changed(keys) if *self.view.spec() == self.spec => self.view.update(&self.store, keys),
            _ => self.view = OrderedView::build(&self.store, &self.spec),
        }
        if self.tree.shown {
            self.refresh_tree(&journal);
        } else {
            if self.selected.as_ref().is_none_or(|k| self.store.task(k).is_none()) {
                self.selected = self.row(0).cloned();
            }
            self.keep_selection_visible();
        }
    }

    /// Puts another store in place of this one (a replay going back in time): every view is
    /// built afresh from it.
    pub fn replace_store(&mut self, store: Store) {
        self.store = store;
        self.store.take_journal();
        self.frozen = None;
        self.view = OrderedView::build(&self.store, &self.spec);
        self.tree.stale = true;
        self.refresh();
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
        if self.tree.shown {
            self.tree_select(self.tree.offset + visible_row);
            return;
        }
        self.select_index(self.offset + visible_row);
    }

    /// Before each draw, with the frame's layout (`ui::view::layout`): it sets the page sizes and
    /// the click targets, the rows are brought up to date, and the detail pane's scroll is kept
    /// inside its text.
    pub fn prepare(&mut self, layout: ScreenLayout) {
        self.screen = layout.screen;
        self.page = layout.areas.page();
        self.detail_page = layout.detail_lines.saturating_sub(1).max(1);
        self.areas = layout.areas;
        self.refresh();
        if let (Some(max), Some(detail)) = (layout.detail_max_scroll, Detail::top_mut(&mut self.popups)) {
            detail.scroll = detail.scroll.min(max);
        }
    }

    pub fn sort_label(&self) -> &'static str {
        self.spec.sort.label()
    }
}
