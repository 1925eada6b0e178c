//! Rendering: a pure function of the `App`. It reads, never changes, and its cost follows the
//! rows on screen, not the number of tasks or the size of their texts. Every string from an
//! agent goes through `text::sanitize` / `one_line` (via `format::line`) before it reaches a cell.
//!
//! This file is the layout (`Areas`, handed to the app as a `ScreenLayout` before each frame) and the order the panes are drawn in; each pane draws in its
//! own file (`title`, `agents`, `table` or `tree`, `approvals`, `footer`; each popup in `popups`), and the pieces
//! more than one pane uses (borders, counts) are at the end of this one.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use super::popups::detail;
use super::{agents, approvals, footer, popups, table, title, tree};
use crate::app::popup::detail::Detail;
use crate::app::{App, Areas, Pane, ScreenLayout};
use crate::store::Counts;

pub(super) fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

pub fn areas(area: Rect, app: &App) -> Areas {
    let agents = to_u16(app.store().agents.len());
    let compact = area.width < 100 || area.height < agents.saturating_add(20);
    let agents_h = if compact {
        to_u16(agents::agent_badges(app, usize::from(area.width)).len())
    } else {
        to_u16(agents::agent_lines(app, usize::from(area.width.saturating_sub(2))).len()).saturating_add(2)
    };
    let approvals_h = if app.store().approval_count() == 0 {
        0
    } else {
        let (inner, border) = if compact {
            (area.width, 0)
        } else {
            (area.width.saturating_sub(2), 2)
        };
        let cap = (area.height / 3).max(border + 2);
        let budget = usize::from(cap - border);
        let need: usize = approvals::approval_blocks(app, usize::from(inner), compact, 0, budget)
            .iter()
            .map(Vec::len)
            .sum();
        to_u16(need).saturating_add(border).min(cap)
    };
    let [title, agents, tasks, approvals, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(agents_h),
        Constraint::Min(4),
        Constraint::Length(approvals_h),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut panes = vec![(Pane::Title, title), (Pane::Agents, agents), (Pane::Tasks, tasks)];
    if approvals.height > 0 {
        panes.push((Pane::Approvals, approvals));
    }
    panes.push((Pane::Footer, footer));
    Areas { panes, compact }
}

/// The layout of a frame at `screen`, as the app needs it for paging, clicks and the detail
/// pane's scroll; the loop hands it to `App::prepare` before drawing.
pub fn layout(screen: Rect, app: &App) -> ScreenLayout {
    let areas = areas(screen, app);
    let body = areas.body();
    ScreenLayout {
        screen,
        detail_lines: detail::visible_lines(body),
        detail_max_scroll: (app.top_popup::<Detail>()).map(|d| detail::max_scroll(app, &d.key, body)),
        areas,
    }
}

pub fn draw(frame: &mut Frame, app: &App) {
    let a = areas(frame.area(), app);
    for (pane, area) in &a.panes {
        match pane {
            Pane::Title => title::draw(frame, *area, app),
            Pane::Agents => agents::draw(frame, *area, app, a.compact),
            Pane::Tasks if app.tree().shown => tree::draw(frame, *area, app),
            Pane::Tasks => table::draw(frame, *area, app),
            Pane::Approvals => approvals::draw(frame, *area, app, a.compact),
            Pane::Footer => footer::draw(frame, *area, app),
        }
    }
    // Bottom to top: the popup that gets the keys is drawn last.
    for popup in app.popups() {
        popups::draw(frame, &a, app, popup);
    }
}

/// How many words the counts get (title and agents rows); the longest that fits is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Labels {
    /// `◆ 2 waiting on you`
    Long,
    /// `◆ 2 waiting`
    Medium,
    /// `● 2  ◆ 2 waiting  ✔ 1`: glyphs, and words only for what needs a person.
    Short,
}

/// Tasks by state as coloured spans: active always, the rest only when there are some.
pub(super) fn counts_spans(c: &Counts, app: &App, labels: Labels) -> Vec<Span<'static>> {
    let t = app.theme();
    let mut spans = Vec::new();
    let mut push = |n: usize, glyph: &str, label: &str, style: Style| {
        if n > 0 || label == "active" {
            let text = match labels {
                Labels::Short if glyph != "◆" => format!("{glyph} {n}"),
                _ => format!("{glyph} {n} {label}"),
            };
            spans.push(Span::styled(text, style));
            spans.push(Span::raw("  "));
        }
    };
    let waiting = if labels == Labels::Long {
        "waiting on you"
    } else {
        "waiting"
    };
    push(c.active, "●", "active", Style::new().fg(t.active));
    push(
        c.interrupted,
        "◆",
        waiting,
        Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
    );
    push(c.completed, "✔", "done", Style::new().fg(t.success));
    push(c.ended, "✖", "failed/stopped", Style::new().fg(t.failure));
    push(
        c.unknown,
        "?",
        "unknown",
        Style::new().fg(t.unknown).add_modifier(Modifier::REVERSED),
    );
    spans
}

pub(super) fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(Span::width).sum()
}

/// A pane's frame; the focused pane's in the title colour.
pub(super) fn border<'a>(title: Line<'a>, app: &App, focused: bool) -> Block<'a> {
    let color = if focused { app.theme().title } else { app.theme().border };
    Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(color))
        .title(title)
}
