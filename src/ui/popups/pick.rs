//! The link picker (state and keys in `app::popup::pick`): each link whole, numbered, the
//! selected one marked.

use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::super::format::cells;
use super::centered;
use crate::app::keys::{Action, Mode};
use crate::app::popup::pick::LinkPick;
use crate::app::{App, Areas};

pub(super) fn draw(frame: &mut Frame, _areas: &Areas, app: &App, pick: &LinkPick) {
    let (area, keys, theme) = (frame.area(), app.keys(), app.theme());
    let verb = if pick.open { "open" } else { "copy" };
    let width = area.width.saturating_sub(8).clamp(40, 120);
    // Each link is shown whole, wrapped: what is shown is exactly what is opened or copied.
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = pick
        .links
        .iter()
        .take(9)
        .map(|l| (l.chars().count() + 4).div_ceil(inner))
        .sum();
    let height = cells(rows.saturating_add(2));
    let popup = centered(area, width, height);
    frame.render_widget(Clear, popup);
    let title = format!(
        " Which link? {}/1-9 {verb} · {} back ",
        keys.hint_in(Mode::Pick, Action::Details),
        keys.hint_in(Mode::Pick, Action::Back)
    );
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.title))
        .title(Line::styled(
            title,
            Style::new().fg(theme.title).add_modifier(Modifier::BOLD),
        ));
    let lines: Vec<Line> = pick
        .links
        .iter()
        .take(9)
        .enumerate()
        .map(|(i, link)| {
            let marker = if i == pick.selected { "▶" } else { " " };
            let row = Line::from(vec![
                Span::styled(format!("{marker} {} ", i + 1), Style::new().fg(theme.title)),
                Span::styled(
                    link.clone(),
                    Style::new().fg(theme.link).add_modifier(Modifier::UNDERLINED),
                ),
            ]);
            if i == pick.selected {
                row.style(Style::new().bg(theme.selection))
            } else {
                row
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), popup);
}
