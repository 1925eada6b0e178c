//! The help overlay (drawn by `ui::popups::help` from the key maps): page 1 the main screen's
//! keys, page 2 each popup's. Any key its map does not name closes it.

use crossterm::event::{KeyCode, KeyEvent};

use super::{Behaviour, Member, ModeKeys};
use crate::app::App;
use crate::app::keys::{Action, Key};

/// How many pages the help overlay has: the main screen's keys, and the popups' keys.
const PAGES: usize = 2;

/// The help overlay, on this page.
pub struct Help {
    pub page: usize,
}

pub const KEYS: ModeKeys = ModeKeys {
    name: "help",
    title: "help",
    help: &[(Action::NextPage, "next page"), (Action::PreviousPage, "previous page")],
    defaults: || {
        use KeyCode::*;
        vec![
            (Key::plain(Tab), Action::NextPage),
            (Key::plain(Right), Action::NextPage),
            (Key::plain(BackTab), Action::PreviousPage),
            (Key::plain(Left), Action::PreviousPage),
        ]
    },
};

impl Behaviour for Help {
    const IS_BOX: bool = false;

    fn on_action(app: &mut App, action: Action) {
        let Some(help) = Help::top_mut(&mut app.popups) else {
            return;
        };
        match action {
            Action::NextPage => help.page = (help.page + 1) % PAGES,
            Action::PreviousPage => help.page = (help.page + PAGES - 1) % PAGES,
            _ => {
                app.pop();
            }
        }
    }

    /// Any key closes the help.
    fn on_other_key(app: &mut App, _key: KeyEvent) -> bool {
        app.pop();
        true
    }
}
