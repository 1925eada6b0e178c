//! The interrupt inbox (drawn by `ui::popups::inbox`): every task waiting on a person, oldest
//! first; Enter opens the answer box on the selected one.

use crossterm::event::KeyCode;

use super::{Behaviour, Member, ModeKeys, list_keys};
use crate::app::App;
use crate::app::keys::{Action, Key};
use crate::store::TaskKey;

/// Every task waiting on a person, with this row selected.
pub struct Inbox {
    pub selected: usize,
}

pub const KEYS: ModeKeys = ModeKeys {
    name: "inbox",
    title: "inbox",
    help: &[
        (Action::Up, "up"),
        (Action::Down, "down"),
        (Action::Details, "answer it"),
        (Action::Back, "close"),
    ],
    defaults: || {
        let mut keys = list_keys();
        keys.push((Key::plain(KeyCode::Char('i')), Action::Back));
        keys
    },
};

/// The keys its title names.
pub const HINTS: [(Action, &str); 2] = [(Action::Details, "answer"), (Action::Back, "close")];

impl Behaviour for Inbox {
    fn on_action(app: &mut App, action: Action) {
        let waiting: Vec<TaskKey> = app.store.interrupts().iter().map(|t| t.key.clone()).collect();
        let Some(Inbox { selected }) = Inbox::top_mut(&mut app.popups) else {
            return;
        };
        match action {
            Action::Up => *selected = selected.saturating_sub(1),
            Action::Down => *selected = (*selected + 1).min(waiting.len().saturating_sub(1)),
            Action::Details => {
                let chosen = waiting.get(*selected).cloned();
                app.pop();
                if let Some(k) = chosen {
                    app.selected = Some(k.clone());
                    app.open_answer(&k);
                }
            }
            Action::Back => {
                app.pop();
            }
            _ => {}
        }
    }
}
