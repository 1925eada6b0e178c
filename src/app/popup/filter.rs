//! The filter being typed (shown in the footer by `ui::popups::filter`): every key changes the
//! table (or the agents view, when it is open) at once; Enter keeps the filter, Esc drops it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Behaviour, Member, ModeKeys};
use crate::app::App;
use crate::app::keys::{Action, Key};
use crate::store::query::Filter as Query;

/// The filter being typed.
pub struct Filter {
    pub input: String,
}

pub const KEYS: ModeKeys = ModeKeys {
    name: "filter",
    title: "filter",
    help: &[
        (Action::Details, "keep the filter"),
        (Action::Back, "clear it"),
        (Action::DeleteBack, "delete a character"),
    ],
    defaults: || {
        use KeyCode::*;
        vec![
            (Key::plain(Enter), Action::Details),
            (Key::plain(Esc), Action::Back),
            (Key::plain(Backspace), Action::DeleteBack),
            (Key::with(Backspace, KeyModifiers::ALT), Action::DeleteBack),
            (Key::with(Backspace, KeyModifiers::CONTROL), Action::DeleteBack),
            (Key::ctrl('c'), Action::Quit),
        ]
    },
};

/// The footer's hint line while typing.
pub const HINTS: [(Action, &str); 2] = [(Action::Details, "keep"), (Action::Back, "clear")];

impl Behaviour for Filter {
    const IS_BOX: bool = false;

    fn on_action(app: &mut App, action: Action) {
        let Some(Filter { input }) = Filter::top_mut(&mut app.popups) else {
            return;
        };
        match action {
            // Enter keeps the filter, Esc drops it.
            Action::Details => {
                app.pop();
            }
            Action::Back => {
                app.pop();
                app.set_filter(Query::default());
            }
            Action::DeleteBack => {
                input.pop();
                let filter = Query::parse(input);
                app.set_filter(filter);
            }
            _ => {}
        }
    }

    fn on_other_key(app: &mut App, key: KeyEvent) -> bool {
        let Some(Filter { input }) = Filter::top_mut(&mut app.popups) else {
            return false;
        };
        if let KeyCode::Char(c) = key.code
            && !key.modifiers.contains(KeyModifiers::CONTROL)
        {
            input.push(c);
            let filter = Query::parse(input);
            app.set_filter(filter);
        }
        true
    }

    fn on_paste(app: &mut App, text: &str) -> bool {
        let Some(Filter { input }) = Filter::top_mut(&mut app.popups) else {
            return false;
        };
        input.extend(text.chars().filter(|c| !c.is_control()));
        let filter = Query::parse(input);
        app.set_filter(filter);
        true
    }
}
