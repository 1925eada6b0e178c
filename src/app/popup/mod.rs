//! What sits on top of the main screen, as one stack: the top popup gets the keys first and is
//! drawn last, so precedence is written once, here, as the order things were opened in.
//!
//! Each popup has one home in two files: `app/popup/<name>.rs` holds its state, its key map
//! (`KEYS`, a `ModeKeys`: config name, help entries, default keys), its hint line and what it
//! does with keys and paste (`Behaviour`); `ui/popups/<name>.rs` draws it (`draw`). The list in
//! `with_popups!` is the one place that registers them: it makes the `Popup` enum and its
//! dispatch here, the popups' `keys::Mode`s, and the drawing dispatch in `ui::popups`.
//!
//! To add a popup:
//! 1. write `app/popup/<name>.rs`: its state type, `impl Behaviour`, and, if it reads keys with
//!    a map of its own, `pub const KEYS: ModeKeys`;
//! 2. write `ui/popups/<name>.rs` with `pub(super) fn draw(frame, areas, app, state)`;
//! 3. register it with one line in `with_popups!`: `<name>: <Variant>(<name>::<State>)`, followed
//!    by `keys <Variant>` if it has `KEYS` (that becomes its `Mode`; without, it reads the main
//!    screen's keys), and declare the two files (`mod <name>;` here and in `ui::popups`: written
//!    out, not made by the macro, because rustfmt does not read modules declared in macros);
//! 4. open it with `app.push(State { .. })` from the action that shows it.

pub mod agents;
pub mod answer;
pub mod confirm;
pub mod detail;
pub mod filter;
pub mod help;
pub mod inbox;
pub mod new_task;
pub mod pick;

use crossterm::event::KeyEvent;

use super::App;
use super::keys::{Action, Key, Mode};

/// The popups, `module: Variant(module::State)`, with `keys Variant` where the popup reads keys
/// with a map of its own, handed to `$then!`: the app makes the `Popup` enum and `keys::Mode` of
/// it, `ui::popups` its drawing (one `draw` per module). The order is the order of the help
/// overlay's popup page.
macro_rules! with_popups {
    ($then:ident) => {
        $then! {
            help: Help(help::Help) keys Help,
            detail: Detail(detail::Detail),
            filter: Filter(filter::Filter) keys Filter,
            inbox: Inbox(inbox::Inbox) keys Inbox,
            agents: Agents(agents::AgentsView) keys Agents,
            confirm: Confirm(confirm::Confirm) keys Confirm,
            answer: Answer(answer::AnswerBox) keys Answer,
            new_task: NewTask(new_task::NewTask) keys NewTask,
            pick: Pick(pick::LinkPick) keys Pick,
        }
    };
}
pub(crate) use with_popups;

/// What a popup does with the keyboard; its state type implements it in its home.
pub trait Behaviour: Member {
    /// A box that acts on tasks holds the keyboard, and no question pops up over it.
    const IS_BOX: bool = true;

    /// An action its map read; the popup is on top.
    fn on_action(app: &mut App, action: Action);

    /// A key no map names, with the popup on top: true if it took it. A box takes every key,
    /// even one it does nothing with.
    fn on_other_key(_app: &mut App, _key: KeyEvent) -> bool {
        Self::IS_BOX
    }

    /// Pasted text, with the popup on top: true if it took it.
    fn on_paste(_app: &mut App, _text: &str) -> bool {
        false
    }

    /// An action its map names that it takes as typing instead (a key that moves a cursor).
    fn types(&self, _action: Action) -> bool {
        false
    }
}

/// A popup's state as a member of the stack (made by `with_popups!`).
pub trait Member: Sized {
    fn into_popup(self) -> Popup;
    fn of(popup: &Popup) -> Option<&Self>;
    fn of_mut(popup: &mut Popup) -> Option<&mut Self>;
    fn from_popup(popup: Popup) -> Option<Self>;

    /// This popup, if it is the top one.
    fn top_mut(popups: &mut [Popup]) -> Option<&mut Self> {
        popups.last_mut().and_then(Self::of_mut)
    }
}

/// The keys of a mode, from the home of the popup (or screen) that reads them.
pub struct ModeKeys {
    /// The name in `[keys.<name>]`.
    pub name: &'static str,
    /// What the help overlay calls the mode.
    pub title: &'static str,
    /// What the help overlay says of its keys, in the order it lists them.
    pub help: &'static [(Action, &'static str)],
    /// Its default keys, in binding order (a hint shows an action's first key).
    pub defaults: fn() -> Vec<(Key, Action)>,
}

/// The mode a popup reads keys with: its own, or the main screen's.
macro_rules! mode_of {
    () => {
        Mode::Main
    };
    ($mode:ident) => {
        Mode::$mode
    };
}

macro_rules! declare_popups {
    ($($module:ident: $variant:ident($state:ty) $(keys $mode:ident)?,)*) => {
        /// One open popup; its state is in its home module.
        pub enum Popup {
            $($variant(Box<$state>),)*
        }

        $(impl Member for $state {
            fn into_popup(self) -> Popup {
                Popup::$variant(Box::new(self))
            }
            fn of(popup: &Popup) -> Option<&Self> {
                match popup {
                    Popup::$variant(state) => Some(state),
                    _ => None,
                }
            }
            fn of_mut(popup: &mut Popup) -> Option<&mut Self> {
                match popup {
                    Popup::$variant(state) => Some(state),
                    _ => None,
                }
            }
            fn from_popup(popup: Popup) -> Option<Self> {
                match popup {
                    Popup::$variant(state) => Some(*state),
                    _ => None,
                }
            }
        })*

        impl Popup {
            /// The key map the popup reads keys with.
            pub fn mode(&self) -> Mode {
                match self {
                    $(Popup::$variant(_) => mode_of!($($mode)?),)*
                }
            }

            /// A box that acts on tasks (answer, confirm, new task, inbox, links): it holds the
            /// keyboard, and no question pops up over it.
            pub fn is_box(&self) -> bool {
                match self {
                    $(Popup::$variant(_) => <$state as Behaviour>::IS_BOX,)*
                }
            }

            fn types(&self, action: Action) -> bool {
                match self {
                    $(Popup::$variant(state) => state.types(action),)*
                }
            }
        }

        impl App {
            /// An action for the top popup, or the main screen when none is open.
            pub(super) fn popup_action(&mut self, action: Action) {
                match self.popups.last() {
                    $(Some(Popup::$variant(_)) => <$state as Behaviour>::on_action(self, action),)*
                    None => self.handle_main(action),
                }
            }

            /// A key no map names, for the top popup: true if it took it.
            pub(super) fn popup_other_key(&mut self, key: KeyEvent) -> bool {
                match self.popups.last() {
                    $(Some(Popup::$variant(_)) => <$state as Behaviour>::on_other_key(self, key),)*
                    None => false,
                }
            }

            /// Pasted text, for the top popup: true if it took it.
            pub(super) fn popup_paste(&mut self, text: &str) -> bool {
                match self.popups.last() {
                    $(Some(Popup::$variant(_)) => <$state as Behaviour>::on_paste(self, text),)*
                    None => false,
                }
            }
        }
    };
}
with_popups!(declare_popups);

impl App {
    /// The popups, bottom to top.
    pub fn popups(&self) -> &[Popup] {
        &self.popups
    }

    pub fn top(&self) -> Option<&Popup> {
        self.popups.last()
    }

    /// The mode the keyboard is in: the top popup's, else the main screen's.
    pub fn mode(&self) -> Mode {
        self.top().map_or(Mode::Main, Popup::mode)
    }

    /// Is a box open that takes the keyboard?
    pub fn modal(&self) -> bool {
        self.popups.iter().any(Popup::is_box)
    }

    /// Does the top popup take this action as typing?
    pub(super) fn is_typing(&self, action: Action) -> bool {
        self.top().is_some_and(|p| p.types(action))
    }

    pub fn push(&mut self, popup: impl Member) {
        self.popups.push(popup.into_popup());
    }

    /// Closes the top popup.
    pub fn pop(&mut self) -> Option<Popup> {
        self.popups.pop()
    }

    /// Closes every popup of this kind.
    pub fn close<P: Member>(&mut self) {
        self.popups.retain(|p| P::of(p).is_none());
    }

    /// Closes every popup of this kind `which` selects.
    pub fn close_if<P: Member>(&mut self, which: impl Fn(&P) -> bool) {
        self.popups.retain(|p| !P::of(p).is_some_and(&which));
    }

    /// The open popup of this kind (the lowest, should there be several).
    pub fn popup<P: Member>(&self) -> Option<&P> {
        self.popups.iter().find_map(P::of)
    }

    pub fn popup_mut<P: Member>(&mut self) -> Option<&mut P> {
        self.popups.iter_mut().find_map(P::of_mut)
    }

    /// The popup of this kind if it is the top one.
    pub fn top_popup<P: Member>(&self) -> Option<&P> {
        self.top().and_then(P::of)
    }

    /// Closes the popup of this kind and hands it back.
    pub fn take<P: Member>(&mut self) -> Option<P> {
        let i = self.popups.iter().position(|p| P::of(p).is_some())?;
        P::from_popup(self.popups.remove(i))
    }
}

/// The keys of the lists (the inbox and the link picker): the same moves, ⏎ takes the row.
/// Ctrl-C quits from every popup; each lists it so that it can be remapped there too.
fn list_keys() -> Vec<(Key, Action)> {
    use crossterm::event::KeyCode::*;
    vec![
        (Key::plain(Up), Action::Up),
        (Key::char('k'), Action::Up),
        (Key::plain(Down), Action::Down),
        (Key::char('j'), Action::Down),
        (Key::plain(Enter), Action::Details),
        (Key::plain(Esc), Action::Back),
        (Key::char('q'), Action::Back),
        (Key::ctrl('c'), Action::Quit),
    ]
}

/// The keys of the text boxes (the answer box and the new-task form).
fn text_box_keys() -> Vec<(Key, Action)> {
    use crossterm::event::KeyCode::*;
    use crossterm::event::KeyModifiers;
    vec![
        (Key::plain(Enter), Action::Send),
        (Key::with(Enter, KeyModifiers::CONTROL), Action::Send),
        (Key::with(Enter, KeyModifiers::ALT), Action::Newline),
        (Key::with(Enter, KeyModifiers::SHIFT), Action::Newline),
        (Key::plain(Esc), Action::Back),
        (Key::ctrl('c'), Action::Quit),
    ]
}
