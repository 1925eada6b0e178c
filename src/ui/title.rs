//! The title line: the app's name, the totals, each group's counts when agents are grouped, and
//! the keys for help and quit (a replay's clock instead, in a replay), and a warning while the
//! traces export fails.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::agents::{group_counts, group_spans};
use super::format::plural;
use super::view::{Labels, counts_spans, spans_width};
use crate::app::App;
use crate::app::keys::Action;

/// Said while the collector does not take spans (`--otlp`, issue 22).
const EXPORT_FAILING: &str = "⚠ traces: collector unreachable";

/// The app's name, the totals and the two keys everyone needs, and the export's warning when it
/// fails; the longest wording that fits.
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
    let [long, medium, short] = candidates;
    let with_groups = (!groups.is_empty())
        .then(|| [&long, &medium].map(|counts| counts.iter().chain(&groups).cloned().collect::<Vec<_>>()));
    let lefts: Vec<Vec<Span>> = (with_groups.into_iter().flatten())
        .chain([long, medium, short.clone()])
        .collect();
    // The export's warning matters more than the keys, the keys more than long totals.
    let keys = Span::styled(right, t.dim());
    let rights = match app.export() {
        Some(export) if export.failing => {
            let warning = |text: &str| Span::styled(text.to_string(), Style::new().fg(t.broken));
            vec![
                vec![warning(&format!("{EXPORT_FAILING}  ")), keys],
                vec![warning(&format!("{EXPORT_FAILING} "))],
                vec![warning("⚠ traces ")],
            ]
        }
        _ => vec![vec![keys]],
    };
    let chosen = rights.into_iter().find_map(|right| {
        let right_w = spans_width(&right);
        let left = lefts.iter().find(|left| spans_width(left) + right_w <= room)?;
        Some((left.clone(), right))
    });
    let (left, right) = chosen.unwrap_or((short, Vec::new()));
    frame.render_widget(Paragraph::new(Line::from(left)), area);
    if !right.is_empty() {
        frame.render_widget(Paragraph::new(Line::from(right).right_aligned()), area);
    }
}
