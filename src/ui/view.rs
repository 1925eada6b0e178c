//! Rendering: a pure function of the `App`. It reads, never changes, and its cost follows the
//! rows on screen, not the number of tasks. Every string from an agent goes through
//! `text::sanitize` / `one_line` before it reaches a cell.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table, Wrap};

use super::app::{App, Focus, Overlay};
use super::detail;
use super::format::{ago, fit, short_id, waited};
use super::keys::Action;
use super::theme::{health_glyph, state_glyph};
use crate::store::Counts;
use crate::text::one_line;

/// Where each part of the main screen goes, from the terminal size alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub title: Rect,
    pub agents: Rect,
    pub tasks: Rect,
    pub approvals: Rect,
    pub footer: Rect,
    /// Agents as one line of badges, approvals as one line.
    pub compact: bool,
}

impl Areas {
    /// Rows the task table shows at once (inside the border, below the header row).
    pub fn page(&self) -> usize {
        usize::from(self.tasks.height.saturating_sub(3))
    }
}

pub fn areas(area: Rect, app: &App) -> Areas {
    let agents = app.store.agents.len() as u16;
    let compact = area.width < 100 || area.height < agents + 20;
    let agents_h = if compact { 1 } else { agents + 2 };
    let approvals = app.approvals().len() as u16;
    let approvals_h = match approvals {
        0 => 0,
        _ if compact => 1,
        n => (n * 2 + 2).min(area.height / 3).max(4),
    };
    let [title, agents, tasks, approvals, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(agents_h),
        Constraint::Min(4),
        Constraint::Length(approvals_h),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        title,
        agents,
        tasks,
        approvals,
        footer,
        compact,
    }
}

pub fn draw(frame: &mut Frame, app: &App) {
    let a = areas(frame.area(), app);
    draw_title(frame, a.title, app);
    if a.compact {
        draw_agent_badges(frame, a.agents, app);
    } else {
        draw_agents(frame, a.agents, app);
    }
    draw_tasks(frame, a.tasks, app);
    if a.approvals.height > 0 {
        draw_approvals(frame, a.approvals, app, a.compact);
    }
    draw_footer(frame, a.footer, app);
    for overlay in &app.overlays {
        match overlay {
            Overlay::Help => draw_help(frame, frame.area(), app),
            Overlay::Detail { key, scroll } => {
                let body = Rect {
                    y: a.agents.y,
                    height: a.footer.y - a.agents.y,
                    ..frame.area()
                };
                detail::draw(frame, body, app, key, *scroll);
            }
            Overlay::Filter { .. } => {}
        }
    }
}

fn counts_spans<'a>(c: &Counts, app: &App, long: bool) -> Vec<Span<'a>> {
    let t = &app.theme;
    let mut spans = Vec::new();
    let mut push = |n: usize, glyph: &str, label: &str, style: Style| {
        if n > 0 || label == "active" {
            spans.push(Span::styled(format!("{glyph} {n} {label}"), style));
            spans.push(Span::raw("  "));
        }
    };
    let waiting = if long { "waiting on you" } else { "waiting" };
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

fn draw_title(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let mut spans = vec![
        Span::styled(" a2a-watch ", Style::new().fg(t.title).add_modifier(Modifier::BOLD)),
        Span::styled(
            format!(" {} agents  {} tasks   ", app.store.agents.len(), app.store.len()),
            t.dim(),
        ),
    ];
    spans.extend(counts_spans(&app.store.total_counts(), app, area.width >= 100));
    let left = Line::from(spans);
    let right = Line::from(vec![Span::styled(
        format!(
            "{} help  {} quit ",
            app.keys.hint(Action::Help),
            app.keys.hint(Action::Quit)
        ),
        t.dim(),
    )])
    .right_aligned();
    frame.render_widget(Paragraph::new(left), area);
    frame.render_widget(Paragraph::new(right), area);
}

fn border<'a>(title: Line<'a>, app: &App, focused: bool) -> Block<'a> {
    let color = if focused { app.theme.title } else { app.theme.border };
    Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(color))
        .title(title)
}

fn agent_protocol(app: &App, i: usize) -> String {
    match &app.store.agents[i].info {
        Some(info) => format!("{} {}", info.version.label(), info.binding.label()),
        None => "-".into(),
    }
}

fn draw_agents(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let name_w = app
        .store
        .agents
        .iter()
        .map(|a| a.name.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 24);
    let lines: Vec<Line> = app
        .store
        .agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let health = &a.health;
            let mut spans = vec![
                Span::raw(format!(" {:<name_w$}  ", fit(&one_line(&a.name), name_w))),
                Span::styled(
                    format!("{} {:<12}", health_glyph(health), health.label()),
                    t.health(health),
                ),
                Span::styled(format!(" {:<15}", agent_protocol(app, i)), t.dim()),
            ];
            match health.detail() {
                // What went wrong, where it went wrong: on the agent's own row.
                Some(detail) if !matches!(health, crate::watch::Health::Polling { .. }) => {
                    spans.push(Span::styled(one_line(&detail), t.health(health)));
                }
                _ => {
                    spans.extend(counts_spans(&app.store.counts(i), app, false));
                    if a.info.as_ref().is_some_and(|info| !info.lists_tasks) {
                        spans.push(Span::styled("0.3: no ListTasks; watching tasks started here", t.dim()));
                    }
                }
            }
            Line::from(spans)
        })
        .collect();
    let title = Line::from(Span::styled(" Agents ", Style::new().fg(t.title)));
    frame.render_widget(Paragraph::new(lines).block(border(title, app, false)), area);
}

fn draw_agent_badges(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let mut spans = Vec::new();
    for a in &app.store.agents {
        spans.push(Span::styled(
            format!(" {} ", health_glyph(&a.health)),
            t.health(&a.health),
        ));
        spans.push(Span::raw(fit(&one_line(&a.name), 14)));
        if !matches!(a.health, crate::watch::Health::Streaming) {
            spans.push(Span::styled(format!(" {}", a.health.label()), t.health(&a.health)));
        }
        spans.push(Span::raw(" "));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_tasks(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let wide = area.width >= 110;
    let filter = if app.spec.filter.is_empty() {
        "none".to_string()
    } else {
        fit(app.spec.filter.text(), 30)
    };
    let mut title = vec![
        Span::styled(" Tasks ", Style::new().fg(t.title)),
        Span::styled(format!("── sort: {} ── filter: {} ", app.sort_label(), filter), t.dim()),
    ];
    if app.spec.hide_terminal {
        title.push(Span::styled("── finished hidden ", t.dim()));
    }
    if app.frozen.is_some() {
        let new = app.new_since_freeze();
        title.push(Span::styled(
            format!("── FROZEN +{new} new "),
            Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
        ));
    }
    let block = border(Line::from(title), app, app.focus == Focus::Tasks);
    let rows = app.rows();
    if rows.is_empty() {
        let msg = if app.store.agents.is_empty() {
            "No agents. Pass --agent URL, or add [[agent]] entries to the config file.".to_string()
        } else if app.store.is_empty() {
            format!(
                "No tasks yet. Watching {} agents; tasks appear as they report them.",
                app.store.agents.len()
            )
        } else {
            "No task matches the filter. Esc clears it.".to_string()
        };
        let p = Paragraph::new(Line::styled(msg, t.dim()).centered())
            .block(block)
            .wrap(Wrap { trim: true });
        frame.render_widget(p, area);
        return;
    }
    let page = usize::from(area.height.saturating_sub(3));
    let selected = app.selected_index();
    let visible = rows.iter().enumerate().skip(app.offset).take(page);
    let body: Vec<Row> = visible
        .filter_map(|(i, key)| {
            let task = app.store.task(key)?;
            let state = task.state();
            let agent = app.store.agent_name(key.agent);
            let mut status = one_line(&task.status.text());
            if let Some(err) = &task.error {
                status = format!("⚠ {} · {status}", one_line(err));
            }
            let mut cells = vec![
                Cell::from(fit(&one_line(agent), if wide { 14 } else { 10 })),
                Cell::from(short_id(&key.id)),
            ];
            if wide {
                cells.push(Cell::from(short_id(&task.context)).style(t.dim()));
            }
            cells.push(Cell::from(format!("{} {}", state_glyph(state), state.short_name())).style(t.state(state)));
            cells.push(Cell::from(waited(app.now, task.state_since)));
            if wide {
                cells.push(Cell::from(ago(app.now, task.updated)).style(t.dim()));
            }
            let status_style = if task.error.is_some() {
                Style::new().fg(t.failure)
            } else {
                Style::new().fg(t.text)
            };
            cells.push(Cell::from(status).style(status_style));
            if wide {
                cells.push(Cell::from(format!("{:>3}", task.artifacts.len())));
            }
            let row = Row::new(cells);
            Some(if Some(i) == selected {
                row.style(Style::new().bg(t.selection))
            } else {
                row
            })
        })
        .collect();
    let (header, widths): (Vec<&str>, Vec<Constraint>) = if wide {
        (
            vec!["AGENT", "TASK", "CONTEXT", "STATE", "FOR", "UPDATED", "STATUS", "ART"],
            vec![
                Constraint::Length(14),
                Constraint::Length(8),
                Constraint::Length(8),
                Constraint::Length(17),
                Constraint::Length(6),
                Constraint::Length(8),
                Constraint::Fill(1),
                Constraint::Length(3),
            ],
        )
    } else {
        (
            vec!["AGENT", "TASK", "STATE", "FOR", "STATUS"],
            vec![
                Constraint::Length(10),
                Constraint::Length(8),
                Constraint::Length(17),
                Constraint::Length(6),
                Constraint::Fill(1),
            ],
        )
    };
    let header = Row::new(header).style(Style::new().bg(t.header).add_modifier(Modifier::BOLD));
    let table = Table::new(body, widths).header(header).block(block).column_spacing(1);
    frame.render_widget(table, area);
}

fn draw_approvals(frame: &mut Frame, area: Rect, app: &App, compact: bool) {
    let t = &app.theme;
    let pending = app.approvals();
    if compact {
        let first = pending.first().map(|p| {
            format!(
                " {} {} {}",
                app.store.agent_name(p.key.agent),
                short_id(&p.key.id),
                one_line(&p.status.text())
            )
        });
        let line = Line::from(vec![
            Span::styled(
                format!(" ◆ {} waiting for approval", pending.len()),
                Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
            ),
            Span::raw(first.unwrap_or_default()),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let focused = app.focus == Focus::Approvals;
    let mut lines = Vec::new();
    for (i, p) in pending.iter().enumerate() {
        let marker = if focused && i == app.approval { "▶" } else { " " };
        let agent = one_line(app.store.agent_name(p.key.agent));
        let prompt = one_line(&p.status.text());
        lines.push(Line::from(vec![
            Span::styled(marker, Style::new().fg(t.title)),
            Span::raw(format!("{agent}  ")),
            Span::styled(format!("{}  ", short_id(&p.key.id)), t.dim()),
            Span::styled(
                format!("{}  ", waited(app.now, p.state_since)),
                Style::new().fg(t.interrupted),
            ),
            Span::raw(prompt),
        ]));
        let found: Vec<String> = p.status.message.as_ref().map(|m| m.links()).unwrap_or_default();
        if found.is_empty() {
            lines.push(Line::styled("    (no link in the status message)", t.dim()));
        }
        for link in found {
            lines.push(Line::styled(
                format!("    {}", one_line(&link)),
                Style::new().fg(t.link).add_modifier(Modifier::UNDERLINED),
            ));
        }
    }
    let title = Line::from(Span::styled(
        format!(" Waiting for approval ({}) ", pending.len()),
        Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
    ));
    // Links are shown whole: wrapped, never cut.
    let p = Paragraph::new(lines)
        .block(border(title, app, focused))
        .wrap(Wrap { trim: false });
    frame.render_widget(p, area);
}

fn draw_footer(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    if let Some(Overlay::Filter { input }) = app.overlays.last() {
        let line = Line::from(vec![
            Span::styled(" / ", Style::new().fg(t.title).add_modifier(Modifier::BOLD)),
            Span::raw(one_line(input)),
            Span::styled("▏", Style::new().fg(t.title)),
            Span::styled("   ⏎ keep · esc clear · state: agent: context: !term", t.dim()),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let k = |a: Action| app.keys.hint(a);
    let hints = format!(
        " {}{} move  {} details  {} filter  {} sort  {} freeze  {} finished  {} approvals",
        k(Action::Up),
        k(Action::Down),
        k(Action::Details),
        k(Action::Filter),
        k(Action::Sort),
        k(Action::Freeze),
        k(Action::ToggleTerminal),
        k(Action::FocusNext)
    );
    let waiting = app.store.total_counts().interrupted;
    let live = if app.frozen.is_some() {
        "frozen".to_string()
    } else {
        "live".to_string()
    };
    let right = Line::from(vec![
        Span::styled(format!("{waiting} waiting"), Style::new().fg(t.interrupted)),
        Span::styled(format!(" · {live} "), t.dim()),
    ])
    .right_aligned();
    frame.render_widget(Paragraph::new(Line::styled(hints, t.dim())), area);
    frame.render_widget(Paragraph::new(right), area);
}

/// Help drawn from the key map itself.
fn draw_help(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let mut lines = vec![Line::raw("")];
    for (action, what) in Action::HELP {
        let keys: Vec<String> = app.keys.keys_for(action).iter().map(ToString::to_string).collect();
        let keys = if keys.is_empty() {
            "(unbound)".to_string()
        } else {
            keys.join(" ")
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("  {keys:>16}  "),
                Style::new().fg(t.title).add_modifier(Modifier::BOLD),
            ),
            Span::raw(what),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "  Keys can be changed in the config file: [keys] \"ctrl-d\" = \"page_down\"",
        t.dim(),
    ));
    lines.push(Line::styled("  Any key closes this help.", t.dim()));
    let h = (lines.len() as u16 + 2).min(area.height);
    let w = 80.min(area.width);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, popup);
    let block = border(Line::styled(" Help ", Style::new().fg(t.title)), app, true);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
