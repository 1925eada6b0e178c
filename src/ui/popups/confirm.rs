//! A confirmation (state and keys in `app::popup::confirm`): the question naming the agent, the
//! held call's reason, why it is shown again, and the choices.

use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::super::format::{cells, task_id};
use super::centered;
use crate::app::keys::Mode;
use crate::app::popup::confirm::{Ask, CHOICES, Confirm};
use crate::app::{App, Areas};
use crate::store::Store;
use crate::text::one_line;

/// The confirmation's question, naming the agent.
fn question(ask: &Ask, store: &Store) -> String {
    let key = ask.key();
    let agent = one_line(store.agent_name(key.agent));
    let subject = ask.subject();
    match ask {
        Ask::Cancel { state, .. } => {
            format!(
                "Cancel task {} ({}) on {agent}?",
                task_id(store, &key.id),
                state.short_name()
            )
        }
        Ask::Approve { approved: true, .. } => format!("Approve {subject} for {agent}?"),
        Ask::Approve { .. } => format!("Deny {subject} for {agent}?"),
        Ask::Connection { .. } => format!("{agent} asks to connect {subject}. Connected?"),
    }
}

/// The held call's reason, when the agent gave one.
fn reason(ask: &Ask) -> Option<String> {
    match ask {
        Ask::Approve { shown, .. } | Ask::Connection { shown, .. } => shown
            .detail
            .get("reason")
            .and_then(serde_json::Value::as_str)
            .map(one_line),
        Ask::Cancel { .. } => None,
    }
}

pub(super) fn draw(frame: &mut Frame, _areas: &Areas, app: &App, confirm: &Confirm) {
    let area = frame.area();
    let (store, theme) = (app.store(), app.theme());
    let question = question(&confirm.ask, store);
    let bold = Style::new().fg(theme.title).add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::raw(format!(" {question}"))];
    if let Some(reason) = reason(&confirm.ask) {
        lines.push(Line::styled(format!(" {reason}"), theme.dim()));
    }
    if let Some((note, error)) = &confirm.note {
        let colour = if *error { theme.failure } else { theme.interrupted };
        lines.push(Line::styled(format!(" {}", one_line(note)), Style::new().fg(colour)));
    }
    let choices = CHOICES;
    let mut keys = vec![Span::raw(" ")];
    for (i, (action, what)) in choices.into_iter().enumerate() {
        let gap = if i + 1 < choices.len() { "   " } else { "" };
        keys.push(Span::styled(app.keys().hint_in(Mode::Confirm, action), bold));
        keys.push(Span::raw(format!(" {what}{gap}")));
    }
    lines.push(Line::from(keys));
    let longest = lines.iter().map(Line::width).max().unwrap_or(0);
    let popup = centered(
        area,
        cells(longest).saturating_add(4).clamp(40, 90),
        cells(lines.len()).saturating_add(3),
    );
    frame.render_widget(Clear, popup);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.interrupted))
        .title(Line::styled(
            " Confirm ",
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ));
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), popup);
}
