//! The footer: the filter being typed, else a question held while the person types, else the
//! last action's outcome for a few seconds, else the keys that fit (the detail pane's or the
//! agents view's while it is open); always the waiting count and whether the table is live or
//! frozen, and the spans the traces export dropped, if any.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format::{line, plural, width};
use super::view::spans_width;
use crate::app::App;
use crate::app::keys::{Action, Mode};
use crate::app::popup::agents::AgentsView;
use crate::app::popup::detail::Detail;
use crate::app::popup::filter::Filter;

/// How long a one-line message stays in the footer.
const FLASH_SECONDS: i64 = 6;

pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let t = app.theme();
    let room = usize::from(area.width);
    if let Some(filter) = app.top_popup::<Filter>() {
        return super::popups::filter::draw_footer(frame, area, app, filter);
    }
    let waiting = app.store().total_counts().interrupted;
    let live = if app.frozen().is_some() { "frozen" } else { "live" };
    let mut right = Vec::new();
    // Spans the traces export lost (`--otlp`, issue 22): what a2a_watch_otlp_dropped_total counts.
    if let Some(export) = app.export().filter(|e| e.dropped > 0) {
        let dropped = plural(usize::try_from(export.dropped).unwrap_or(usize::MAX), "span");
        right.push(Span::styled(format!("{dropped} dropped"), Style::new().fg(t.broken)));
        right.push(Span::styled(" · ", t.dim()));
    }
    right.extend([
        Span::styled(format!("{waiting} waiting"), Style::new().fg(t.interrupted)),
        Span::styled(format!(" · {live} "), t.dim()),
    ]);
    let room_left = room.saturating_sub(spans_width(&right) + 1);
    // A question waits for the keyboard to rest (issue 23); `r` opens its box now.
    if let Some(key) = app.held_question() {
        let text = held_text(app, app.store().agent_name(key.agent), room_left);
        frame.render_widget(Paragraph::new(Line::styled(text, Style::new().fg(t.interrupted))), area);
        frame.render_widget(Paragraph::new(Line::from(right).right_aligned()), area);
        return;
    }
    // What the user just did, and what became of it, for a few seconds.
    if let Some(flash) = &app.steer().flash
        && app.now().duration_since(flash.at).as_secs() < FLASH_SECONDS
    {
        let style = if flash.error {
            Style::new().fg(t.failure)
        } else {
            Style::new().fg(t.success)
        };
        frame.render_widget(
            Paragraph::new(Line::styled(format!(" {}", line(&flash.text, room_left)), style)),
            area,
        );
        frame.render_widget(Paragraph::new(Line::from(right).right_aligned()), area);
        return;
    }
    let hints = if app.top_popup::<Detail>().is_some() {
        detail_hints(app)
    } else if app.top_popup::<AgentsView>().is_some() {
        agents_hints(app)
    } else {
        main_hints(app, waiting)
    };
    // As many hints as fit beside the counter, most useful first.
    let mut left = String::new();
    for h in hints {
        let next = format!(" {h} ");
        if width(&left) + width(&next) > room_left {
            break;
        }
        left.push_str(&next);
    }
    frame.render_widget(Paragraph::new(Line::styled(left, t.dim())), area);
    frame.render_widget(Paragraph::new(Line::from(right).right_aligned()), area);
}

/// `NAME has a question · r answers now` in `room` columns: the agent's name (sanitised) is
/// what gets cut.
fn held_text(app: &App, agent: &str, room: usize) -> String {
    let rest = format!(" has a question · {} answers now", app.keys().hint(Action::Reply));
    let name = line(agent, room.saturating_sub(1 + width(&rest)).max(1));
    format!(" {}", line(&format!("{name}{rest}"), room.saturating_sub(1)))
}

/// The main screen's keys, most useful first.
fn main_hints(app: &App, waiting: usize) -> Vec<String> {
    let k = |a: Action| app.keys().hint(a);
    let mut hints = vec![
        format!("{}{} move", k(Action::Up), k(Action::Down)),
        format!("{} details", k(Action::Details)),
    ];
    if waiting > 0 {
        hints.push(format!("{} inbox", k(Action::Inbox)));
    }
    if app.store().approval_count() > 0 {
        hints.push(format!("{} approvals", k(Action::FocusNext)));
    }
    hints.extend([
        format!("{} filter", k(Action::Filter)),
        format!("{} new task", k(Action::NewTask)),
        format!("{} cancel", k(Action::Cancel)),
        format!("{} sort", k(Action::Sort)),
        format!("{} freeze", k(Action::Freeze)),
        format!("{} finished", k(Action::ToggleTerminal)),
    ]);
    hints
}

/// The agents view's keys, from its own map.
fn agents_hints(app: &App) -> Vec<String> {
    let k = |a: Action| app.keys().hint_in(Mode::Agents, a);
    vec![
        format!("{}{} move", k(Action::Up), k(Action::Down)),
        format!("{} tasks", k(Action::Details)),
        format!("{} filter", k(Action::Filter)),
        format!("{} sort", k(Action::Sort)),
        format!("{} close", k(Action::Back)),
        format!("{} {} page", k(Action::PageUp), k(Action::PageDown)),
    ]
}

/// The detail pane's keys (the main map's moves scroll it; any other key closes it).
fn detail_hints(app: &App) -> Vec<String> {
    let k = |a: Action| app.keys().hint(a);
    vec![
        format!("{}{} scroll", k(Action::Up), k(Action::Down)),
        format!("{} {} page", k(Action::PageUp), k(Action::PageDown)),
        format!("{} top", k(Action::Top)),
        format!("{} end", k(Action::Bottom)),
        format!("{} back", k(Action::Back)),
        format!("{} help", k(Action::Help)),
    ]
}
