//! The filter being typed (state and keys in `app::popup::filter`): it has no box of its own,
//! the footer shows what is typed (`draw_footer`) while the table below follows it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::format::{line, width};
use super::super::view::spans_width;
use super::hints;
use crate::app::keys::Mode;
use crate::app::popup::filter::{Filter, HINTS};
use crate::app::{App, Areas};

/// Nothing over the screen: the footer shows the filter.
pub(super) fn draw(_frame: &mut Frame, _areas: &Areas, _app: &App, _filter: &Filter) {}

/// The footer while the filter is typed: what is typed, and its keys where they fit.
pub(in crate::ui) fn draw_footer(frame: &mut Frame, area: Rect, app: &App, filter: &Filter) {
    let t = app.theme();
    let room = usize::from(area.width);
    let keys = hints(app.keys(), Mode::Filter, &HINTS);
    let help = format!("   {keys} · state: agent: group: context: !term");
    let typed = line(&filter.input, room.saturating_sub(4));
    let mut spans = vec![
        Span::styled(" / ", Style::new().fg(t.title).add_modifier(Modifier::BOLD)),
        Span::raw(typed),
        Span::styled("▏", Style::new().fg(t.title)),
    ];
    if spans_width(&spans) + width(&help) <= room {
        spans.push(Span::styled(help, t.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
