//! The detail pane of one task (drawn by `ui::popups::detail`): the main screen's moves scroll
//! it, any other action closes it. Its keys are the main map's; the footer shows them.

use super::{Behaviour, Member};
use crate::app::App;
use crate::app::keys::Action;
use crate::store::TaskKey;

/// The detail pane of one task, scrolled by `scroll` lines.
pub struct Detail {
    pub key: TaskKey,
    pub scroll: usize,
}

impl Detail {
    pub fn new(key: TaskKey) -> Detail {
        Detail { key, scroll: 0 }
    }
}

impl Behaviour for Detail {
    const IS_BOX: bool = false;

    fn on_action(app: &mut App, action: Action) {
        let page = app.detail_page;
        let Some(Detail { scroll, .. }) = Detail::top_mut(&mut app.popups) else {
            return;
        };
        match action {
            Action::Up => *scroll = scroll.saturating_sub(1),
            Action::Down => *scroll += 1,
            Action::PageUp => *scroll = scroll.saturating_sub(page),
            Action::PageDown => *scroll += page,
            Action::Top => *scroll = 0,
            Action::Bottom => *scroll = usize::MAX / 2,
            Action::Help => app.push(super::help::Help { page: 0 }),
            _ => {
                app.pop();
            }
        }
    }
}
