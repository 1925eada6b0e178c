//! The task table: one row per task on screen, as wide as the terminal allows; only the rows
//! on screen are built.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table, Wrap};

use super::agents::name_width;
use super::format::{SHORT_ID, STATE_NAME, ago, line, plural, short_id, state_name, task_id, waited, width};
use super::view::{border, to_u16};
use crate::a2a::Part;
use crate::app::{App, Pane};
use crate::store::TaskEntry;
use crate::text::head;
use crate::theme::state_glyph;

pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let t = app.theme();
    let wide = area.width >= 110;
    let block = border(pane_title(app, " Tasks ", true), app, app.focus() == Pane::Tasks);
    if app.row_count() == 0 {
        draw_empty(frame, area, app, block);
        return;
    }
    // The agent column is as wide as the longest name, within limits: a short tag when narrow.
    let agent_w = name_width(app, if wide { 16 } else { 10 });
    let page = usize::from(area.height.saturating_sub(3));
    // Only the rows on screen are built; their ids decide how wide the id column is.
    let shown: Vec<(usize, &TaskEntry, String)> = app
        .rows_from(app.offset())
        .take(page)
        .enumerate()
        .filter_map(|(i, key)| {
            let task = app.store().task(key)?;
            Some((i + app.offset(), task, task_id(app.store(), &key.id)))
        })
        .collect();
    let id_w = shown.iter().map(|(_, _, id)| width(id)).fold(SHORT_ID, usize::max);
    const STATE_W: usize = STATE_NAME + 2;
    let (header, fixed): (Vec<&str>, Vec<usize>) = if wide {
        (
            vec!["AGENT", "TASK", "CONTEXT", "STATE", "FOR", "UPDATED", "STATUS", "ART"],
            vec![agent_w, id_w, 8, STATE_W, 5, 7, 0, 3],
        )
    } else {
        (
            vec!["AGENT", "TASK", "STATE", "FOR", "STATUS"],
            vec![agent_w, id_w, STATE_W, 5, 0],
        )
    };
    // Room to breathe between columns once the status text has plenty.
    let spacing = if area.width >= 150 { 2 } else { 1 };
    let inner = usize::from(area.width.saturating_sub(2));
    let status_w = inner.saturating_sub(fixed.iter().sum::<usize>() + spacing * (fixed.len() - 1));
    let widths: Vec<Constraint> = fixed
        .iter()
        .map(|&w| {
            if w == 0 {
                Constraint::Fill(1)
            } else {
                Constraint::Length(to_u16(w))
            }
        })
        .collect();
    let selected = app.selected_index();
    let body: Vec<Row> = shown
        .into_iter()
        .map(|(i, task, id)| {
            let row = Row::new(task_cells(app, task, id, wide, agent_w, status_w));
            if Some(i) == selected {
                row.style(Style::new().bg(t.selection))
            } else {
                row
            }
        })
        .collect();
    let header = Row::new(header).style(Style::new().bg(t.header).add_modifier(Modifier::BOLD));
    let table = Table::new(body, widths)
        .header(header)
        .block(block)
        .column_spacing(to_u16(spacing));
    frame.render_widget(table, area);
}

/// The title of the pane in the tasks' place (the table, the tree): frozen first, as what must
/// not be missed, then what narrows it.
pub(super) fn pane_title(app: &App, name: &'static str, sorted: bool) -> Line<'static> {
    let t = app.theme();
    let mut title = vec![Span::styled(name, Style::new().fg(t.title))];
    if app.frozen().is_some() {
        let new = app.new_since_freeze();
        title.push(Span::styled(
            format!("── FROZEN +{new} new "),
            Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
        ));
    }
    if sorted {
        title.push(Span::styled(format!("── sort: {} ", app.sort_label()), t.dim()));
    }
    if !app.spec().filter.is_empty() {
        title.push(Span::styled(
            format!("── filter: {} ", line(app.spec().filter.text(), 30)),
            t.dim(),
        ));
    }
    if app.spec().hide_terminal {
        title.push(Span::styled("── finished hidden ", t.dim()));
    }
    Line::from(title)
}

/// Says why there are no rows, inside the pane's frame.
pub(super) fn draw_empty(frame: &mut Frame, area: Rect, app: &App, block: Block) {
    let msg = if app.store().agents.is_empty() {
        "No agents. Pass --agent URL, or add [[agent]] entries to the config file.".to_string()
    } else if app.store().is_empty() {
        format!(
            "No tasks yet. Watching {}; tasks appear as they report them.",
            plural(app.store().agents.len(), "agent")
        )
    } else if app.spec().filter.is_empty() {
        "Every task is finished; t shows them again.".to_string()
    } else {
        "No task matches the filter. Esc clears it.".to_string()
    };
    let p = Paragraph::new(Line::styled(msg, app.theme().dim()).centered())
        .block(block)
        .wrap(Wrap { trim: true });
    frame.render_widget(p, area);
}

/// A task's state in its colour (reversed, for unknown): only the words, not the padding after.
pub(super) fn state_words(app: &App, task: &TaskEntry) -> Span<'static> {
    let t = app.theme();
    if task.not_found {
        Span::styled("? not found", Style::new().fg(t.failure))
    } else {
        let state = task.state();
        Span::styled(format!("{} {}", state_glyph(state), state_name(state)), t.state(state))
    }
}

/// The text of a status message, as far as one line can show: a huge message is not copied.
pub(super) fn status_head(task: &TaskEntry) -> Cow<'_, str> {
    let parts = task.status.message.as_ref().map_or(&[][..], |m| &m.parts[..]);
    let mut texts = parts.iter().filter_map(Part::as_text);
    let first = texts.next().unwrap_or("");
    let mut rest = texts.peekable();
    if rest.peek().is_none() {
        return Cow::Borrowed(first);
    }
    let mut out = head(first, 4096).0.to_string();
    for text in rest.take(16) {
        out.push('\n');
        out.push_str(head(text, 4096).0);
    }
    Cow::Owned(out)
}

/// What a task says, in one line of `width` columns: quiet for how long, its warning, its status
/// message; in the warning colour when there is one.
pub(super) fn status_words(app: &App, task: &TaskEntry, width: usize) -> Span<'static> {
    let t = app.theme();
    // A stream silent for a while says for how long (issue 9), before anything else; not a task
    // waiting on a person, quiet by nature, whose FOR column already says how long it waited.
    let quiet = task
        .quiet_since
        .filter(|_| !task.state().is_interrupted())
        .map(|since| format!("quiet {} · ", waited(app.now(), since)))
        .unwrap_or_default();
    match &task.error {
        Some(err) => Span::styled(
            line(
                &format!("{quiet}⚠ {} · {}", line(err, 200), line(&status_head(task), 200)),
                width,
            ),
            Style::new().fg(t.failure),
        ),
        None => Span::styled(
            line(&format!("{quiet}{}", status_head(task)), width),
            Style::new().fg(t.text),
        ),
    }
}

fn task_cells(
    app: &App,
    task: &TaskEntry,
    id: String,
    wide: bool,
    agent_w: usize,
    status_w: usize,
) -> Vec<Cell<'static>> {
    let t = app.theme();
    let agent = app.store().agent_name(task.key.agent);
    let mut cells = vec![Cell::from(line(agent, agent_w)), Cell::from(id)];
    if wide {
        cells.push(Cell::from(short_id(&task.context)).style(t.dim()));
    }
    cells.push(Cell::from(Line::from(state_words(app, task))));
    cells.push(Cell::from(waited(app.now(), task.state_since)));
    if wide {
        cells.push(Cell::from(ago(app.now(), task.updated)).style(t.dim()));
    }
    cells.push(Cell::from(Line::from(status_words(app, task, status_w))));
    if wide {
        cells.push(Cell::from(format!("{:>3}", task.artifacts.len())));
    }
    cells
}
