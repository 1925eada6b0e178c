//! Keys are data: every key press becomes an `Action` through one key map, which the config
//! can override (`[keys]` with `"ctrl-d" = "page_down"`) and from which the help overlay is
//! drawn, so help cannot drift from what the keys do.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

/// A `[keys]` line that cannot be used, in the words the user sees.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{0:?} is not a key (try q, G, ctrl-c, pgdn, f5, enter)")]
    NotAKey(String),
    #[error("{0:?} is not an action (see the help overlay, `?`)")]
    NotAnAction(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Quit,
    Help,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Details,
    Back,
    Filter,
    Sort,
    ToggleTerminal,
    Freeze,
    FocusNext,
    /// Every task waiting on a person, oldest first.
    Inbox,
    /// Answer the selected task (it must be waiting).
    Reply,
    Cancel,
    NewTask,
    /// interactions/v1: approve the held call (a connection request asks "connected?").
    Approve,
    Deny,
    /// The selected approval's web link: open in the browser, or copy (OSC 52 and the
    /// clipboard); with several, a picker (moves, details to choose, back, or 1-9).
    OpenLink,
    CopyLink,
    /// Does nothing: lets a config unbind a default key.
    None,
}

impl Action {
    /// What the help overlay says, in the order it lists them.
    pub const HELP: [(Action, &'static str); 23] = [
        (Action::Up, "move up"),
        (Action::Down, "move down"),
        (Action::PageUp, "page up"),
        (Action::PageDown, "page down"),
        (Action::Top, "first row"),
        (Action::Bottom, "last row"),
        (Action::Details, "details of the selected task"),
        (Action::Back, "close the pane or overlay"),
        (Action::Filter, "filter: words, state:, agent:, context:, !term"),
        (Action::Sort, "next sort order"),
        (Action::ToggleTerminal, "hide or show finished tasks"),
        (Action::Freeze, "freeze the table (new rows are counted)"),
        (Action::FocusNext, "move between tasks and approvals"),
        (Action::Inbox, "inbox: everything waiting on you"),
        (Action::Reply, "answer the selected task"),
        (Action::Approve, "approve (interactions/v1)"),
        (Action::Deny, "deny (interactions/v1)"),
        (Action::OpenLink, "open the approval's web link (several: pick one)"),
        (Action::CopyLink, "copy the approval's web link (several: pick one)"),
        (Action::Cancel, "cancel the selected task"),
        (Action::NewTask, "start a new task"),
        (Action::Help, "this help"),
        (Action::Quit, "quit"),
    ];
}

/// A key with its modifiers, as written in the config: `q`, `G`, `ctrl-c`, `alt-enter`,
/// `pgdn`, `f5`, `space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    pub fn from_event(ev: &KeyEvent) -> Key {
        // Shift is part of the character for letters (`G`), so it is not kept separately.
        let mods = match ev.code {
            KeyCode::Char(_) => ev.modifiers - KeyModifiers::SHIFT,
            _ => ev.modifiers,
        };
        Key { code: ev.code, mods }
    }

    pub fn parse(text: &str) -> Result<Key, KeyError> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = text;
        loop {
            let lower = rest.to_ascii_lowercase();
            let stripped = ["ctrl-", "alt-", "shift-"].iter().find(|p| lower.starts_with(**p));
            match stripped {
                Some(&"ctrl-") => mods |= KeyModifiers::CONTROL,
                Some(&"alt-") => mods |= KeyModifiers::ALT,
                Some(_) => mods |= KeyModifiers::SHIFT,
                None => break,
            }
            rest = &rest[stripped.map_or(0, |p| p.len())..];
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(KeyError::NotAKey(text.to_string())),
                }
            }
        };
        if let KeyCode::Char(c) = code
            && mods.contains(KeyModifiers::SHIFT)
        {
            mods -= KeyModifiers::SHIFT;
            return Ok(Key {
                code: KeyCode::Char(c.to_ascii_uppercase()),
                mods,
            });
        }
        Ok(Key { code, mods })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("⏎"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct KeyMap {
    bindings: Vec<(Key, Action)>,
}

impl Default for KeyMap {
    fn default() -> Self {
        use KeyCode::*;
        let c = |ch: char| Key::plain(Char(ch));
        let ctrl = |ch: char| Key {
            code: Char(ch),
            mods: KeyModifiers::CONTROL,
        };
        KeyMap {
            bindings: vec![
                (c('q'), Action::Quit),
                (ctrl('c'), Action::Quit),
                (c('?'), Action::Help),
                // Arrows first: footer hints show the first key of an action.
                (Key::plain(Up), Action::Up),
                (c('k'), Action::Up),
                (Key::plain(Down), Action::Down),
                (c('j'), Action::Down),
                (Key::plain(PageUp), Action::PageUp),
                (ctrl('b'), Action::PageUp),
                (Key::plain(PageDown), Action::PageDown),
                (ctrl('f'), Action::PageDown),
                (c('g'), Action::Top),
                (Key::plain(Home), Action::Top),
                (c('G'), Action::Bottom),
                (Key::plain(End), Action::Bottom),
                (Key::plain(Enter), Action::Details),
                (Key::plain(Esc), Action::Back),
                (c('/'), Action::Filter),
                (c('s'), Action::Sort),
                (c('t'), Action::ToggleTerminal),
                (c('f'), Action::Freeze),
                (Key::plain(Tab), Action::FocusNext),
                (c('i'), Action::Inbox),
                (c('r'), Action::Reply),
                (c('a'), Action::Approve),
                (c('d'), Action::Deny),
                (c('o'), Action::OpenLink),
                (c('y'), Action::CopyLink),
                (c('x'), Action::Cancel),
                (c('n'), Action::NewTask),
            ],
        }
    }
}

impl KeyMap {
    /// The defaults with the config's `key = "action"` lines laid over them.
    pub fn with_overrides<'a>(overrides: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<KeyMap, KeyError> {
        let mut map = KeyMap::default();
        for (key, action) in overrides {
            let key = Key::parse(key)?;
            let action: Action = serde_json::from_value(serde_json::Value::String(action.to_string()))
                .map_err(|_| KeyError::NotAnAction(action.to_string()))?;
            map.bindings.retain(|(k, _)| *k != key);
            map.bindings.push((key, action));
        }
        Ok(map)
    }

    pub fn action(&self, ev: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(ev);
        self.bindings
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| *a)
            .filter(|a| *a != Action::None)
    }

    /// The keys bound to an action, in binding order.
    pub fn keys_for(&self, action: Action) -> Vec<Key> {
        self.bindings
            .iter()
            .filter(|(_, a)| *a == action)
            .map(|(k, _)| *k)
            .collect()
    }

    /// The first key of an action, for footer hints.
    pub fn hint(&self, action: Action) -> String {
        self.keys_for(action)
            .first()
            .map(Key::to_string)
            .unwrap_or_else(|| "(unbound)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn keys_parse_and_print() {
        assert_eq!(
            Key::parse("ctrl-c").unwrap(),
            Key {
                code: KeyCode::Char('c'),
                mods: KeyModifiers::CONTROL
            }
        );
        assert_eq!(Key::parse("G").unwrap(), Key::plain(KeyCode::Char('G')));
        assert_eq!(Key::parse("shift-g").unwrap(), Key::plain(KeyCode::Char('G')));
        assert_eq!(Key::parse("pgdn").unwrap(), Key::plain(KeyCode::PageDown));
        assert_eq!(Key::parse("f5").unwrap(), Key::plain(KeyCode::F(5)));
        assert!(Key::parse("hyper-x").is_err());
        assert_eq!(Key::parse("alt-enter").unwrap().to_string(), "alt-⏎");
    }

    #[test]
    fn the_default_map_knows_vim_keys_and_arrows() {
        let m = KeyMap::default();
        assert_eq!(
            m.action(&press(KeyCode::Char('j'), KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(m.action(&press(KeyCode::Down, KeyModifiers::NONE)), Some(Action::Down));
        assert_eq!(
            m.action(&press(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Action::Bottom)
        );
        assert_eq!(
            m.action(&press(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(m.action(&press(KeyCode::Char('z'), KeyModifiers::NONE)), None);
    }

    #[test]
    fn overrides_rebind_and_unbind() {
        let m = KeyMap::with_overrides([("ctrl-d", "page_down"), ("q", "none"), ("x", "quit")]).unwrap();
        assert_eq!(
            m.action(&press(KeyCode::Char('d'), KeyModifiers::CONTROL)),
            Some(Action::PageDown)
        );
        assert_eq!(m.action(&press(KeyCode::Char('q'), KeyModifiers::NONE)), None);
        assert_eq!(
            m.action(&press(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        let err = KeyMap::with_overrides([("x", "explode")]).unwrap_err().to_string();
        assert!(err.contains("explode"), "{err}");
    }

    #[test]
    fn every_action_in_help_has_a_default_key() {
        let m = KeyMap::default();
        for (action, _) in Action::HELP {
            assert!(!m.keys_for(action).is_empty(), "{action:?}");
        }
    }
}
