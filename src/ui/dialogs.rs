//! The small modal dialogs: confirmations (cancel, approve, deny, connected?), the new-task
//! form, and the interrupt inbox.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui_textarea::TextArea;

use super::format::{cells, fit, short_id, waited};
use super::theme::{Theme, state_glyph};
use crate::store::{Store, TaskKey};
use crate::text::one_line;
use crate::watch::ActionId;

/// A question that needs a yes or a no before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    Cancel {
        key: TaskKey,
    },
    /// An interactions/v1 approval: `approved` is what "yes" sends.
    Approve {
        key: TaskKey,
        approved: bool,
    },
    /// An interactions/v1 connection request: yes = connected, no = declined.
    Connection {
        key: TaskKey,
    },
}

impl Confirm {
    pub fn key(&self) -> &TaskKey {
        match self {
            Confirm::Cancel { key } | Confirm::Approve { key, .. } | Confirm::Connection { key } => key,
        }
    }

    fn question(&self, store: &Store) -> String {
        let key = self.key();
        let agent = one_line(store.agent_name(key.agent));
        let subject = store
            .task(key)
            .and_then(|t| t.status.message.as_ref())
            .and_then(crate::a2a::interactions::Interaction::of)
            .map(|i| i.subject().unwrap_or(i.prompt))
            .map(|s| one_line(&s))
            .unwrap_or_default();
        match self {
            Confirm::Cancel { .. } => format!("Cancel task {} on {agent}?", short_id(&key.id)),
            Confirm::Approve { approved: true, .. } => format!("Approve {subject} for {agent}?"),
            Confirm::Approve { approved: false, .. } => format!("Deny {subject} for {agent}?"),
            Confirm::Connection { .. } => format!("{agent} asks to connect {subject}. Connected?"),
        }
    }
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub fn draw_confirm(frame: &mut Frame, area: Rect, confirm: &Confirm, store: &Store, theme: &Theme) {
    let question = confirm.question(store);
    let popup = centered(area, cells(question.chars().count()).saturating_add(6).clamp(40, 90), 5);
    frame.render_widget(Clear, popup);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.interrupted))
        .title(Line::styled(
            " Confirm ",
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ));
    let lines = vec![
        Line::raw(format!(" {question}")),
        Line::from(vec![
            Span::styled(" y", Style::new().fg(theme.title).add_modifier(Modifier::BOLD)),
            Span::raw(" yes   "),
            Span::styled("n", Style::new().fg(theme.title).add_modifier(Modifier::BOLD)),
            Span::raw(" no   "),
            Span::styled("esc", Style::new().fg(theme.title).add_modifier(Modifier::BOLD)),
            Span::raw(" back"),
        ]),
    ];
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), popup);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewTaskField {
    Agent,
    Message,
    Context,
}

/// The new-task form: which agent, what to ask, in which context.
pub struct NewTask {
    pub agent: usize,
    pub message: TextArea<'static>,
    pub context: TextArea<'static>,
    pub field: NewTaskField,
    pub message_id: String,
    pub sending: Option<ActionId>,
    pub error: Option<String>,
}

impl NewTask {
    pub fn new(agent: usize, context: &str) -> NewTask {
        let mut message = TextArea::default();
        message.set_cursor_line_style(Style::new());
        message.set_placeholder_text("what should the agent do?");
        let mut ctx = TextArea::new(vec![context.to_string()]);
        ctx.set_cursor_line_style(Style::new());
        ctx.set_placeholder_text("a new context");
        NewTask {
            agent,
            message,
            context: ctx,
            field: NewTaskField::Message,
            message_id: uuid::Uuid::new_v4().to_string(),
            sending: None,
            error: None,
        }
    }

    pub fn next_field(&mut self) {
        self.field = match self.field {
            NewTaskField::Agent => NewTaskField::Message,
            NewTaskField::Message => NewTaskField::Context,
            NewTaskField::Context => NewTaskField::Agent,
        };
    }
}

pub fn draw_new_task(frame: &mut Frame, area: Rect, form: &NewTask, store: &Store, theme: &Theme) {
    let popup = centered(area, 90, 14);
    frame.render_widget(Clear, popup);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.title))
        .title(Line::styled(
            " New task ",
            Style::new().fg(theme.title).add_modifier(Modifier::BOLD),
        ));
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    let [agent, message, context, status, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    let focus = |f: NewTaskField| {
        if form.field == f {
            Style::new().fg(theme.title)
        } else {
            Style::new().fg(theme.border)
        }
    };
    let name = one_line(store.agent_name(form.agent));
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" agent  ", theme.dim()),
            Span::styled(
                format!("◀ {name} ▶"),
                focus(NewTaskField::Agent).add_modifier(Modifier::BOLD),
            ),
        ])),
        agent,
    );
    let mut m = form.message.clone();
    m.set_block(
        Block::new()
            .borders(Borders::ALL)
            .border_style(focus(NewTaskField::Message))
            .title(" message "),
    );
    frame.render_widget(&m, message);
    let mut c = form.context.clone();
    c.set_block(
        Block::new()
            .borders(Borders::ALL)
            .border_style(focus(NewTaskField::Context))
            .title(" context id "),
    );
    frame.render_widget(&c, context);
    let line = match (&form.error, form.sending) {
        (Some(e), _) => Line::styled(one_line(e), Style::new().fg(theme.failure)),
        (None, Some(_)) => Line::styled("sending…", theme.dim()),
        _ => Line::raw(""),
    };
    frame.render_widget(Paragraph::new(line), status);
    frame.render_widget(
        Paragraph::new(Line::styled(
            "⏎ send · alt+⏎ new line · tab next field · ←→ agent · esc close",
            theme.dim(),
        )),
        hints,
    );
}

/// The interrupt inbox: every task waiting on a person, oldest first.
pub fn draw_inbox(frame: &mut Frame, area: Rect, store: &Store, selected: usize, theme: &Theme, now: jiff::Timestamp) {
    let waiting = store.interrupts();
    // Saturating: a screen smaller than the popup's minimum still gets what fits.
    let height = cells(waiting.len()).saturating_add(4).max(5).min(area.height);
    let popup = centered(area, area.width.saturating_sub(8).clamp(40, 120), height);
    frame.render_widget(Clear, popup);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.interrupted))
        .title(Line::styled(
            format!(" Waiting on you ({}) · ⏎ answer · esc close ", waiting.len()),
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ));
    let text_width = usize::from(popup.width.saturating_sub(50));
    let mut lines: Vec<Line> = waiting
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let marker = if i == selected { "▶ " } else { "  " };
            let row = Line::from(vec![
                Span::styled(marker, Style::new().fg(theme.title)),
                Span::styled(
                    format!("{:>6}  ", waited(now, t.state_since)),
                    Style::new().fg(theme.interrupted),
                ),
                Span::raw(format!("{:<14} ", fit(&one_line(store.agent_name(t.key.agent)), 14))),
                Span::styled(format!("{} ", short_id(&t.key.id)), theme.dim()),
                Span::styled(
                    format!("{} {:<15}", state_glyph(t.state()), t.state().short_name()),
                    theme.state(t.state()),
                ),
                Span::raw(fit(&one_line(&t.status.text()), text_width)),
            ]);
            if i == selected {
                row.style(Style::new().bg(theme.selection))
            } else {
                row
            }
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("  Nothing waits on you.", theme.dim()));
    }
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}

/// Whatever box is open for acting on tasks, on top of everything else.
pub fn draw_steer(frame: &mut Frame, area: Rect, app: &super::app::App) {
    let steer = &app.steer;
    let theme = &app.theme;
    if let Some(i) = steer.inbox {
        draw_inbox(frame, area, &app.store, i, theme, app.now);
    }
    if let Some(form) = &steer.new_task {
        draw_new_task(frame, area, form, &app.store, theme);
    }
    if let Some(boxed) = &steer.answer {
        let waiting = app.store.total_counts().interrupted;
        super::answer::draw(frame, area, boxed, &app.store, theme, app.now, waiting);
    }
    if let Some(confirm) = &steer.confirm {
        draw_confirm(frame, area, confirm, &app.store, theme);
    }
}
