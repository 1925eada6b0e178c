//! The title line: the app's name, the totals, each group's counts when agents are grouped, and
//! the keys for help and quit (a replay's clock instead, in a replay).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::agents::{group_counts, group_spans};
use super::format::{plural, width};
use super::view::{Labels, counts_spans, spans_width};
use crate::app::App;
use crate::app::keys::Action;

/// The app's name, the totals and the two keys everyone needs; the longest wording that fits.
pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let t = app.theme();
    let room = usize::from(area.width);
    // A replay's clock takes the place of the two keys (the footer has them too).
    let right = match &app.banner() {
        Some(banner) => format!("{banner} "),
        None => format!(
            "{} help  {} quit ",
            app.keys().hint(Action::Help),
            app.keys().hint(Action::Quit)
        ),
    };
    let totals = app.store().total_counts();
    let agents = plural(app.store().agents.len(), "agent");
    let tasks = plural(app.store().len(), "task");
    let variants = [
        (format!(" {agents}  {tasks}   "), Labels::Long),
        (format!(" {agents}  {tasks}   "), Labels::Medium),
        (format!(" {tasks}  "), Labels::Short),
    ];
    let candidates = variants.map(|(head, labels)| {
        let mut spans = vec![
            Span::styled(" a2a-watch ", Style::new().fg(t.title).add_modifier(Modifier::BOLD)),
            Span::styled(head, t.dim()),
        ];
        spans.extend(counts_spans(&totals, app, labels));
        spans
    });
    // With groups (the config's `group`), each one's counts follow the totals where they fit.
    let mut groups = Vec::new();
    for g in group_counts(app).iter().filter(|g| g.name.is_some()) {
        groups.extend(group_spans(g, app));
        groups.push(Span::raw("  "));
    }
    let right_w = width(&right);
    let [long, medium, short] = candidates;
    let with_groups = (!groups.is_empty())
        .then(|| [&long, &medium].map(|counts| counts.iter().chain(&groups).cloned().collect::<Vec<_>>()));
    let left = (with_groups.into_iter().flatten())
        .chain([long, medium])
        .find(|s| spans_width(s) + right_w <= room)
        .unwrap_or(short);
    let show_right = spans_width(&left) + right_w <= room;
    frame.render_widget(Paragraph::new(Line::from(left)), area);
    if show_right {
        frame.render_widget(Paragraph::new(Line::styled(right, t.dim()).right_aligned()), area);
    }
}
