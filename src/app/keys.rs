//! Keys are data: in every mode (the main screen and each popup) a key press becomes an
//! `Action` through that mode's key map; each popup's keys are in its home (`popup::<name>`). The config overrides any of them (`[keys]` for the main
//! screen, `[keys.<mode>]` for a popup), and the help overlay is drawn from the maps, so help
//! cannot drift from what the keys do.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

use super::popup::{self, ModeKeys};

/// A `[keys]` line that cannot be used, in the words the user sees.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{0:?} is not a key (try q, G, ctrl-c, pgdn, f5, enter)")]
    NotAKey(String),
    #[error("{0:?} is not an action (see the help overlay, `?`)")]
    NotAnAction(String),
    #[error("[keys.{0}] is not a mode ({modes})", modes = Mode::names())]
    NotAMode(String),
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
    /// The delegation tree in the table's place, or the table again.
    ToggleTree,
    /// In the tree: close the selected branch (on a leaf or a closed one, go to its parent).
    Collapse,
    Expand,
    /// In the tree: close or open the selected branch.
    ToggleBranch,
    FocusNext,
    /// Every task waiting on a person, oldest first.
    Inbox,
    /// Every agent, one row each: health, counts, streams; ⏎ narrows the table to one.
    Agents,
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
    /// Inside popups: answer a confirmation.
    Yes,
    No,
    /// Send what a box holds (an answer, a new task).
    Send,
    /// A line break in a box's text.
    Newline,
    NextField,
    PreviousAgent,
    NextAgent,
    /// Delete the character before the cursor (the filter).
    DeleteBack,
    NextPage,
    PreviousPage,
    /// The screen as an SVG file in the current directory.
    Screenshot,
    /// Replay: pause or play the recording.
    Pause,
    /// Replay: to the next change of the recording, or back to the one before.
    NextChange,
    PreviousChange,
    /// The n-th link of the picker (`choose_1` .. `choose_9`).
    #[serde(skip)]
    Choose(u8),
    /// Does nothing: lets a config unbind a default key.
    None,
}

impl Action {
    /// An action as the config names it: snake case, `choose_1` .. `choose_9` for the picker.
    pub fn parse(name: &str) -> Result<Action, KeyError> {
        if let Some(n) = name.strip_prefix("choose_").and_then(|n| n.parse::<u8>().ok())
            && (1..=9).contains(&n)
        {
            return Ok(Action::Choose(n));
        }
        serde_json::from_value(serde_json::Value::String(name.to_string()))
            .map_err(|_| KeyError::NotAnAction(name.to_string()))
    }

    /// Whether this action, in `mode`, sends something to an agent or opens the box that would:
    /// a replay refuses these (it has no agents). Every action is named, no wildcard, so a new
    /// one cannot be added without deciding.
    pub fn sends(self, mode: Mode) -> bool {
        match self {
            Action::Reply | Action::Approve | Action::Deny | Action::Cancel | Action::NewTask => mode == Mode::Main,
            // The inbox's Enter opens the answer box.
            Action::Details => mode == Mode::Inbox,
            // The boxes' own sending keys: those boxes only open through the actions above.
            Action::Send | Action::Yes => true,
            Action::Quit
            | Action::Help
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Back
            | Action::Filter
            | Action::Sort
            | Action::ToggleTerminal
            | Action::Freeze
            | Action::ToggleTree
            | Action::Collapse
            | Action::Expand
            | Action::ToggleBranch
            | Action::FocusNext
            | Action::Inbox
            | Action::Agents
            | Action::OpenLink
            | Action::CopyLink
            | Action::No
            | Action::Newline
            | Action::NextField
            | Action::PreviousAgent
            | Action::NextAgent
            | Action::DeleteBack
            | Action::NextPage
            | Action::PreviousPage
            | Action::Screenshot
            | Action::Pause
            | Action::NextChange
            | Action::PreviousChange
            | Action::Choose(_)
            | Action::None => false,
        }
    }
}

/// One, for counting the popups that have keys of their own.
macro_rules! one {
    ($mode:ident) => {
        1
    };
}

/// `Mode` from the list of popups (`popup::with_popups!`): a popup marked `keys <Mode>` reads
/// keys with a map of its own, whose `ModeKeys` is its module's `KEYS`.
macro_rules! declare_modes {
    ($($module:ident: $variant:ident($state:ty) $(keys $mode:ident)?,)*) => {
        /// Where the keyboard is: each mode has its own key map. `Main` is the table and the
        /// approvals, and the detail pane (its moves scroll); `Replay` is `a2a-watch replay`,
        /// whose keys come before the main screen's (outside the filter box); the others are the
        /// popups'.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Mode {
            Main,
            $($($mode,)?)*
            Replay,
        }

        impl Mode {
            pub const ALL: [Mode; 2 $($(+ one!($mode))?)*] = [Mode::Main, $($(Mode::$mode,)?)* Mode::Replay];

            /// What the mode's home says of its keys: the main screen's and replay's here, each
            /// popup's in its module (`popup::<name>::KEYS`).
            fn keys(self) -> &'static ModeKeys {
                match self {
                    Mode::Main => &MAIN,
                    $($(Mode::$mode => &popup::$module::KEYS,)?)*
                    Mode::Replay => &REPLAY,
                }
            }
        }
    };
}
popup::with_popups!(declare_modes);

impl Mode {
    /// Every mode's name, for the message that says a name is none of them.
    fn names() -> String {
        Mode::ALL.map(Mode::name).join(", ")
    }

    /// The name in `[keys.<name>]`.
    pub fn name(self) -> &'static str {
        self.keys().name
    }

    fn parse(name: &str) -> Result<Mode, KeyError> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| KeyError::NotAMode(name.to_string()))
    }

    /// Modes whose keys the main map also serves (after their own): help closes on any main
    /// key, and the link picker moves with the main screen's moves, however remapped.
    fn inherits_main(self) -> bool {
        matches!(self, Mode::Help | Mode::Pick)
    }

    /// What the help overlay says of this mode's keys, in the order it lists them.
    pub fn help(self) -> &'static [(Action, &'static str)] {
        self.keys().help
    }

    /// What the help overlay calls the mode.
    pub fn title(self) -> &'static str {
        self.keys().title
    }
}

const MAIN: ModeKeys = ModeKeys {
    name: "main",
    title: "main screen",
    help: &MAIN_HELP,
    defaults: main_keys,
};

const REPLAY: ModeKeys = ModeKeys {
    name: "replay",
    title: "replay",
    help: &[
        (Action::Pause, "pause or play"),
        (Action::NextChange, "next change"),
        (Action::PreviousChange, "previous change"),
    ],
    defaults: || {
        vec![
            (Key::char(' '), Action::Pause),
            (Key::char(']'), Action::NextChange),
            (Key::char('['), Action::PreviousChange),
            (Key::ctrl('c'), Action::Quit),
        ]
    },
};

/// The main screen's actions, in the order help lists them.
const MAIN_HELP: [(Action, &str); 29] = [
    (Action::Up, "move up"),
    (Action::Down, "move down"),
    (Action::PageUp, "page up"),
    (Action::PageDown, "page down"),
    (Action::Top, "first row"),
    (Action::Bottom, "last row"),
    (Action::Details, "details of the task"),
    (Action::Back, "close a pane or overlay"),
    (Action::Filter, "filter: state: agent: group: context: !term"),
    (Action::Sort, "next sort order"),
    (Action::ToggleTerminal, "hide/show finished tasks"),
    (Action::Freeze, "freeze the table (new rows are counted)"),
    (Action::ToggleTree, "delegation tree or table"),
    (Action::Collapse, "tree: collapse, parent"),
    (Action::Expand, "tree: expand"),
    (Action::ToggleBranch, "tree: collapse or expand"),
    (Action::FocusNext, "move between tasks and approvals"),
    (Action::Inbox, "inbox: waiting on you"),
    (Action::Agents, "agents view"),
    (
        Action::Reply,
        "answer the selected task; boxes wait for a pause in typing",
    ),
    (Action::Approve, "approve (interactions/v1)"),
    (Action::Deny, "deny (interactions/v1)"),
    (Action::OpenLink, "open the approval's web link (several: pick one)"),
    (Action::CopyLink, "copy the approval's web link (several: pick one)"),
    (Action::Cancel, "cancel the selected task"),
    (Action::NewTask, "start a new task"),
    (Action::Screenshot, "save the screen as SVG"),
    (Action::Help, "this help"),
    (Action::Quit, "quit"),
];

/// A key with its modifiers, as written in the config: `q`, `G`, `ctrl-c`, `alt-enter`,
/// `pgdn`, `f5`, `space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key::with(code, KeyModifiers::NONE)
    }

    pub const fn char(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    pub const fn ctrl(c: char) -> Key {
        Key::with(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    pub const fn with(code: KeyCode, mods: KeyModifiers) -> Key {
        Key { code, mods }
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
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("del"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct KeyMap {
    bindings: Vec<(Mode, Key, Action)>,
}

impl Default for KeyMap {
    fn default() -> Self {
        let bindings = (Mode::ALL.into_iter())
            .flat_map(|mode| (mode.keys().defaults)().into_iter().map(move |(k, a)| (mode, k, a)))
            .collect();
        KeyMap { bindings }
    }
}

/// The main screen's default keys. Ctrl-C quits from every mode; each popup lists it so that it
/// can be remapped there too.
fn main_keys() -> Vec<(Key, Action)> {
    use KeyCode::*;
    let c = Key::char;
    vec![
        (c('q'), Action::Quit),
        (Key::ctrl('c'), Action::Quit),
        (c('?'), Action::Help),
        // Arrows first: footer hints show the first key of an action.
        (Key::plain(Up), Action::Up),
        (c('k'), Action::Up),
        (Key::plain(Down), Action::Down),
        (c('j'), Action::Down),
        (Key::plain(PageUp), Action::PageUp),
        (Key::ctrl('b'), Action::PageUp),
        (Key::plain(PageDown), Action::PageDown),
        (Key::ctrl('f'), Action::PageDown),
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
        (c('v'), Action::ToggleTree),
        (Key::plain(Left), Action::Collapse),
        (c('h'), Action::Collapse),
        (Key::plain(Right), Action::Expand),
        (c('l'), Action::Expand),
        (c(' '), Action::ToggleBranch),
        (Key::plain(Tab), Action::FocusNext),
        (c('i'), Action::Inbox),
        (c('A'), Action::Agents),
        (c('r'), Action::Reply),
        (c('a'), Action::Approve),
        (c('d'), Action::Deny),
        (c('o'), Action::OpenLink),
        (c('y'), Action::CopyLink),
        (c('x'), Action::Cancel),
        (c('n'), Action::NewTask),
        (c('S'), Action::Screenshot),
    ]
}

impl KeyMap {
    /// The defaults with the config's lines laid over them: `(mode, key, action)`, where the
    /// mode is a `[keys.<mode>]` name, or `None` for the main screen's `[keys]`.
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (Option<&'a str>, &'a str, &'a str)>,
    ) -> Result<KeyMap, KeyError> {
        let mut map = KeyMap::default();
        for (mode, key, action) in overrides {
            let mode = mode.map_or(Ok(Mode::Main), Mode::parse)?;
            let key = Key::parse(key)?;
            let action = Action::parse(action)?;
            map.bindings.retain(|(m, k, _)| !(*m == mode && *k == key));
            map.bindings.push((mode, key, action));
        }
        Ok(map)
    }

    /// What a key press does in `mode`: its own map first, then the main one where the mode
    /// shares it.
    pub fn action(&self, mode: Mode, ev: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(ev);
        let find = |mode: Mode| {
            self.bindings
                .iter()
                .find(|(m, k, _)| *m == mode && *k == key)
                .map(|(_, _, a)| *a)
        };
        find(mode)
            .or_else(|| mode.inherits_main().then(|| find(Mode::Main)).flatten())
            .filter(|a| *a != Action::None)
    }

    /// The keys bound to an action in a mode, in binding order.
    pub fn keys_for(&self, mode: Mode, action: Action) -> Vec<Key> {
        self.bindings
            .iter()
            .filter(|(m, _, a)| *m == mode && *a == action)
            .map(|(_, k, _)| *k)
            .collect()
    }

    /// The first key of an action, for hints.
    pub fn hint_in(&self, mode: Mode, action: Action) -> String {
        self.keys_for(mode, action)
            .first()
            .map(Key::to_string)
            .unwrap_or_else(|| "(unbound)".into())
    }

    /// The first key of a main-screen action, for the footer.
    pub fn hint(&self, action: Action) -> String {
        self.hint_in(Mode::Main, action)
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
        let main = |code, mods| m.action(Mode::Main, &press(code, mods));
        assert_eq!(main(KeyCode::Char('j'), KeyModifiers::NONE), Some(Action::Down));
        assert_eq!(main(KeyCode::Down, KeyModifiers::NONE), Some(Action::Down));
        assert_eq!(main(KeyCode::Char('G'), KeyModifiers::SHIFT), Some(Action::Bottom));
        assert_eq!(main(KeyCode::Char('c'), KeyModifiers::CONTROL), Some(Action::Quit));
        assert_eq!(main(KeyCode::Char('z'), KeyModifiers::NONE), None);
    }

    #[test]
    fn each_mode_has_its_own_keys_and_help_shares_the_main_ones() {
        let m = KeyMap::default();
        let y = press(KeyCode::Char('y'), KeyModifiers::NONE);
        assert_eq!(m.action(Mode::Main, &y), Some(Action::CopyLink));
        assert_eq!(m.action(Mode::Confirm, &y), Some(Action::Yes));
        // A letter in a text box is text, not a command.
        assert_eq!(m.action(Mode::Answer, &y), None);
        assert_eq!(m.action(Mode::Filter, &y), None);
        let alt_enter = press(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(m.action(Mode::Answer, &alt_enter), Some(Action::Newline));
        let ctrl_enter = press(KeyCode::Enter, KeyModifiers::CONTROL);
        assert_eq!(m.action(Mode::NewTask, &ctrl_enter), Some(Action::Send));
        assert_eq!(
            m.action(Mode::Pick, &press(KeyCode::Char('3'), KeyModifiers::NONE)),
            Some(Action::Choose(3))
        );
        assert_eq!(
            m.action(Mode::Help, &press(KeyCode::Tab, KeyModifiers::NONE)),
            Some(Action::NextPage)
        );
        assert_eq!(
            m.action(Mode::Help, &press(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        for mode in Mode::ALL {
            let ctrl_c = press(KeyCode::Char('c'), KeyModifiers::CONTROL);
            assert_eq!(m.action(mode, &ctrl_c), Some(Action::Quit), "{mode:?}");
        }
    }

    #[test]
    fn overrides_rebind_and_unbind() {
        let m = KeyMap::with_overrides([
            (None, "ctrl-d", "page_down"),
            (None, "q", "none"),
            (None, "x", "quit"),
            (Some("confirm"), "o", "yes"),
            (Some("pick"), "a", "choose_2"),
        ])
        .unwrap();
        let main = |code, mods| m.action(Mode::Main, &press(code, mods));
        assert_eq!(main(KeyCode::Char('d'), KeyModifiers::CONTROL), Some(Action::PageDown));
        assert_eq!(main(KeyCode::Char('q'), KeyModifiers::NONE), None);
        assert_eq!(main(KeyCode::Char('x'), KeyModifiers::NONE), Some(Action::Quit));
        let o = press(KeyCode::Char('o'), KeyModifiers::NONE);
        assert_eq!(m.action(Mode::Confirm, &o), Some(Action::Yes));
        assert_eq!(main(KeyCode::Char('o'), KeyModifiers::NONE), Some(Action::OpenLink));
        let a = press(KeyCode::Char('a'), KeyModifiers::NONE);
        assert_eq!(m.action(Mode::Pick, &a), Some(Action::Choose(2)));
        // The picker moves with the main screen's moves, however remapped.
        let m = KeyMap::with_overrides([(None, "ctrl-n", "down")]).unwrap();
        let ctrl_n = press(KeyCode::Char('n'), KeyModifiers::CONTROL);
        assert_eq!(m.action(Mode::Pick, &ctrl_n), Some(Action::Down));
        assert_eq!(m.action(Mode::Confirm, &ctrl_n), None);
        let err = KeyMap::with_overrides([(None, "x", "explode")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("explode"), "{err}");
        let err = KeyMap::with_overrides([(Some("table"), "x", "quit")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("[keys.table] is not a mode"), "{err}");
        for bad in ["choose_0", "choose_10"] {
            assert!(KeyMap::with_overrides([(Some("pick"), "x", bad)]).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_action_in_help_has_a_default_key() {
        let m = KeyMap::default();
        for mode in Mode::ALL {
            for (action, _) in mode.help() {
                assert!(!m.keys_for(mode, *action).is_empty(), "{mode:?} {action:?}");
            }
        }
    }
}
