//! The interrupt inbox (state and keys in `app::popup::inbox`): every task waiting on a person,
//! oldest first, how long each has waited.

use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::super::format::{SHORT_ID, cells, fit, pad, task_id, waited, width};
use super::{centered, hints};
use crate::app::keys::Mode;
use crate::app::popup::inbox::{HINTS, Inbox};
use crate::app::{App, Areas};
use crate::text::one_line;
use crate::theme::state_glyph;

/// The interrupt inbox: every task waiting on a person, oldest first.
pub(super) fn draw(frame: &mut Frame, _areas: &Areas, app: &App, inbox: &Inbox) {
    let (area, selected) = (frame.area(), inbox.selected);
    let (store, theme, now) = (app.store(), app.theme(), app.now());
    let waiting = store.interrupts();
    // Saturating: a screen smaller than the popup's minimum still gets what fits.
    let height = cells(waiting.len()).saturating_add(4).max(5).min(area.height);
    let popup = centered(area, area.width.saturating_sub(8).clamp(40, 120), height);
    frame.render_widget(Clear, popup);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.interrupted))
        .title(Line::styled(
            format!(
                " Waiting on you ({}) · {} ",
                waiting.len(),
                hints(app.keys(), Mode::Inbox, &HINTS)
            ),
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ));
    // Ids alike for more than 8 characters are shown longer: their column widens for all.
    let ids: Vec<String> = waiting.iter().map(|t| task_id(store, &t.key.id)).collect();
    let id_w = ids.iter().map(|id| width(id)).fold(SHORT_ID, usize::max);
    let text_width = usize::from(popup.width).saturating_sub(42 + id_w);
    let mut lines: Vec<Line> = waiting
        .iter()
        .zip(ids)
        .enumerate()
        .map(|(i, (t, id))| {
            let marker = if i == selected { "▶ " } else { "  " };
            let row = Line::from(vec![
                Span::styled(marker, Style::new().fg(theme.title)),
                Span::styled(
                    format!("{:>6}  ", waited(now, t.state_since)),
                    Style::new().fg(theme.interrupted),
                ),
                Span::raw(format!("{:<14} ", fit(&one_line(store.agent_name(t.key.agent)), 14))),
                Span::styled(pad(&id, id_w + 1), theme.dim()),
                Span::styled(
                    format!("{} {:<15}", state_glyph(t.state()), t.state().short_name()),
                    theme.state(t.state()),
                ),
                Span::raw(fit(&one_line(&t.status.text()), text_width)),
            ]);
            if i == selected {
                row.style(Style::new().bg(theme.selection))
            } else {
                row
            }
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("  Nothing waits on you.", theme.dim()));
    }
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
