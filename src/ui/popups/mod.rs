//! The popups, drawn over the main screen, bottom to top. Each draws in its own file, next to
//! nothing else: `ui/popups/<name>.rs` with `draw(frame, areas, app, state)`, its state and keys
//! in `app::popup::<name>` (the two are its home). The list in `app::popup::with_popups!`
//! registers both halves (the `mod` lines are written out so that rustfmt, which does not read
//! modules declared in macros, formats the files); the pieces more than one popup uses (centring, hint lines) are here.

mod agents;
mod answer;
mod confirm;
pub(super) mod detail;
pub(super) mod filter;
mod help;
mod inbox;
mod new_task;
mod pick;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::app::keys::{Action, KeyMap, Mode};
use crate::app::popup::{Popup, with_popups};
use crate::app::{App, Areas};

macro_rules! draw_popups {
    ($($module:ident: $variant:ident($state:ty) $(keys $mode:ident)?,)*) => {
        /// One popup over what is below it, by its home's `draw`.
        pub(super) fn draw(frame: &mut Frame, areas: &Areas, app: &App, popup: &Popup) {
            match popup {
                $(Popup::$variant(state) => $module::draw(frame, areas, app, state),)*
            }
        }
    };
}
with_popups!(draw_popups);

pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// "⏎ send · alt-⏎ new line": a popup's keys as its map has them, for its hint line.
pub(super) fn hints(keys: &KeyMap, mode: Mode, items: &[(Action, &str)]) -> String {
    let hints: Vec<String> = (items.iter())
        .map(|(action, what)| format!("{} {what}", keys.hint_in(mode, *action)))
        .collect();
    hints.join(" · ")
}
