//! The link picker (drawn by `ui::popups::pick`): an approval with several web links, the
//! person picks the one to open or copy, by moving or by its number.

use crossterm::event::KeyCode;

use super::{Behaviour, Member, ModeKeys, list_keys};
use crate::app::App;
use crate::app::keys::{Action, Key};

/// An approval with several web links: the person picks the one to open or copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPick {
    /// Web links only (`effects::is_web_link`), each shown exactly as it would be used.
    pub links: Vec<String>,
    pub open: bool,
    pub selected: usize,
}

pub const KEYS: ModeKeys = ModeKeys {
    name: "pick",
    title: "link picker",
    help: &[
        (Action::Up, "up"),
        (Action::Down, "down"),
        (Action::Details, "use it"),
        (Action::Choose(1), "link 1 (2-9 likewise: choose_2 .. choose_9)"),
        (Action::Back, "back"),
    ],
    defaults: || {
        let digits = (1..=9u8).map(|n| (Key::plain(KeyCode::Char(char::from(b'0' + n))), Action::Choose(n)));
        list_keys().into_iter().chain(digits).collect()
    },
};

impl Behaviour for LinkPick {
    fn on_action(app: &mut App, action: Action) {
        let Some(pick) = LinkPick::top_mut(&mut app.popups) else {
            return;
        };
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
                app.pop();
                None
            }
            _ => None,
        };
        if let Some(i) = chosen
            && let Some(pick) = app.pop().and_then(LinkPick::from_popup)
            && let Some(link) = pick.links.get(i)
        {
            app.use_link(link.clone(), pick.open);
        }
    }
}
