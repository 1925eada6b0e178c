//! The input box: a person answers an INPUT_REQUIRED task (or an interactions/v1 question)
//! without leaving the dashboard. Failure loses nothing: the text stays, the error is shown
//! under it, and a retry sends the same messageId, so an agent that deduplicates answers once.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui_textarea::TextArea;

use super::format::{cells, short_id, waited};
use super::theme::Theme;
use crate::a2a::interactions::{self, Answer, Interaction, Kind};
use crate::a2a::{Message, Part, PartContent, SendMessageRequest, TaskState};
use crate::store::{Store, TaskEntry, TaskKey};
use crate::text::{one_line, sanitize};
use crate::watch::{ActionId, ActionOutcome};

pub struct AnswerBox {
    pub key: TaskKey,
    /// The state and time of the question: the box answers that question, not a later one.
    pub asked: (TaskState, jiff::Timestamp),
    pub editor: TextArea<'static>,
    /// The answer's idempotency key, kept across retries.
    pub message_id: String,
    pub sending: Option<ActionId>,
    pub error: Option<String>,
    /// Why nothing was sent (the task moved on).
    pub notice: Option<String>,
}

/// What pressing Enter in the box leads to.
pub enum Submit {
    Send(Box<SendMessageRequest>),
    /// Nothing to send (empty, already sending, or the task moved on); the box says why.
    Nothing,
}

impl AnswerBox {
    pub fn new(task: &TaskEntry) -> AnswerBox {
        let mut editor = TextArea::default();
        editor.set_cursor_line_style(Style::new());
        editor.set_placeholder_text("type the answer");
        AnswerBox {
            key: task.key.clone(),
            asked: (task.state().clone(), task.state_since),
            editor,
            message_id: uuid::Uuid::new_v4().to_string(),
            sending: None,
            error: None,
            notice: None,
        }
    }

    pub fn text(&self) -> String {
        self.editor.lines().join("\n")
    }

    /// Says so when the task stopped waiting for this answer (someone else answered).
    pub fn notice_if_moved_on(&mut self, store: &Store) {
        if self.sending.is_some() {
            return;
        }
        if let Some(task) = store.task(&self.key)
            && (*task.state() != self.asked.0 || task.state_since != self.asked.1)
        {
            self.notice = Some(format!(
                "No longer waiting for this answer (now {}): someone else answered. Nothing will be sent.",
                task.state().short_name()
            ));
        }
    }

    /// Builds the answer if the task still waits for it (spec section 3.4.3: same taskId and
    /// contextId; interactions/v1 questions carry the extension's metadata).
    pub fn submit(&mut self, store: &Store) -> Submit {
        if self.sending.is_some() {
            return Submit::Nothing;
        }
        let Some(task) = store.task(&self.key) else {
            self.notice = Some("This task is gone from the store; nothing sent.".into());
            return Submit::Nothing;
        };
        if *task.state() != self.asked.0 || task.state_since != self.asked.1 {
            self.notice = Some(format!(
                "No longer waiting for this answer (now {}): someone else answered. Nothing sent.",
                task.state().short_name()
            ));
            return Submit::Nothing;
        }
        let text = self.text();
        if text.trim().is_empty() {
            self.error = Some("An empty answer is not sent.".into());
            return Submit::Nothing;
        }
        let snapshot = crate::a2a::Task {
            id: task.key.id.to_string(),
            context_id: task.context.clone(),
            ..Default::default()
        };
        let message = match task.status.message.as_ref().and_then(Interaction::of) {
            Some(i) if i.kind == Kind::Question => {
                interactions::answer(&snapshot, &i, &Answer::Value(text), &self.message_id)
            }
            _ => {
                let mut m = Message::on_task(vec![Part::text(text)], &snapshot.id, &snapshot.context_id);
                m.message_id = self.message_id.clone();
                m
            }
        };
        self.error = None;
        self.notice = None;
        Submit::Send(Box::new(SendMessageRequest {
            message,
            ..Default::default()
        }))
    }

    /// Takes in the outcome of the send; true when the box can close.
    pub fn settle(&mut self, store: &Store) -> bool {
        let Some(action) = self.sending else { return false };
        match store.action(action) {
            Some(ActionOutcome::Done { .. }) => true,
            Some(ActionOutcome::Failed { message }) => {
                self.error = Some(format!("{} · ⏎ retries", one_line(message)));
                self.sending = None;
                false
            }
            None => false,
        }
    }
}

/// The question in full: text parts, and data parts as JSON.
fn question_lines(task: &TaskEntry, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let Some(m) = &task.status.message else {
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

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    boxed: &AnswerBox,
    store: &Store,
    theme: &Theme,
    now: jiff::Timestamp,
    waiting: usize,
) {
    let Some(task) = store.task(&boxed.key) else { return };
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let question = question_lines(task, theme);
    let q_height = cells(question.len()).clamp(1, 10);
    let editor_height = cells(boxed.editor.lines().len()).saturating_add(2).clamp(3, 8);
    let height = (q_height + editor_height + 4).min(area.height);
    let popup = Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    let title = Line::from(vec![
        Span::styled(
            format!(" {} asks ", one_line(store.agent_name(task.key.agent))),
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                "· task {} · waiting {} ",
                short_id(&task.key.id),
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
    } else if boxed.sending.is_some() {
        Line::styled("sending…", theme.dim())
    } else {
        Line::raw("")
    };
    frame.render_widget(Paragraph::new(line), status);
    let more = waiting.saturating_sub(1);
    let hints_line = Line::from(vec![
        Span::styled("⏎ send · alt+⏎ new line · esc later", theme.dim()),
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
