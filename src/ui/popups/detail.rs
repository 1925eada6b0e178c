//! The detail pane of one task (state and keys in `app::popup::detail`): the timeline the watcher recorded, the current status message in
//! full, the history, the artifacts (text shown, JSON pretty-printed) and the raw JSON of the last
//! snapshot, in one scrollable page. Lines are wrapped to the pane, so nothing is cut at its right
//! edge; what is too long to keep is cut visibly, never silently.

use std::io;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph};
use serde_json::Value;

use super::super::format::{clock, line, pad, plural, state_name, waited, wrap};
use crate::a2a::{Message, Part, PartContent};
use crate::app::effects::{is_web_link, links};
use crate::app::popup::detail::Detail;
use crate::app::{App, Areas};
use crate::store::{TaskEntry, TaskKey};
use crate::text::{head, sanitize};
use crate::theme::{Theme, state_glyph};

/// Lines kept per text; more is cut with a note.
const SECTION_LINES: usize = 400;
/// Bytes of one text (or of one JSON document) shown; more is cut with a note. A hostile
/// agent's ten megabytes cost what 64 KiB cost.
const TEXT_BYTES: usize = 64 * 1024;
/// Screen lines one line of text may wrap into.
const WRAP_LINES: usize = 200;

fn heading<'a>(text: &str, theme: &Theme) -> Line<'a> {
    Line::styled(
        format!("── {text} "),
        Style::new().fg(theme.title).add_modifier(Modifier::BOLD),
    )
}

fn size(bytes: usize) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// The lines of the pane before wrapping, with the indent their continuations get.
struct Page {
    lines: Vec<(Line<'static>, usize)>,
    theme: Theme,
}

impl Page {
    fn push(&mut self, line: Line<'static>) {
        self.lines.push((line, 0));
    }

    fn text(&mut self, text: &str, indent: &str) {
        let (start, cut) = head(text, TEXT_BYTES);
        let clean = sanitize(start);
        for (shown, l) in clean.lines().enumerate() {
            if shown == SECTION_LINES {
                self.push(Line::styled(
                    format!("{indent}… more lines not shown ({} in all)", size(text.len())),
                    self.theme.dim(),
                ));
                return;
            }
            self.push(Line::raw(format!("{indent}{l}")));
        }
        if cut {
            self.push(Line::styled(
                format!("{indent}… cut at {} ({} in all)", size(TEXT_BYTES), size(text.len())),
                self.theme.dim(),
            ));
        }
    }

    fn json(&mut self, value: &Value, indent: &str) {
        let (text, cut) = pretty_head(value, TEXT_BYTES);
        self.text(&text, indent);
        if cut {
            self.push(Line::styled(
                format!("{indent}… cut at {}", size(TEXT_BYTES)),
                self.theme.dim(),
            ));
        }
    }

    fn parts(&mut self, parts: &[Part], indent: &str) {
        let t = self.theme.clone();
        for p in parts {
            match &p.content {
                PartContent::Text(text) => self.text(text, indent),
                PartContent::Data(d) => self.json(d, indent),
                PartContent::Url(u) => self.push(Line::styled(
                    format!("{indent}{}", line(u, usize::MAX)),
                    Style::new().fg(t.link),
                )),
                PartContent::Raw(b) => {
                    let what = p.media_type.as_deref().map_or("bytes".into(), |m| line(m, 60));
                    let name = p
                        .filename
                        .as_deref()
                        .map(|f| format!(" {}", line(f, 80)))
                        .unwrap_or_default();
                    self.push(Line::styled(
                        format!("{indent}[{what}{name}, {} base64 chars]", b.len()),
                        t.dim(),
                    ));
                }
                PartContent::Unsupported(kind) => {
                    self.push(Line::styled(
                        format!("{indent}[unsupported part: {}]", line(kind, 60)),
                        t.dim(),
                    ));
                }
            }
        }
    }

    fn message(&mut self, m: &Message) {
        let who = match m.role {
            crate::a2a::Role::User => "user",
            crate::a2a::Role::Agent => "agent",
            _ => "?",
        };
        self.push(Line::styled(format!("{who}:"), self.theme.dim()));
        self.parts(&m.parts, "  ");
    }
}

/// A writer that takes `max` bytes and then refuses, so serializing a huge value stops early.
struct Limited {
    buf: Vec<u8>,
    max: usize,
}

impl io::Write for Limited {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = self.max - self.buf.len();
        if room == 0 {
            return Err(io::Error::other("enough"));
        }
        let n = bytes.len().min(room);
        self.buf.extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Pretty JSON, at most `max` bytes of it; true if there was more.
fn pretty_head(value: &Value, max: usize) -> (String, bool) {
    let mut out = Limited { buf: Vec::new(), max };
    let whole = serde_json::to_writer_pretty(&mut out, value).is_ok();
    let text = match String::from_utf8(out.buf) {
        Ok(text) => text,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    (text, !whole)
}

/// Every line of the pane, top to bottom, wrapped to `width` columns.
pub fn lines(app: &App, task: &TaskEntry, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let mut page = Page {
        lines: Vec::new(),
        theme: t.clone(),
    };
    summary(&mut page, app, task);
    timeline(&mut page, app, task, width);
    status_message(&mut page, t, task);
    history(&mut page, t, task);
    artifacts(&mut page, t, task);
    raw_json(&mut page, t, task);
    page.lines
        .iter()
        .flat_map(|(l, hang)| {
            if l.width() <= width {
                vec![l.clone()]
            } else {
                wrap(l, width, *hang, WRAP_LINES)
            }
        })
        .collect()
}

/// The agent, the state and how long, the ids, the error.
fn summary(page: &mut Page, app: &App, task: &TaskEntry) {
    let t = app.theme();
    let state = task.state();
    page.push(Line::from(vec![
        Span::raw(format!("{}  ", line(app.store().agent_name(task.key.agent), 40))),
        Span::styled(format!("{} {}", state_glyph(state), state_name(state)), t.state(state)),
        Span::styled(format!("  for {}", waited(app.now(), task.state_since)), t.dim()),
    ]));
    page.push(Line::styled(format!("task     {}", line(&task.key.id, 200)), t.dim()));
    page.push(Line::styled(format!("context  {}", line(&task.context, 200)), t.dim()));
    if let Some(err) = &task.error {
        page.push(Line::styled(
            format!("⚠ {}", line(err, 2000)),
            Style::new().fg(t.failure),
        ));
    }
    page.push(Line::raw(""));
}

fn timeline(page: &mut Page, app: &App, task: &TaskEntry, width: usize) {
    let t = app.theme();
    page.push(heading("Timeline (as this watcher saw it)", t));
    if task.timeline_dropped > 0 {
        page.push(Line::styled(
            format!("… {} earlier entries dropped", task.timeline_dropped),
            t.dim(),
        ));
    }
    // One line per entry: the timeline is the overview, the status message below is in full.
    for tr in &task.timeline {
        let lead = vec![
            Span::styled(format!("{}  ", clock(tr.at, app.tz())), t.dim()),
            Span::styled(pad(&state_name(&tr.state), 16), t.state(&tr.state)),
        ];
        let used: usize = lead.iter().map(Span::width).sum();
        let mut spans = lead;
        spans.push(Span::raw(line(&tr.text, width.saturating_sub(used))));
        page.push(Line::from(spans));
    }
    page.push(Line::raw(""));
}

/// The current status message in full, with its links.
fn status_message(page: &mut Page, t: &Theme, task: &TaskEntry) {
    page.push(heading("Status message", t));
    match &task.status.message {
        Some(m) => {
            page.parts(&m.parts, "");
            for link in links(m) {
                let shown = if is_web_link(&link) {
                    Line::styled(format!("link: {}", line(&link, usize::MAX)), Style::new().fg(t.link))
                } else {
                    Line::styled(format!("not a web link: {}", line(&link, usize::MAX)), t.dim())
                };
                page.lines.push((shown, 6));
            }
        }
        None => page.push(Line::styled("(none)", t.dim())),
    }
    page.push(Line::raw(""));
}

fn history(page: &mut Page, t: &Theme, task: &TaskEntry) {
    page.push(heading(
        &format!("History ({})", plural(task.history.len(), "message")),
        t,
    ));
    // The current status message is often the last history entry too (a2a-js): not twice.
    let current = task.status.message.as_ref().map(|m| m.message_id.as_str());
    for m in task
        .history
        .iter()
        .filter(|m| m.message_id.is_empty() || Some(m.message_id.as_str()) != current)
    {
        page.message(m);
    }
    page.push(Line::raw(""));
}

fn artifacts(page: &mut Page, t: &Theme, task: &TaskEntry) {
    page.push(heading(&format!("Artifacts ({})", task.artifacts.len()), t));
    if !task.cut.is_empty() {
        let c = task.cut;
        page.push(Line::styled(
            format!(
                "… over the limits, dropped: {} artifacts, {} parts, {} metadata keys",
                c.artifacts, c.parts, c.metadata
            ),
            t.dim(),
        ));
    }
    for a in &task.artifacts {
        let name = a.name.as_deref().unwrap_or(&a.artifact_id);
        page.push(Line::styled(
            format!("{} ({})", line(name, 80), plural(a.parts.len(), "part")),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        // Chunks of one text artifact read as one text.
        let text = a.text();
        if !text.is_empty() {
            page.text(&text, "  ");
        }
        let rest: Vec<Part> = a.parts.iter().filter(|p| p.as_text().is_none()).cloned().collect();
        page.parts(&rest, "  ");
    }
    page.push(Line::raw(""));
}

fn raw_json(page: &mut Page, t: &Theme, task: &TaskEntry) {
    page.push(heading("Raw JSON (the last snapshot, later events folded in)", t));
    if !task.snapshot_seen {
        page.push(Line::styled(
            "(no whole snapshot seen yet: built from the events so far)",
            t.dim(),
        ));
    }
    page.json(&serde_json::to_value(task.as_task()).unwrap_or_default(), "");
}

fn inner(area: Rect) -> Rect {
    block(&Theme::blank()).inner(area)
}

fn block(t: &Theme) -> Block<'static> {
    Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(t.title))
        .padding(Padding::horizontal(1))
}

/// Lines of text the pane shows at once in `area`.
pub fn visible_lines(area: Rect) -> usize {
    usize::from(inner(area).height)
}

/// How far the pane can scroll: its last line at the bottom.
pub fn max_scroll(app: &App, key: &TaskKey, area: Rect) -> usize {
    let inner = inner(area);
    app.store().task(key).map_or(0, |task| {
        lines(app, task, usize::from(inner.width))
            .len()
            .saturating_sub(visible_lines(area))
    })
}

/// The pane over the table's and the approvals' place (`Areas::body`).
pub(super) fn draw(frame: &mut Frame, areas: &Areas, app: &App, detail: &Detail) {
    let (area, key, scroll) = (areas.body(), &detail.key, detail.scroll);
    let t = app.theme();
    frame.render_widget(Clear, area);
    // Its keys are in the footer, from the key map.
    let title = Line::styled(" Task detail ", Style::new().fg(t.title));
    let Some(task) = app.store().task(key) else {
        frame.render_widget(
            Paragraph::new("This task is gone from the store.").block(block(t).title(title)),
            area,
        );
        return;
    };
    let inner = inner(area);
    let height = visible_lines(area);
    let all = lines(app, task, usize::from(inner.width));
    let total = all.len();
    let scroll = scroll.min(total.saturating_sub(height));
    let end = (scroll + height).min(total);
    let mut b = block(t).title(title);
    if total > height {
        b = b.title_bottom(Line::styled(format!(" lines {}–{end} of {total} ", scroll + 1), t.dim()).right_aligned());
    }
    // Only the lines on screen are handed to the widget.
    let shown: Vec<Line> = all.into_iter().skip(scroll).take(height).collect();
    frame.render_widget(Paragraph::new(shown).block(b), area);
}
