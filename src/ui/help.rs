//! The help popup, drawn from the key map itself, so every bound key is listed.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::format::{fit, width, wrap};
use super::view::{border, to_u16};
use crate::app::App;
use crate::app::keys::Action;

/// Help drawn from the key map itself: one column where it fits, two where it does not (the
/// whole map must be readable on 80x24).
pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let entries: Vec<(String, &str)> = Action::HELP
        .iter()
        .map(|(action, what)| {
            let keys: Vec<String> = app.keys.keys_for(*action).iter().map(ToString::to_string).collect();
            let keys = if keys.is_empty() {
                "(unbound)".to_string()
            } else {
                keys.join(" ")
            };
            (keys, *what)
        })
        .collect();
    let key_w = entries.iter().map(|(k, _)| width(k)).max().unwrap_or(1).min(16);
    let bold = Style::new().fg(t.title).add_modifier(Modifier::BOLD);
    let column = |entries: &[(String, &str)], col_w: usize| -> Vec<Line<'static>> {
        entries
            .iter()
            .flat_map(|(keys, what)| {
                let keys = fit(keys, key_w);
                let lead = " ".repeat(1 + key_w - width(&keys));
                let entry = Line::from(vec![
                    Span::styled(format!("{lead}{keys}  "), bold),
                    Span::raw(what.to_string()),
                ]);
                wrap(&entry, col_w, width(&keys) + 2, 3)
            })
            .collect()
    };
    let w = 80.min(area.width);
    let inner_w = usize::from(w.saturating_sub(2));
    let room = usize::from(area.height.saturating_sub(2));
    let notes: Vec<Line> = [
        "Keys can be changed in the config file: [keys] \"ctrl-d\" = \"page_down\"",
        "Any key closes this help.",
    ]
    .iter()
    .flat_map(|n| wrap(&Line::styled(format!(" {n}"), t.dim()), inner_w, 0, 2))
    .collect();
    let one = column(&entries, inner_w);
    let (left, right) = if one.len() + 2 + notes.len() <= room {
        (one, Vec::new())
    } else {
        // Two columns, split where the lines balance.
        let col_w = inner_w.saturating_sub(1) / 2;
        let heights: Vec<usize> = entries
            .iter()
            .map(|e| column(std::slice::from_ref(e), col_w).len())
            .collect();
        let total: usize = heights.iter().sum();
        let mut split = 0;
        let mut acc = 0;
        while split < entries.len() && acc + heights[split] <= total.div_ceil(2) {
            acc += heights[split];
            split += 1;
        }
        (column(&entries[..split], col_w), column(&entries[split..], col_w))
    };
    let body = left.len().max(right.len());
    // A blank line above the keys and one above the notes.
    let h = to_u16(body + 4 + notes.len()).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, popup);
    let block = border(Line::styled(" Help ", Style::new().fg(t.title)), app, true);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    let [top, _, bottom] = Layout::vertical([
        Constraint::Length(to_u16(body + 1)),
        Constraint::Fill(1),
        Constraint::Length(to_u16(notes.len())),
    ])
    .areas(inner);
    let top = Rect {
        y: top.y + 1,
        height: top.height.saturating_sub(1),
        ..top
    };
    if right.is_empty() {
        frame.render_widget(Paragraph::new(left), top);
    } else {
        let [l, _, r] =
            Layout::horizontal([Constraint::Fill(1), Constraint::Length(1), Constraint::Fill(1)]).areas(top);
        frame.render_widget(Paragraph::new(left), l);
        frame.render_widget(Paragraph::new(right), r);
    }
    frame.render_widget(Paragraph::new(notes), bottom);
}
