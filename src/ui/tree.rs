//! The delegation tree, in the table's place: contexts with their agent and a readable label,
//! their tasks, and the tasks that refer to them nested below; every branch with its counts by class. Only the
//! rows on screen are built; the columns and colours are the table's.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::format::{STATE_NAME, fit, line, short_id, task_id, waited, width};
use super::table::{draw_empty, pane_title, state_words, status_words};
use super::view::{Labels, border, counts_spans, spans_width};
use crate::a2a::{Part, Role, StateClass};
use crate::app::tree::Row;
use crate::app::{App, Pane};
use crate::event::AgentId;
use crate::store::TaskKey;
use crate::store::tree::Node;

const STATE_W: usize = STATE_NAME + 2;
const FOR_W: usize = 5;

pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let t = app.theme();
    let block = border(pane_title(app, " Tree ", false), app, app.focus() == Pane::Tasks);
    let view = app.tree();
    if view.row_count() == 0 {
        draw_empty(frame, area, app, block);
        return;
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let columns = Columns::new(usize::from(inner.width), area.width >= 110);
    let buf = frame.buffer_mut();
    let header = Rect { height: 1, ..inner };
    buf.set_style(header, Style::new().bg(t.header).add_modifier(Modifier::BOLD));
    let mut head = Vec::new();
    columns.push_cells(&mut head, ["TASK", "STATE", "FOR"].map(Span::raw));
    head.push(Span::raw("STATUS · BELOW"));
    buf.set_line(header.x, header.y, &Line::from(head), header.width);
    let selected = view.selected_index();
    let page = usize::from(inner.height.saturating_sub(1));
    for (i, row) in view.rows_from(view.offset).iter().take(page).enumerate() {
        let rect = Rect {
            y: inner.y + 1 + super::view::to_u16(i),
            height: 1,
            ..inner
        };
        if Some(view.offset + i) == selected {
            buf.set_style(rect, Style::new().bg(t.selection));
        }
        let spans = match &row.node {
            Node::Context { agent, id } => context_row(app, row, *agent, id, &columns),
            Node::Task(key) => task_row(app, row, key, &columns),
        };
        buf.set_line(rect.x, rect.y, &Line::from(spans), rect.width);
    }
}

/// Column widths: the tree (indent, marker, agent and task), the state, the time in it, and the
/// rest for the status and the branch's counts.
struct Columns {
    tree: usize,
    rest: usize,
    inner: usize,
}

impl Columns {
    fn new(inner: usize, wide: bool) -> Columns {
        let tree = if wide { 32 } else { 20 };
        Columns {
            tree,
            rest: inner.saturating_sub(tree + STATE_W + FOR_W + 3),
            inner,
        }
    }

    /// The tree, state and time cells, each cut or padded to its column; only the words keep
    /// their style, not the padding.
    fn push_cells(&self, spans: &mut Vec<Span<'static>>, cells: [Span<'static>; 3]) {
        for (cell, w) in cells.into_iter().zip([self.tree, STATE_W, FOR_W]) {
            let text = fit(&cell.content, w);
            let pad = w.saturating_sub(width(&text)) + 1;
            spans.push(Span::styled(text, cell.style));
            spans.push(Span::raw(" ".repeat(pad)));
        }
    }
}

/// Indentation and the branch marker: ▾ open, ▸ closed, nothing for a leaf. Rows deeper than
/// the column allows are indented no further: the `id_w` columns of the task id must stay
/// readable.
fn lead(app: &App, row: &Row, columns: &Columns, id_w: usize) -> String {
    let marker = if app.tree().tree().children(&row.node).is_empty() {
        "  "
    } else if app.tree().is_collapsed(&row.node) {
        "▸ "
    } else {
        "▾ "
    };
    let deepest = columns.tree.saturating_sub(2 + id_w) / 2;
    format!("{}{marker}", "  ".repeat(row.depth.min(deepest)))
}

/// `text` then, for a branch, its counts at the right edge, in `room` columns.
fn with_counts(app: &App, node: &Node, text: Vec<Span<'static>>, room: usize) -> Vec<Span<'static>> {
    let tree = app.tree().tree();
    if tree.children(node).is_empty() {
        return text;
    }
    let below = tree.below(node);
    let mut counts = counts_spans(&below, app, Labels::Short);
    // A branch shows the classes it has: no "● 0" (the first count and its spacer).
    if below.active == 0 {
        counts.drain(..2);
    }
    // The spacer after the last count.
    counts.pop();
    let counts_w = spans_width(&counts);
    let text_room = room.saturating_sub(counts_w + 1);
    let mut out: Vec<Span> = Vec::new();
    let mut used = 0;
    for span in text {
        let piece = fit(&span.content, text_room - used);
        used += width(&piece);
        out.push(Span::styled(piece, span.style));
        if used >= text_room {
            break;
        }
    }
    out.push(Span::raw(" ".repeat(room.saturating_sub(used + counts_w))));
    out.extend(counts);
    out
}

/// `agent` None: a planner's context, across the agents it delegated to through taps.
fn context_row(app: &App, row: &Row, agent: Option<AgentId>, id: &str, columns: &Columns) -> Vec<Span<'static>> {
    let t = app.theme();
    let lead = lead(app, row, columns, 8);
    let name = agent.map_or("planner", |agent| app.store().agent_name(agent));
    let label = context_label(app, &row.node, id);
    let text = vec![
        Span::styled(lead.clone(), Style::new().fg(t.title)),
        Span::styled(format!("{} · ", line(name, 16)), t.dim()),
        Span::styled(label, Style::new().fg(t.title)),
    ];
    with_counts(app, &row.node, text, columns.inner)
}

/// The first user message of the context's first task, as one clean line; else its id.
fn context_label(app: &App, node: &Node, id: &str) -> String {
    let first = app.tree().tree().first_task(node).and_then(|k| app.store().task(k));
    let asked = first.and_then(|t| {
        (t.history.iter())
            .find(|m| m.role == Role::User)
            .and_then(|m| m.parts.iter().find_map(Part::as_text))
    });
    let label = match asked {
        Some(text) => line(text, 200),
        None if id.is_empty() => "(no context)".to_string(),
        None => format!("context {}", short_id(id)),
    };
    if label.is_empty() {
        format!("context {}", short_id(id))
    } else {
        label
    }
}

fn task_row(app: &App, row: &Row, key: &TaskKey, columns: &Columns) -> Vec<Span<'static>> {
    let t = app.theme();
    let Some(task) = app.store().task(key) else {
        return Vec::new();
    };
    // What waits on a person stands out, bold like its state.
    let waiting = if task.class() == StateClass::Interrupted {
        Modifier::BOLD
    } else {
        Modifier::empty()
    };
    // The agent is its context's (references are followed on the same agent only), but for the
    // planner's branches, which span the agents it delegated to: those name it.
    let agent = if task.tapped {
        format!("{} ", line(app.store().agent_name(key.agent), 14))
    } else {
        String::new()
    };
    let id = task_id(app.store(), &key.id);
    let name = format!("{}{agent}{id}", lead(app, row, columns, width(&id)));
    let mut spans = Vec::new();
    columns.push_cells(
        &mut spans,
        [
            Span::styled(name, Style::new().fg(t.text).add_modifier(waiting)),
            state_words(app, task),
            Span::raw(waited(app.now(), task.state_since)),
        ],
    );
    let mut status = status_words(app, task, columns.rest);
    status.style = status.style.add_modifier(waiting);
    spans.extend(with_counts(app, &row.node, vec![status], columns.rest));
    spans
}
