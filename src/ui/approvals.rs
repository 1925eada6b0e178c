//! The approvals pane: every task waiting on a person, with its links whole or, for an
//! interactions/v1 request, the held call and the keys that answer it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format::{line, task_id, waited, wrap};
use super::table::status_head;
use super::view::{border, spans_width};
use crate::a2a::interactions::{Interaction, Kind};
use crate::app::effects::{is_web_link, links};
use crate::app::keys::Action;
use crate::app::{App, Pane};
use crate::store::TaskEntry;

/// Lines one link may take: links are wrapped, not cut, unless they are absurd.
const LINK_LINES: usize = 8;

/// One block of lines per pending approval: who, how long, the prompt, and its links whole
/// (wrapped, never cut). Compact: one line with the count, then the selected approval's links.
/// The approvals pane's blocks (a header line and its links), from `first`, until `budget`
/// lines are filled.
pub(super) fn approval_blocks(
    app: &App,
    width: usize,
    compact: bool,
    first: usize,
    budget: usize,
) -> Vec<Vec<Line<'static>>> {
    if compact {
        return compact_block(app, width).into_iter().collect();
    }
    let t = app.theme();
    let focused = app.focus() == Pane::Approvals;
    let k = |a: Action| app.keys().hint(a);
    // Only the approvals that fit are built: cost follows the pane, not the number waiting.
    let mut blocks = Vec::new();
    let mut used = 0;
    for (i, p) in app
        .store()
        .approvals_from(first)
        .enumerate()
        .map(|(n, p)| (first + n, p))
    {
        if used >= budget {
            break;
        }
        let marker = if focused && i == app.approval() { "▶" } else { " " };
        let mut block = vec![header(
            app,
            p,
            vec![Span::styled(marker, Style::new().fg(t.title))],
            width,
        )];
        block.extend(link_lines(app, p, "    ", width));
        if i == app.approval() && p.status.message.as_ref().and_then(Interaction::of).is_none() {
            let keys = format!("    {} open · {} copy", k(Action::OpenLink), k(Action::CopyLink));
            block.push(Line::styled(keys, t.dim()));
        }
        used += block.len();
        blocks.push(block);
    }
    blocks
}

/// One approval, the one the approval keys act on: the table's selected task when it waits
/// for an approval (highlighted like the selected row), else the pane's selection
/// (`App::target_approval`).
fn compact_block(app: &App, width: usize) -> Option<Vec<Line<'static>>> {
    let t = app.theme();
    let pending = app.store().approval_count();
    let focused = app.focus() == Pane::Approvals;
    let following = (!focused)
        .then(|| app.selected_task())
        .flatten()
        .and_then(|t| Some((app.store().approval_index(&t.key)?, t)));
    let from_pane = || {
        let i = app.approval().min(pending.saturating_sub(1));
        Some((i, app.approval_at(i)?))
    };
    let (i, p) = following.or_else(from_pane)?;
    let marker = if focused { "▶" } else { "◆" };
    let mut lead = vec![Span::styled(
        format!(" {marker} {pending} waiting for approval "),
        Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
    )];
    if pending > 1 {
        lead.push(Span::styled(format!("{}/{pending} ", i + 1), t.dim()));
    }
    lead.push(Span::styled("· ", t.dim()));
    let mut head = header(app, p, lead, width);
    if following.is_some() {
        head = head.style(Style::new().bg(t.selection));
    }
    let mut block = vec![head];
    block.extend(link_lines(app, p, "   ", width));
    Some(block)
}

/// An approval's first line: `lead`, then its agent, task, wait and status.
fn header(app: &App, p: &TaskEntry, lead: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let t = app.theme();
    let mut spans = lead;
    spans.push(Span::raw(format!(
        "{}  ",
        line(app.store().agent_name(p.key.agent), 16)
    )));
    spans.push(Span::styled(format!("{}  ", task_id(app.store(), &p.key.id)), t.dim()));
    spans.push(Span::styled(
        format!("{}  ", waited(app.now(), p.state_since)),
        Style::new().fg(t.interrupted),
    ));
    let used = spans_width(&spans);
    spans.push(Span::raw(line(&status_head(p), width.saturating_sub(used))));
    Line::from(spans)
}

/// What an approval asks for: the held call and its keys (interactions/v1: answered in-band, so
/// no link), else the links in its status message.
fn link_lines(app: &App, p: &TaskEntry, indent: &str, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let k = |a: Action| app.keys().hint(a);
    if let Some(i) = p.status.message.as_ref().and_then(Interaction::of) {
        let (subject, keys) = match i.kind {
            Kind::Connection => (
                format!("connect {}", i.subject().unwrap_or_default()),
                format!("{} connected? · {} decline", k(Action::Approve), k(Action::Deny)),
            ),
            _ => (
                i.subject().unwrap_or_else(|| "a held tool call".into()),
                format!("{} approve · {} deny", k(Action::Approve), k(Action::Deny)),
            ),
        };
        let spans = vec![
            Span::raw(format!("{indent}{}  ", line(&subject, width / 2))),
            Span::styled(keys, t.dim()),
        ];
        return vec![Line::from(spans)];
    }
    let found = p.status.message.as_ref().map(links).unwrap_or_default();
    if found.is_empty() {
        return vec![Line::styled(
            format!("{indent}(no link in the status message)"),
            t.dim(),
        )];
    }
    let link_style = Style::new().fg(t.link).add_modifier(Modifier::UNDERLINED);
    found
        .iter()
        .flat_map(|l| {
            // Only a web link looks like one; anything else is text that is never opened.
            let text = if is_web_link(l) {
                Line::styled(format!("{indent}{}", line(l, usize::MAX)), link_style)
            } else {
                Line::styled(format!("{indent}not a web link: {}", line(l, usize::MAX)), t.dim())
            };
            wrap(&text, width, 0, LINK_LINES)
        })
        .collect()
}

/// The approvals to draw in `room` lines: from the first, or from the selected one when it
/// would not fit otherwise.
fn visible_approvals(app: &App, width: usize, compact: bool, room: usize) -> Vec<Vec<Line<'static>>> {
    let from_top = approval_blocks(app, width, compact, 0, room);
    let lines_through_selected: usize = from_top.iter().take(app.approval() + 1).map(Vec::len).sum();
    if compact || (app.approval() < from_top.len() && lines_through_selected <= room) {
        return from_top;
    }
    approval_blocks(app, width, compact, app.approval(), room)
}

pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App, compact: bool) {
    let t = app.theme();
    let (inner, room) = if compact {
        (area.width, area.height)
    } else {
        (area.width.saturating_sub(2), area.height.saturating_sub(2))
    };
    let lines: Vec<Line> = visible_approvals(app, usize::from(inner), compact, usize::from(room))
        .into_iter()
        .flatten()
        .collect();
    if compact {
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let title = Line::from(Span::styled(
        format!(" Waiting for approval ({}) ", app.store().approval_count()),
        Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
    ));
    let focused = app.focus() == Pane::Approvals;
    frame.render_widget(Paragraph::new(lines).block(border(title, app, focused)), area);
}
