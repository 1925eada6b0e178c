//! The narrow doors into the `App`: what the drawing (`ui`) and the loop (`run`) read, and the
//! few things the loop and the front ends set (the clock, the banner, the preferences, the view),
//! so the state itself stays private to `app` and changes only through its update functions.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use ratatui::layout::Rect;

use super::effects::Effect;
use super::keys::KeyMap;
use super::steer::{Prefs, Steer};
use super::tree::TreeView;
use super::{App, Frozen, Pane};
use crate::event::{AgentId, Command};
use crate::store::query::ViewSpec;
use crate::store::{Store, TaskKey};
use crate::theme::Theme;
use crate::traces::ExportStatus;

impl App {
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// For the loop, the one writer of the store: it applies the engine's events (and records
    /// them), then hands the changes to `on_changes`.
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The view: sort, filter, whether finished tasks are hidden.
    pub fn spec(&self) -> &ViewSpec {
        &self.spec
    }

    /// Shows another view (the rows follow at the next `refresh`).
    pub fn set_spec(&mut self, spec: ViewSpec) {
        self.spec = spec;
    }

    pub fn keys(&self) -> &KeyMap {
        &self.keys
    }

    /// Reads keys with another map (a config's, as `App::new` would have).
    pub fn set_keys(&mut self, keys: KeyMap) {
        self.keys = keys;
    }

    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// The selected task; the selection follows the task, not the row number.
    pub fn selected(&self) -> Option<&TaskKey> {
        self.selected.as_ref()
    }

    /// Selects a task (the table scrolls to it at the next `refresh`).
    pub fn select(&mut self, key: TaskKey) {
        self.selected = Some(key);
    }

    /// First visible row of the table.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The screen the last frame was laid out on.
    pub fn screen(&self) -> Rect {
        self.screen
    }

    /// The pane the moves act on.
    pub fn focus(&self) -> Pane {
        self.focus
    }

    /// The selected row of the approvals pane.
    pub fn approval(&self) -> usize {
        self.approval
    }

    /// The table as it was frozen, while it is.
    pub fn frozen(&self) -> Option<&Frozen> {
        self.frozen.as_ref()
    }

    /// The time the view is drawn at.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The loop's clock (a replay's, or fixed in tests) moved.
    pub fn set_now(&mut self, now: Timestamp) {
        self.now = now;
    }

    /// The zone wall-clock times are shown in.
    pub fn tz(&self) -> &TimeZone {
        &self.tz
    }

    /// The system's zone by default; fixed in tests and screenshots of recordings.
    pub fn set_tz(&mut self, tz: TimeZone) {
        self.tz = tz;
    }

    /// Did the person ask to quit?
    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// What the user asked of the agents and what became of it (read-only: it changes through
    /// the keys and `on_changes`).
    pub fn steer(&self) -> &Steer {
        &self.steer
    }

    pub fn set_prefs(&mut self, prefs: Prefs) {
        self.steer.prefs = prefs;
    }

    /// The commands for the engine, taken by the loop.
    pub fn take_outbox(&mut self) -> Vec<(AgentId, Command)> {
        std::mem::take(&mut self.steer.outbox)
    }

    /// The terminal side effects, carried out by the loop.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.steer.effects)
    }

    /// The delegation tree, shown in the table's place when asked for.
    pub fn tree(&self) -> &TreeView {
        &self.tree
    }

    /// Shown on the title line (a replay's clock).
    pub fn banner(&self) -> Option<&str> {
        self.banner.as_deref()
    }

    pub fn set_banner(&mut self, banner: Option<String>) {
        self.banner = banner;
    }

    /// How the traces export goes; `None` without `--otlp`.
    pub fn export(&self) -> Option<ExportStatus> {
        self.export
    }

    pub fn set_export(&mut self, export: Option<ExportStatus>) {
        self.export = export;
    }
}
