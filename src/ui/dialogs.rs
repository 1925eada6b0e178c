//! The small modal dialogs (state in `app::dialogs`): confirmations, the new-task form, the
//! link picker and the interrupt inbox, drawn over the main screen.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::format::{SHORT_ID, cells, fit, pad, task_id, waited, width};
use crate::app::App;
use crate::app::dialogs::{Ask, Confirm, LinkPick, NewTask, NewTaskField};
use crate::app::keys::{Action, KeyMap, Mode};
use crate::app::popup::Popup;
use crate::store::Store;
use crate::text::one_line;
use crate::theme::{Theme, state_glyph};

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

pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// "⏎ send · alt-⏎ new line": a popup's keys as its map has them, for its hint line.
pub(super) fn hints(keys: &KeyMap, mode: Mode, items: &[(Action, &str)]) -> String {
    let hints: Vec<String> = (items.iter())
        .map(|(action, what)| format!("{} {what}", keys.hint_in(mode, *action)))
        .collect();
    hints.join(" · ")
}

fn draw_confirm(frame: &mut Frame, area: Rect, confirm: &Confirm, app: &App) {
    let (store, theme) = (&app.store, &app.theme);
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
    let choices = [(Action::Yes, "yes"), (Action::No, "no"), (Action::Back, "back")];
    let mut keys = vec![Span::raw(" ")];
    for (i, (action, what)) in choices.into_iter().enumerate() {
        let gap = if i + 1 < choices.len() { "   " } else { "" };
        keys.push(Span::styled(app.keys.hint_in(Mode::Confirm, action), bold));
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

fn draw_new_task(frame: &mut Frame, area: Rect, form: &NewTask, app: &App) {
    let (store, theme, keys) = (&app.store, &app.theme, &app.keys);
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
                hints(
                    keys,
                    Mode::NewTask,
                    &[
                        (Action::Send, "send"),
                        (Action::Newline, "new line"),
                        (Action::NextField, "next field")
                    ]
                ),
                keys.hint_in(Mode::NewTask, Action::PreviousAgent),
                keys.hint_in(Mode::NewTask, Action::NextAgent),
                hints(keys, Mode::NewTask, &[(Action::Back, "close")]),
            ),
            theme.dim(),
        )),
        hint_row,
    );
}

fn draw_link_pick(frame: &mut Frame, area: Rect, pick: &LinkPick, keys: &KeyMap, theme: &Theme) {
    let verb = if pick.open { "open" } else { "copy" };
    let width = area.width.saturating_sub(8).clamp(40, 120);
    // Each link is shown whole, wrapped: what is shown is exactly what is opened or copied.
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = pick
        .links
        .iter()
        .take(9)
        .map(|l| (l.chars().count() + 4).div_ceil(inner))
        .sum();
    let height = cells(rows.saturating_add(2));
    let popup = centered(area, width, height);
    frame.render_widget(Clear, popup);
    let title = format!(
        " Which link? {}/1-9 {verb} · {} back ",
        keys.hint_in(Mode::Pick, Action::Details),
        keys.hint_in(Mode::Pick, Action::Back)
    );
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.title))
        .title(Line::styled(
            title,
            Style::new().fg(theme.title).add_modifier(Modifier::BOLD),
        ));
    let lines: Vec<Line> = pick
        .links
        .iter()
        .take(9)
        .enumerate()
        .map(|(i, link)| {
            let marker = if i == pick.selected { "▶" } else { " " };
            let row = Line::from(vec![
                Span::styled(format!("{marker} {} ", i + 1), Style::new().fg(theme.title)),
                Span::styled(
                    link.clone(),
                    Style::new().fg(theme.link).add_modifier(Modifier::UNDERLINED),
                ),
            ]);
            if i == pick.selected {
                row.style(Style::new().bg(theme.selection))
            } else {
                row
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), popup);
}

/// The interrupt inbox: every task waiting on a person, oldest first.
fn draw_inbox(frame: &mut Frame, area: Rect, app: &App, selected: usize) {
    let (store, theme, now) = (&app.store, &app.theme, app.now);
    let waiting = store.interrupts();
    // Saturating: a screen smaller than the popup's minimum still gets what fits.
    let height = cells(waiting.len()).saturating_add(4).max(5).min(area.height);
    let popup = centered(area, area.width.saturating_sub(8).clamp(40, 120), height);
    frame.render_widget(Clear, popup);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(theme.interrupted))
        .title(Line::styled(
            format!(
                " Waiting on you ({}) · {} ",
                waiting.len(),
                hints(
                    &app.keys,
                    Mode::Inbox,
                    &[(Action::Details, "answer"), (Action::Back, "close")]
                )
            ),
            Style::new().fg(theme.interrupted).add_modifier(Modifier::BOLD),
        ));
    // Ids alike for more than 8 characters are shown longer: their column widens for all.
    let ids: Vec<String> = waiting.iter().map(|t| task_id(store, &t.key.id)).collect();
    let id_w = ids.iter().map(|id| width(id)).fold(SHORT_ID, usize::max);
    let text_width = usize::from(popup.width).saturating_sub(42 + id_w);
    let mut lines: Vec<Line> = waiting
        .iter()
        .zip(ids)
        .enumerate()
        .map(|(i, (t, id))| {
            let marker = if i == selected { "▶ " } else { "  " };
            let row = Line::from(vec![
                Span::styled(marker, Style::new().fg(theme.title)),
                Span::styled(
                    format!("{:>6}  ", waited(now, t.state_since)),
                    Style::new().fg(theme.interrupted),
                ),
                Span::raw(format!("{:<14} ", fit(&one_line(store.agent_name(t.key.agent)), 14))),
                Span::styled(pad(&id, id_w + 1), theme.dim()),
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

/// A box that acts on tasks, over everything below it.
pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App, popup: &Popup) {
    match popup {
        Popup::Inbox { selected } => draw_inbox(frame, area, app, *selected),
        Popup::NewTask(form) => draw_new_task(frame, area, form, app),
        Popup::Answer(boxed) => super::answer::draw(frame, area, boxed, app),
        Popup::Confirm(confirm) => draw_confirm(frame, area, confirm, app),
        Popup::Pick(pick) => draw_link_pick(frame, area, pick, &app.keys, &app.theme),
        Popup::Help { .. } | Popup::Detail { .. } | Popup::Filter { .. } => {}
    }
}
