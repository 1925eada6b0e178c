//! The detail pane of one task: the timeline the watcher recorded, the current status message in
//! full, the history, the artifacts (text shown, JSON pretty-printed) and the raw JSON of the last
//! snapshot, in one scrollable page. Long content is cut visibly, never silently.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::app::App;
use super::format::{clock, waited};
use super::theme::{Theme, state_glyph};
use crate::a2a::{Message, Part, PartContent};
use crate::store::{TaskEntry, TaskKey};
use crate::text::{one_line, sanitize};

/// Lines kept per section; more is cut with a note.
const SECTION_LINES: usize = 400;

fn heading<'a>(text: &str, theme: &Theme) -> Line<'a> {
    Line::styled(
        format!("── {text} "),
        Style::new().fg(theme.title).add_modifier(Modifier::BOLD),
    )
}

fn push_text(lines: &mut Vec<Line<'static>>, text: &str, indent: &str, theme: &Theme) {
    let clean = sanitize(text);
    let total = clean.lines().count();
    for l in clean.lines().take(SECTION_LINES) {
        lines.push(Line::raw(format!("{indent}{l}")));
    }
    if total > SECTION_LINES {
        lines.push(Line::styled(
            format!("{indent}… {} more lines not shown", total - SECTION_LINES),
            theme.dim(),
        ));
    }
}

fn push_parts(lines: &mut Vec<Line<'static>>, parts: &[Part], indent: &str, theme: &Theme) {
    for p in parts {
        match &p.content {
            PartContent::Text(t) => push_text(lines, t, indent, theme),
            PartContent::Data(d) => {
                push_text(
                    lines,
                    &serde_json::to_string_pretty(d).unwrap_or_default(),
                    indent,
                    theme,
                );
            }
            PartContent::Url(u) => lines.push(Line::styled(
                format!("{indent}{}", one_line(u)),
                Style::new().fg(theme.link),
            )),
            PartContent::Raw(b) => {
                let what = p.media_type.as_deref().unwrap_or("bytes");
                let name = p
                    .filename
                    .as_deref()
                    .map(|f| format!(" {}", one_line(f)))
                    .unwrap_or_default();
                lines.push(Line::styled(
                    format!("{indent}[{what}{name}, {} base64 chars]", b.len()),
                    theme.dim(),
                ));
            }
            PartContent::Unsupported(kind) => {
                lines.push(Line::styled(
                    format!("{indent}[unsupported part: {}]", one_line(kind)),
                    theme.dim(),
                ));
            }
        }
    }
}

fn push_message(lines: &mut Vec<Line<'static>>, m: &Message, theme: &Theme) {
    let who = match m.role {
        crate::a2a::Role::User => "user",
        crate::a2a::Role::Agent => "agent",
        _ => "?",
    };
    lines.push(Line::styled(format!("  {who}:"), theme.dim()));
    push_parts(lines, &m.parts, "    ", theme);
}

/// Every line of the pane, top to bottom.
pub fn lines(app: &App, task: &TaskEntry) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    let state = task.state();
    out.push(Line::from(vec![
        Span::raw(format!("{}  ", one_line(app.store.agent_name(task.key.agent)))),
        Span::styled(format!("{} {}", state_glyph(state), state.short_name()), t.state(state)),
        Span::styled(format!("  for {}", waited(app.now, task.state_since)), t.dim()),
    ]));
    out.push(Line::styled(format!("task     {}", one_line(&task.key.id)), t.dim()));
    out.push(Line::styled(format!("context  {}", one_line(&task.context)), t.dim()));
    if let Some(err) = &task.error {
        out.push(Line::styled(format!("⚠ {}", one_line(err)), Style::new().fg(t.failure)));
    }
    out.push(Line::raw(""));

    out.push(heading("Timeline (as this watcher saw it)", t));
    if task.timeline_dropped > 0 {
        out.push(Line::styled(
            format!("  … {} earlier entries dropped", task.timeline_dropped),
            t.dim(),
        ));
    }
    for tr in &task.timeline {
        out.push(Line::from(vec![
            Span::styled(format!("  {}  ", clock(tr.at)), t.dim()),
            Span::styled(format!("{:<16}", tr.state.short_name()), t.state(&tr.state)),
            Span::raw(one_line(&tr.text)),
        ]));
    }
    out.push(Line::raw(""));

    out.push(heading("Status message", t));
    match &task.status.message {
        Some(m) => {
            push_parts(&mut out, &m.parts, "  ", t);
            for link in m.links() {
                out.push(Line::styled(
                    format!("  link: {}", one_line(&link)),
                    Style::new().fg(t.link),
                ));
            }
        }
        None => out.push(Line::styled("  (none)", t.dim())),
    }
    out.push(Line::raw(""));

    out.push(heading(&format!("History ({} messages)", task.history.len()), t));
    // The current status message is often the last history entry too (a2a-js): not twice.
    let current = task.status.message.as_ref().map(|m| m.message_id.as_str());
    for m in task
        .history
        .iter()
        .filter(|m| m.message_id.is_empty() || Some(m.message_id.as_str()) != current)
    {
        push_message(&mut out, m, t);
    }
    out.push(Line::raw(""));

    out.push(heading(&format!("Artifacts ({})", task.artifacts.len()), t));
    for a in &task.artifacts {
        let name = a.name.as_deref().unwrap_or(&a.artifact_id);
        out.push(Line::styled(
            format!("  {} ({} parts)", one_line(name), a.parts.len()),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        // Chunks of one text artifact read as one text.
        let text = a.text();
        if !text.is_empty() {
            push_text(&mut out, &text, "    ", t);
        }
        let rest: Vec<Part> = a.parts.iter().filter(|p| p.as_text().is_none()).cloned().collect();
        push_parts(&mut out, &rest, "    ", t);
    }
    out.push(Line::raw(""));

    out.push(heading("Raw JSON of the last snapshot", t));
    match &task.raw {
        Some(raw) => push_text(
            &mut out,
            &serde_json::to_string_pretty(raw).unwrap_or_default(),
            "  ",
            t,
        ),
        None => out.push(Line::styled("  (no whole snapshot seen yet)", t.dim())),
    }
    out
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, key: &TaskKey, scroll: usize) {
    let t = &app.theme;
    frame.render_widget(Clear, area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(t.title))
        .title(Line::styled(
            " Task detail · ↑↓ pgup pgdn scroll · esc back ",
            Style::new().fg(t.title),
        ));
    let Some(task) = app.store.task(key) else {
        frame.render_widget(Paragraph::new("This task is gone from the store.").block(block), area);
        return;
    };
    let all = lines(app, task);
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = scroll.min(all.len().saturating_sub(height));
    // Only the lines on screen are handed to the widget.
    let shown: Vec<Line> = all.into_iter().skip(scroll).take(height).collect();
    frame.render_widget(Paragraph::new(shown).block(block), area);
}
