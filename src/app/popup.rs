//! What sits on top of the main screen, as one stack: the top popup gets the keys first and is
//! drawn last, so precedence is written once, here, as the order things were opened in.

use super::App;
use super::answer::AnswerBox;
use super::dialogs::{Confirm, LinkPick, NewTask};
use super::keys::Mode;
use crate::store::TaskKey;

pub enum Popup {
    /// The help overlay, on this page.
    Help {
        page: usize,
    },
    /// The detail pane of one task, scrolled by `scroll` lines.
    Detail {
        key: TaskKey,
        scroll: usize,
    },
    /// The filter being typed.
    Filter {
        input: String,
    },
    /// Every task waiting on a person, with this row selected.
    Inbox {
        selected: usize,
    },
    Answer(Box<AnswerBox>),
    NewTask(Box<NewTask>),
    Confirm(Confirm),
    Pick(LinkPick),
}

impl Popup {
    /// The key map the popup reads keys with.
    pub fn mode(&self) -> Mode {
        match self {
            Popup::Help { .. } => Mode::Help,
            Popup::Detail { .. } => Mode::Main,
            Popup::Filter { .. } => Mode::Filter,
            Popup::Inbox { .. } => Mode::Inbox,
            Popup::Answer(_) => Mode::Answer,
            Popup::NewTask(_) => Mode::NewTask,
            Popup::Confirm(_) => Mode::Confirm,
            Popup::Pick(_) => Mode::Pick,
        }
    }

    /// A box that acts on tasks (answer, confirm, new task, inbox, links): it holds the
    /// keyboard, and no question pops up over it.
    pub fn is_box(&self) -> bool {
        !matches!(self, Popup::Help { .. } | Popup::Detail { .. } | Popup::Filter { .. })
    }
}

impl App {
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

    pub fn push(&mut self, popup: Popup) {
        self.popups.push(popup);
    }

    /// Closes the top popup.
    pub fn pop(&mut self) -> Option<Popup> {
        self.popups.pop()
    }

    /// Closes every popup `which` selects.
    pub fn close(&mut self, which: impl Fn(&Popup) -> bool) {
        self.popups.retain(|p| !which(p));
    }

    pub fn answer(&self) -> Option<&AnswerBox> {
        self.popups.iter().find_map(|p| match p {
            Popup::Answer(b) => Some(b.as_ref()),
            _ => None,
        })
    }

    pub fn answer_mut(&mut self) -> Option<&mut AnswerBox> {
        self.popups.iter_mut().find_map(|p| match p {
            Popup::Answer(b) => Some(b.as_mut()),
            _ => None,
        })
    }

    /// Closes the answer box and hands it back.
    pub fn take_answer(&mut self) -> Option<AnswerBox> {
        let i = self.popups.iter().position(|p| matches!(p, Popup::Answer(_)))?;
        match self.popups.remove(i) {
            Popup::Answer(b) => Some(*b),
            _ => None,
        }
    }

    pub fn confirm(&self) -> Option<&Confirm> {
        self.popups.iter().find_map(|p| match p {
            Popup::Confirm(c) => Some(c),
            _ => None,
        })
    }

    /// Shows a confirmation, in place of one already open.
    pub fn show_confirm(&mut self, confirm: Confirm) {
        self.close(|p| matches!(p, Popup::Confirm(_)));
        self.push(Popup::Confirm(confirm));
    }

    pub fn new_task(&self) -> Option<&NewTask> {
        self.popups.iter().find_map(|p| match p {
            Popup::NewTask(f) => Some(f.as_ref()),
            _ => None,
        })
    }

    pub fn new_task_mut(&mut self) -> Option<&mut NewTask> {
        self.popups.iter_mut().find_map(|p| match p {
            Popup::NewTask(f) => Some(f.as_mut()),
            _ => None,
        })
    }

    pub fn pick(&self) -> Option<&LinkPick> {
        self.popups.iter().find_map(|p| match p {
            Popup::Pick(pick) => Some(pick),
            _ => None,
        })
    }

    /// The inbox's selected row, when it is open.
    pub fn inbox(&self) -> Option<usize> {
        self.popups.iter().find_map(|p| match p {
            Popup::Inbox { selected } => Some(*selected),
            _ => None,
        })
    }
}
