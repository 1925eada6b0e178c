//! The input box (state and keys in `app::popup::answer`): the question in full, the editor, what became of the
//! last Enter, and the keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::super::format::{cells, task_id, waited};
use crate::a2a::{Message, PartContent};
use crate::app::keys::Mode;
use crate::app::popup::answer::{AnswerBox, HINTS};
use crate::app::{App, Areas};
use crate::text::{one_line, sanitize};
use crate::theme::Theme;

/// The question in full: text parts, and data parts as JSON.
fn question_lines(message: Option<&Message>, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let Some(m) = message else {
        out.push(Line::styled("(the agent sent no question text)", theme.dim()));
        return out;
    };
    for p in &m.parts {
        let text = match &p.content {
            PartContent::Text(t) => sanitize(t),
            PartContent::Data(d) => sanitize(&serde_json::to_string_pretty(d).unwrap_or_default()),
            PartContent::Url(u) => one_line(u),
            _ => continue,
        };
        out.extend(text.lines().map(|l| Line::raw(l.to_string())));
    }
    out
}

pub(super) fn draw(frame: &mut Frame, _areas: &Areas, app: &App, boxed: &AnswerBox) {
    let area = frame.area();
    let (store, theme, now) = (app.store(), app.theme(), app.now());
    let waiting = store.total_counts().interrupted;
    let Some(task) = store.task(&boxed.key) else { return };
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let question = question_lines(boxed.shown(), theme);
    let q_height = cells(question.len()).clamp(1, 10);
    let editor_height = cells(boxed.editor.lines().len()).saturating_add(2).clamp(3, 8);
    let height = (q_height + editor_height + 4).min(area.height);
    let popup = super::centered(area, width, height);
    frame.render_widget(Clear, popup);
    let asks = if boxed.changed { "asks something else" } else { "asks" };
    let title = Line::from(vec![
        Span::styled(
            format!(" {} {asks} ", one_line(store.agent_name(task.key.agent))),
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                "· task {} · waiting {} ",
                task_id(store, &task.key.id),
                waited(now, task.state_since)
            ),
            theme.dim(),
        ),
    ]);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.interrupted))
        .title(title);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    let [q, editor, status, hints] = Layout::vertical([
        Constraint::Length(q_height),
        Constraint::Length(editor_height),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(question).wrap(Wrap { trim: false }), q);
    let mut editor_widget = boxed.editor.clone();
    editor_widget.set_block(
        Block::new()
            .borders(Borders::ALL)
            .border_style(Style::new().fg(theme.border)),
    );
    frame.render_widget(&editor_widget, editor);
    let line = if let Some(notice) = &boxed.notice {
        Line::styled(one_line(notice), Style::new().fg(theme.interrupted))
    } else if let Some(err) = &boxed.error {
        Line::styled(one_line(err), Style::new().fg(theme.failure))
    } else if boxed.sending.is_busy() {
        Line::styled("sending…", theme.dim())
    } else {
        Line::raw("")
    };
    frame.render_widget(Paragraph::new(line), status);
    let more = waiting.saturating_sub(1);
    let hints_line = Line::from(vec![
        Span::styled(super::hints(app.keys(), Mode::Answer, &HINTS), theme.dim()),
        Span::styled(
            if more > 0 {
                format!("   {more} more waiting")
            } else {
                String::new()
            },
            Style::new().fg(theme.interrupted),
        ),
    ]);
    frame.render_widget(Paragraph::new(hints_line), hints);
}
