//! The new-task form (state and keys in `app::popup::new_task`): the agent, the message and the
//! context fields, what became of the last send, and the keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{centered, hints};
use crate::app::keys::{Action, Mode};
use crate::app::popup::new_task::{HINTS, HINTS_AFTER, NewTask, NewTaskField};
use crate::app::{App, Areas};
use crate::text::one_line;

pub(super) fn draw(frame: &mut Frame, _areas: &Areas, app: &App, form: &NewTask) {
    let area = frame.area();
    let (store, theme, keys) = (app.store(), app.theme(), app.keys());
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
    let [agent, message, context, status, hint_row] = Layout::vertical([
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
    let line = match (&form.error, form.sending.is_busy()) {
        (Some(e), _) => Line::styled(one_line(e), Style::new().fg(theme.failure)),
        (None, true) => Line::styled("sending…", theme.dim()),
        _ => Line::raw(""),
    };
    frame.render_widget(Paragraph::new(line), status);
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(
                "{} · {}{} agent · {}",
                hints(keys, Mode::NewTask, &HINTS),
                keys.hint_in(Mode::NewTask, Action::PreviousAgent),
                keys.hint_in(Mode::NewTask, Action::NextAgent),
                hints(keys, Mode::NewTask, &HINTS_AFTER),
            ),
            theme.dim(),
        )),
        hint_row,
    );
}
