//! The screen's layout as the app needs it: where each pane is (for clicks), how many rows a page
//! is, how far the detail pane scrolls. `ui::view::layout` computes it before each frame and the
//! loop hands it to `App::prepare`, so the app keeps what was drawn and never calls the drawing.

use ratatui::layout::Rect;

use super::Pane;

/// Where each pane of the main screen goes, from the terminal size and what there is to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Areas {
    /// The panes on screen, top to bottom (the approvals only while some wait).
    pub panes: Vec<(Pane, Rect)>,
    /// Agents as one line of badges, approvals as one line with the links of one.
    pub compact: bool,
}

impl Areas {
    /// Where a pane is (empty when it is not on screen).
    pub fn of(&self, pane: Pane) -> Rect {
        (self.panes.iter())
            .find(|(p, _)| *p == pane)
            .map_or(Rect::default(), |(_, r)| *r)
    }

    /// The pane at a screen cell.
    pub fn at(&self, column: u16, row: u16) -> Option<(Pane, Rect)> {
        (self.panes.iter().copied()).find(|(_, r)| r.contains(ratatui::layout::Position { x: column, y: row }))
    }

    /// Rows the task table shows at once (inside the border, below the header row).
    pub fn page(&self) -> usize {
        usize::from(self.of(Pane::Tasks).height.saturating_sub(3))
    }

    /// The detail pane covers everything between the title and the footer.
    pub fn body(&self) -> Rect {
        let agents = self.of(Pane::Agents);
        Rect {
            height: self.of(Pane::Footer).y - agents.y,
            ..agents
        }
    }
}

/// What one frame's layout tells the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenLayout {
    /// The whole screen the frame is laid out on.
    pub screen: Rect,
    pub areas: Areas,
    /// Lines the detail pane shows at once.
    pub detail_lines: usize,
    /// How far the open detail pane can scroll (its last line at the bottom); None when it is not
    /// the top popup.
    pub detail_max_scroll: Option<usize>,
}
