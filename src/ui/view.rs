//! Rendering: a pure function of the `App`. It reads, never changes, and its cost follows the
//! rows on screen, not the number of tasks or the size of their texts. Every string from an
//! agent goes through `text::sanitize` / `one_line` (via `format::line`) before it reaches a cell.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::app::{App, Overlay};
use super::format::{line, pad, plural, width, wrap};
use super::keys::Action;
use super::theme::health_glyph;
use super::{approvals, detail, footer, help, table};
use crate::event::Health;
use crate::store::Counts;

/// Lines an agent's trouble may take on its row before it is cut.
const HEALTH_LINES: usize = 3;
/// Where each part of the main screen goes, from the terminal size and what there is to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub title: Rect,
    pub agents: Rect,
    pub tasks: Rect,
    pub approvals: Rect,
    pub footer: Rect,
    /// Agents as one line of badges, approvals as one line with the links of one.
    pub compact: bool,
}

impl Areas {
    /// Rows the task table shows at once (inside the border, below the header row).
    pub fn page(&self) -> usize {
        usize::from(self.tasks.height.saturating_sub(3))
    }

    /// The detail pane covers everything between the title and the footer.
    pub fn body(&self) -> Rect {
        Rect {
            height: self.footer.y - self.agents.y,
            ..self.agents
        }
    }
}

pub(super) fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

pub fn areas(area: Rect, app: &App) -> Areas {
    let agents = to_u16(app.store.agents.len());
    let compact = area.width < 100 || area.height < agents.saturating_add(20);
    let agents_h = if compact {
        to_u16(agent_badges(app, usize::from(area.width)).len())
    } else {
        to_u16(agent_lines(app, usize::from(area.width.saturating_sub(2))).len()).saturating_add(2)
    };
    let approvals_h = if app.store.approval_count() == 0 {
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
    Areas {
        title,
        agents,
        tasks,
        approvals,
        footer,
        compact,
    }
}

/// What the loop does before each draw: the layout sets the page size, the rows are brought up
/// to date, and the detail pane's scroll is kept inside its text.
pub fn prepare(app: &mut App, area: Rect) {
    let a = areas(area, app);
    app.page = a.page();
    app.refresh();
    let max = match app.overlays.last() {
        Some(Overlay::Detail { key, .. }) => Some(detail::max_scroll(app, key, a.body())),
        _ => None,
    };
    if let (Some(max), Some(Overlay::Detail { scroll, .. })) = (max, app.overlays.last_mut()) {
        *scroll = (*scroll).min(max);
    }
}

pub fn draw(frame: &mut Frame, app: &App) {
    let a = areas(frame.area(), app);
    draw_title(frame, a.title, app);
    if a.compact {
        let lines = agent_badges(app, usize::from(a.agents.width));
        frame.render_widget(Paragraph::new(lines), a.agents);
    } else {
        draw_agents(frame, a.agents, app);
    }
    table::draw(frame, a.tasks, app);
    if a.approvals.height > 0 {
        approvals::draw(frame, a.approvals, app, a.compact);
    }
    footer::draw(frame, a.footer, app);
    for overlay in &app.overlays {
        match overlay {
            Overlay::Help => help::draw(frame, frame.area(), app),
            Overlay::Detail { key, scroll } => detail::draw(frame, a.body(), app, key, *scroll),
            Overlay::Filter { .. } => {}
        }
    }
    super::dialogs::draw_steer(frame, frame.area(), app);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Labels {
    /// `◆ 2 waiting on you`
    Long,
    /// `◆ 2 waiting`
    Medium,
    /// `● 2  ◆ 2 waiting  ✔ 1`: glyphs, and words only for what needs a person.
    Short,
}

fn counts_spans(c: &Counts, app: &App, labels: Labels) -> Vec<Span<'static>> {
    let t = &app.theme;
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

/// The app's name, the totals and the two keys everyone needs; the longest wording that fits.
fn draw_title(frame: &mut Frame, area: Rect, app: &App) {
    let t = &app.theme;
    let room = usize::from(area.width);
    let right = format!(
        "{} help  {} quit ",
        app.keys.hint(Action::Help),
        app.keys.hint(Action::Quit)
    );
    let totals = app.store.total_counts();
    let agents = plural(app.store.agents.len(), "agent");
    let tasks = plural(app.store.len(), "task");
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
    let right_w = width(&right);
    let [long, medium, short] = candidates;
    let left = [long, medium]
        .into_iter()
        .find(|s| spans_width(s) + right_w <= room)
        .unwrap_or(short);
    let show_right = spans_width(&left) + right_w <= room;
    frame.render_widget(Paragraph::new(Line::from(left)), area);
    if show_right {
        frame.render_widget(Paragraph::new(Line::styled(right, t.dim()).right_aligned()), area);
    }
}

pub(super) fn border<'a>(title: Line<'a>, app: &App, focused: bool) -> Block<'a> {
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

/// What is wrong with an agent, in the agent's own words, without repeating its name.
fn trouble(name: &str, health: &Health) -> Option<String> {
    let detail = health.detail()?;
    let detail = line(&detail, usize::MAX);
    Some(match detail.strip_prefix(name).and_then(|d| d.strip_prefix(": ")) {
        Some(rest) => rest.to_string(),
        None => detail,
    })
}

/// Columns for agent names: the longest name's, at least 5 and at most `max`.
pub(super) fn name_width(app: &App, max: usize) -> usize {
    app.store
        .agents
        .iter()
        .map(|a| width(&line(&a.name, max)))
        .max()
        .unwrap_or(5)
        .clamp(5, max)
}

/// One row per agent (its trouble wrapped under it), for a panel `width` columns wide inside.
fn agent_lines(app: &App, room: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let name_w = name_width(app, 24);
    let mut out = Vec::new();
    for (i, a) in app.store.agents.iter().enumerate() {
        let health = &a.health;
        let name = line(&a.name, name_w);
        let mut spans = vec![
            Span::raw(format!(" {}  ", pad(&name, name_w))),
            Span::styled(
                format!("{} {:<12}", health_glyph(health), health.label()),
                t.health(health),
            ),
            Span::styled(format!(" {:<15}", agent_protocol(app, i)), t.dim()),
        ];
        let hang = name_w + 32;
        match trouble(&name, health) {
            // What went wrong, where it went wrong: on the agent's own row.
            Some(detail) if !matches!(health, Health::Polling { .. }) => {
                spans.push(Span::styled(detail, t.health(health)));
            }
            _ => {
                spans.extend(counts_spans(&app.store.counts(i), app, Labels::Medium));
                if a.listing_cut {
                    spans.push(Span::styled("listing cut at the page limit; ", t.dim()));
                }
                if a.info.as_ref().is_some_and(|info| !info.lists_tasks) {
                    spans.push(Span::styled("0.3: no ListTasks; watching tasks started here", t.dim()));
                }
            }
        }
        out.extend(wrap(&Line::from(spans), room, hang, HEALTH_LINES));
    }
    out
}

fn draw_agents(frame: &mut Frame, area: Rect, app: &App) {
    let lines = agent_lines(app, usize::from(area.width.saturating_sub(2)));
    let title = Line::from(Span::styled(" Agents ", Style::new().fg(app.theme.title)));
    frame.render_widget(Paragraph::new(lines).block(border(title, app, false)), area);
}

/// Narrow screens: one line of badges, then, for an agent that cannot be watched at all, why
/// (the env var to set, the address that refused), since there is no agents panel to say it.
fn agent_badges(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for a in &app.store.agents {
        spans.push(Span::styled(
            format!(" {} ", health_glyph(&a.health)),
            t.health(&a.health),
        ));
        spans.push(Span::raw(line(&a.name, 14)));
        if !matches!(a.health, Health::Streaming) {
            spans.push(Span::styled(format!(" {}", a.health.label()), t.health(&a.health)));
        }
        spans.push(Span::raw(" "));
    }
    let mut out = wrap(&Line::from(spans), width, 0, 1);
    for a in &app.store.agents {
        if out.len() >= 5 {
            break;
        }
        if !matches!(a.health, Health::Unauthorized { .. } | Health::Unreachable { .. }) {
            continue;
        }
        let name = line(&a.name, 24);
        let detail = trouble(&name, &a.health).unwrap_or_default();
        let text = Line::styled(
            format!(" {} {name}: {detail}", health_glyph(&a.health)),
            t.health(&a.health),
        );
        out.extend(wrap(&text, width, 2, 2));
    }
    out
}
