//! The agents view (state and keys in `app::popup::agents`): every agent, one row each, over the
//! panes between the title and the footer; with groups, each group under a header with its
//! counts. The selected row is kept on screen by scrolling, computed here from the selection, so
//! drawing stays a pure function of the state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::super::agents::{agent_protocol, group_counts, group_spans, name_width, trouble};
use super::super::format::{ago, fit, line, pad, plural};
use crate::app::popup::agents::AgentsView;
use crate::app::{App, Areas};
use crate::event::{AgentId, Health};
use crate::theme::health_glyph;

/// Below this many columns inside, the protocol column gives its room to the reasons.
const WIDE: usize = 110;

/// The view's columns: name, health, protocol and binding (when wide), tasks per class (active,
/// waiting on you, done, failed/stopped, unknown), open streams, reconnects, the last event, and
/// why the agent is not streaming in what is left.
struct Columns {
    wide: bool,
    name: usize,
}

impl Columns {
    fn header(&self) -> String {
        let name = pad("AGENT", self.name);
        let protocol = if self.wide {
            format!("{:<14}", "PROTOCOL")
        } else {
            String::new()
        };
        let (streams, reconnects) = if self.wide {
            ("STREAMS", "RECONNECTS")
        } else {
            ("STR", "REC")
        };
        format!(
            "  {name} {:<15}{protocol}{:>4}{:>4}{:>5}{:>4}{:>3} {streams:>3} {reconnects:>3} {:>8}  WHY",
            "HEALTH", "●", "◆", "✔", "✖", "?", "LAST"
        )
    }

    fn row(&self, app: &App, agent: AgentId, selected: bool, room: usize) -> Line<'static> {
        let (t, store) = (app.theme(), app.store());
        let a = &store.agents[agent];
        let c = store.counts(agent);
        let name = line(&a.name, self.name);
        let marker = if selected { "▶ " } else { "  " };
        let mut spans = vec![
            Span::styled(marker, Style::new().fg(t.title)),
            Span::raw(format!("{} ", pad(&name, self.name))),
            Span::styled(
                format!("{} {:<12} ", health_glyph(&a.health), a.health.label()),
                t.health(&a.health),
            ),
        ];
        if self.wide {
            spans.push(Span::styled(format!("{:<14}", agent_protocol(app, agent)), t.dim()));
        }
        let count = |n: usize, w: usize, style: Style| {
            let text = if n == 0 { "·".to_string() } else { n.to_string() };
            Span::styled(format!("{text:>w$}"), if n == 0 { t.dim() } else { style })
        };
        spans.extend([
            count(c.active, 4, Style::new().fg(t.active)),
            count(
                c.interrupted,
                4,
                Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
            ),
            count(c.completed, 5, Style::new().fg(t.success)),
            count(c.ended, 4, Style::new().fg(t.failure)),
            count(c.unknown, 3, Style::new().fg(t.unknown)),
        ]);
        let (streams_w, reconnects_w) = if self.wide { (7, 10) } else { (3, 3) };
        let last = a.last_event.map_or_else(|| "-".to_string(), |at| ago(app.now(), at));
        spans.push(Span::raw(format!(
            " {:>streams_w$} {:>reconnects_w$} {last:>8}  ",
            a.streams, a.reconnects
        )));
        // Why it is not streaming, in the agent's words, in what is left of the row.
        if !matches!(a.health, Health::Streaming) {
            let used: usize = spans.iter().map(Span::width).sum();
            let why = trouble(&name, &a.health).unwrap_or_default();
            spans.push(Span::styled(line(&why, room.saturating_sub(used)), t.health(&a.health)));
        }
        let row = Line::from(spans);
        if selected {
            row.style(Style::new().bg(t.selection))
        } else {
            row
        }
    }
}

pub(super) fn draw(frame: &mut Frame, areas: &Areas, app: &App, view: &AgentsView) {
    let area = areas.body();
    if area.height == 0 || area.width == 0 {
        return;
    }
    let (t, store) = (app.theme(), app.store());
    let rows = view.rows(store);
    let selected = view.selected_row(&rows);
    let filter = match view.filter.text() {
        "" => String::new(),
        text => format!(" · /{}", line(text, 40)),
    };
    let shown = match rows.len() {
        n if n == store.agents.len() => plural(n, "agent"),
        n => format!("{n} of {}", plural(store.agents.len(), "agent")),
    };
    // Its keys are in the footer.
    let title = format!(" {shown} by {}{filter} ", view.sort.label());
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(t.title))
        .title(Line::styled(
            fit(&title, usize::from(area.width.saturating_sub(2))),
            Style::new().fg(t.title).add_modifier(Modifier::BOLD),
        ));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let room = usize::from(inner.width);
    let columns = Columns {
        wide: room >= WIDE,
        name: name_width(app, if room >= WIDE { 24 } else { 14 }),
    };
    // What each line holds: a group's header before its first row, or a row (its place among
    // the rows, its agent). Only the lines on screen are drawn.
    let groups = group_counts(app);
    let mut layout: Vec<Option<(usize, AgentId)>> = Vec::new();
    let mut selected_line = 0;
    for (i, &agent) in rows.iter().enumerate() {
        let group = |row: usize| store.agents[row].group.as_deref();
        if !groups.is_empty() && (i == 0 || group(rows[i - 1]) != group(agent)) {
            layout.push(None);
        }
        if i == selected {
            selected_line = layout.len();
        }
        layout.push(Some((i, agent)));
    }
    let visible = usize::from(inner.height.saturating_sub(1));
    let offset = (selected_line + 1).saturating_sub(visible);
    let mut lines: Vec<Line> = (layout.iter().enumerate().skip(offset).take(visible))
        .map(|(at, held)| match *held {
            Some((i, agent)) => columns.row(app, agent, i == selected, room),
            None => {
                // A header comes before a row of its group.
                let next = layout.get(at + 1).copied().flatten();
                let group = next.and_then(|(_, agent)| store.agents.get(agent)?.group.as_deref());
                let mut spans = vec![Span::styled(" ▸ ", Style::new().fg(t.title))];
                if let Some(counts) = groups.iter().find(|c| c.name == group) {
                    spans.extend(group_spans(counts, app));
                }
                Line::from(spans).style(Style::new().add_modifier(Modifier::BOLD))
            }
        })
        .collect();
    if rows.is_empty() {
        lines.push(Line::styled("  No agent matches the filter.", t.dim()));
    }
    let header = Line::styled(fit(&columns.header(), room), Style::new().fg(t.header));
    frame.render_widget(Paragraph::new(header), Rect { height: 1, ..inner });
    let body = Rect {
        y: inner.y.saturating_add(1),
        height: inner.height.saturating_sub(1),
        ..inner
    };
    frame.render_widget(Paragraph::new(lines), body);
}
