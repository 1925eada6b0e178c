//! The help popup, drawn from the key maps themselves, so every bound key is listed: page 1 the
//! main screen's, page 2 each popup's.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::super::format::{fit, width, wrap};
use super::super::view::{border, to_u16};
use crate::app::keys::{Action, Mode};
use crate::app::popup::help::Help;
use crate::app::{App, Areas};

/// The keys of an action in a mode, as help lists them.
fn keys_of(app: &App, mode: Mode, action: Action) -> String {
    let keys: Vec<String> = app
        .keys()
        .keys_for(mode, action)
        .iter()
        .map(ToString::to_string)
        .collect();
    if keys.is_empty() {
        "(unbound)".to_string()
    } else {
        keys.join(" ")
    }
}

/// Page 1: each main-screen action with its keys. Page 2: each popup with its keys in one entry.
fn entries(app: &App, page: usize) -> Vec<(String, String)> {
    if page == 0 {
        return (Mode::Main.help().iter())
            .map(|(action, what)| (keys_of(app, Mode::Main, *action), what.to_string()))
            .collect();
    }
    (Mode::ALL.iter().filter(|m| **m != Mode::Main))
        .map(|mode| {
            let keys: Vec<String> = (mode.help().iter())
                .map(|(action, what)| format!("{} {what}", keys_of(app, *mode, *action)))
                .collect();
            (mode.title().to_string(), keys.join(" · "))
        })
        .collect()
}

/// The entries as the lines of a column `col_w` wide, the keys right-aligned in `key_w`.
fn column(entries: &[(String, String)], key_w: usize, bold: Style, col_w: usize) -> Vec<Line<'static>> {
    entries
        .iter()
        .flat_map(|(keys, what)| {
            let keys = fit(keys, key_w);
            let lead = " ".repeat(1 + key_w - width(&keys));
            let entry = Line::from(vec![
                Span::styled(format!("{lead}{keys}  "), bold),
                Span::raw(what.to_string()),
            ]);
            wrap(&entry, col_w, width(&keys) + 2, 3)
        })
        .collect()
}

/// The notes under the keys: how to change them, and what is on the other page.
fn notes(app: &App, page: usize, inner_w: usize) -> Vec<Line<'static>> {
    let next = app.keys().hint_in(Mode::Help, Action::NextPage);
    let notes: [String; 2] = if page == 0 {
        [
            "Keys can be changed in the config file: [keys] \"ctrl-d\" = \"page_down\"".to_string(),
            format!("{next}: the keys in popups · any other key closes this help."),
        ]
    } else {
        [
            "Per popup: [keys.confirm] \"o\" = \"yes\" (modes: filter, inbox, agents, confirm, answer, new_task, pick, help); ctrl-c quits from every popup.".to_string(),
            format!("{next}: the main screen's keys · any other key closes this help."),
        ]
    };
    notes
        .iter()
        .flat_map(|n| wrap(&Line::styled(format!(" {n}"), app.theme().dim()), inner_w, 0, 2))
        .collect()
}

/// The entries in one column where they fit in `room` lines, else in two (the second empty
/// for one), split where the lines balance.
fn columns(
    entries: &[(String, String)],
    bold: Style,
    inner_w: usize,
    room: usize,
) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let key_w = entries.iter().map(|(k, _)| width(k)).max().unwrap_or(1).min(16);
    let one = column(entries, key_w, bold, inner_w);
    if one.len() <= room {
        return (one, Vec::new());
    }
    let col_w = inner_w.saturating_sub(1) / 2;
    let heights: Vec<usize> = entries
        .iter()
        .map(|e| column(std::slice::from_ref(e), key_w, bold, col_w).len())
        .collect();
    let total: usize = heights.iter().sum();
    let mut split = 0;
    let mut acc = 0;
    while split < entries.len() && acc + heights[split] <= total.div_ceil(2) {
        acc += heights[split];
        split += 1;
    }
    (
        column(&entries[..split], key_w, bold, col_w),
        column(&entries[split..], key_w, bold, col_w),
    )
}

/// Help drawn from the key maps: one column where it fits, two where it does not (the whole
/// page must be readable on 80x24).
pub(super) fn draw(frame: &mut Frame, _areas: &Areas, app: &App, help: &Help) {
    let (area, page) = (frame.area(), help.page);
    let t = app.theme();
    let bold = Style::new().fg(t.title).add_modifier(Modifier::BOLD);
    let w = 80.min(area.width);
    let inner_w = usize::from(w.saturating_sub(2));
    let room = usize::from(area.height.saturating_sub(2));
    let notes = notes(app, page, inner_w);
    // A blank line above the keys and one above the notes.
    let (left, right) = columns(&entries(app, page), bold, inner_w, room.saturating_sub(2 + notes.len()));
    let body = left.len().max(right.len());
    // A blank line above the keys and one above the notes.
    let h = to_u16(body + 4 + notes.len()).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, popup);
    let title = if page == 0 {
        " Help · main screen "
    } else {
        " Help · popups "
    };
    let block = border(Line::styled(title, Style::new().fg(t.title)), app, true);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    let [top, _, bottom] = Layout::vertical([
        Constraint::Length(to_u16(body + 1)),
        Constraint::Fill(1),
        Constraint::Length(to_u16(notes.len())),
    ])
    .areas(inner);
    let top = Rect {
        y: top.y + 1,
        height: top.height.saturating_sub(1),
        ..top
    };
    if right.is_empty() {
        frame.render_widget(Paragraph::new(left), top);
    } else {
        let [l, _, r] =
            Layout::horizontal([Constraint::Fill(1), Constraint::Length(1), Constraint::Fill(1)]).areas(top);
        frame.render_widget(Paragraph::new(left), l);
        frame.render_widget(Paragraph::new(right), r);
    }
    frame.render_widget(Paragraph::new(notes), bottom);
}
