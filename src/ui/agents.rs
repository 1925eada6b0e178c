//! The agents pane: one row per agent with its health, protocol and counts, its trouble in its
//! own words; on narrow screens, one line of badges instead.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format::{line, pad, width, wrap};
use super::view::{Labels, border, counts_spans};
use crate::app::App;
use crate::event::{Health, SignedCardAtTap};
use crate::text::one_line;
use crate::theme::health_glyph;

/// Lines an agent's trouble may take on its row before it is cut.
const HEALTH_LINES: usize = 3;

fn agent_protocol(app: &App, i: usize) -> String {
    match &app.store().agents[i].info {
        Some(info) => format!("{} {}", info.version.label(), info.binding.label()),
        None => "-".into(),
    }
}

/// What is wrong with an agent, in the agent's own words, without repeating its name.
fn trouble(name: &str, health: &Health) -> Option<String> {
    let detail = health.detail()?;
    let detail = line(&detail, usize::MAX);
    Some(match detail.strip_prefix(name).and_then(|d| d.strip_prefix(": ")) {
        Some(rest) => rest.to_string(),
        None => detail,
    })
}

/// Columns for agent names: the longest name's, at least 5 and at most `max`.
pub(super) fn name_width(app: &App, max: usize) -> usize {
    app.store()
        .agents
        .iter()
        .map(|a| width(&line(&a.name, max)))
        .max()
        .unwrap_or(5)
        .clamp(5, max)
}

/// One row per agent (its trouble wrapped under it), for a panel `width` columns wide inside.
pub(super) fn agent_lines(app: &App, room: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let name_w = name_width(app, 24);
    let mut out = Vec::new();
    for (i, a) in app.store().agents.iter().enumerate() {
        let health = &a.health;
        let name = line(&a.name, name_w);
        let mut spans = vec![
            Span::raw(format!(" {}  ", pad(&name, name_w))),
            Span::styled(
                format!("{} {:<12}", health_glyph(health), health.label()),
                t.health(health),
            ),
            Span::styled(format!(" {:<15}", agent_protocol(app, i)), t.dim()),
        ];
        let hang = name_w + 32;
        match trouble(&name, health) {
            // What went wrong, where it went wrong: on the agent's own row.
            Some(detail) if !matches!(health, Health::Polling { .. }) => {
                spans.push(Span::styled(detail, t.health(health)));
            }
            _ => {
                // A2A 1.0 §8.4: what the card's signatures say, first, since it says whom the
                // rest of the row is from.
                if let Some(signature) = a.info.as_ref().and_then(|info| info.card_signature.as_ref()) {
                    // A key from the card itself (or another origin) verifies, but says nothing
                    // of who wrote the card.
                    let style = if signature.trusted() {
                        t.dim()
                    } else if signature.verified() {
                        Style::new().fg(t.degraded)
                    } else {
                        Style::new().fg(t.broken)
                    };
                    spans.push(Span::styled(format!("{}; ", line(&signature.label(), 120)), style));
                }
                spans.extend(counts_spans(&app.store().counts(i), app, Labels::Medium));
                if a.listing_cut {
                    spans.push(Span::styled("listing cut at the page limit; ", t.dim()));
                }
                if let Some(off) = a.info.as_ref().and_then(|info| info.push_off.as_deref()) {
                    spans.push(Span::styled(format!("{}; ", one_line(off)), t.dim()));
                }
                if a.push_refused > 0 {
                    let refused = format!("{} push deliveries refused (wrong token); ", a.push_refused);
                    spans.push(Span::styled(refused, Style::new().fg(t.broken)));
                }
                for (busy, server) in [(a.tap_busy, "tap"), (a.push_busy, "push receiver")] {
                    if busy > 0 {
                        let refused = format!("{busy} refused by the {server} (too many connections); ");
                        spans.push(Span::styled(refused, Style::new().fg(t.broken)));
                    }
                }
                match a.tap_signed_card {
                    Some(SignedCardAtTap::PassedThrough) => spans.push(Span::styled(
                        "signed card kept whole: the planner goes around the tap; ",
                        Style::new().fg(t.broken),
                    )),
                    Some(SignedCardAtTap::Stripped) => {
                        spans.push(Span::styled("tap stripped the card's signatures; ", t.dim()));
                    }
                    None => {}
                }
                if a.missed_events > 0 {
                    let missed = format!("{} gaps in events (fetched again); ", a.missed_events);
                    spans.push(Span::styled(missed, t.dim()));
                }
                if a.info.as_ref().is_some_and(|info| !info.lists_tasks) {
                    spans.push(Span::styled("0.3: no ListTasks; watching tasks started here", t.dim()));
                }
            }
        }
        out.extend(wrap(&Line::from(spans), room, hang, HEALTH_LINES));
    }
    out
}

pub(super) fn draw(frame: &mut Frame, area: Rect, app: &App, compact: bool) {
    if compact {
        let lines = agent_badges(app, usize::from(area.width));
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let lines = agent_lines(app, usize::from(area.width.saturating_sub(2)));
    let title = Line::from(Span::styled(" Agents ", Style::new().fg(app.theme().title)));
    frame.render_widget(Paragraph::new(lines).block(border(title, app, false)), area);
}

/// Narrow screens: one line of badges, then, for an agent that cannot be watched at all, why
/// (the env var to set, the address that refused), since there is no agents panel to say it.
pub(super) fn agent_badges(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let mut spans = Vec::new();
    for a in &app.store().agents {
        spans.push(Span::styled(
            format!(" {} ", health_glyph(&a.health)),
            t.health(&a.health),
        ));
        spans.push(Span::raw(line(&a.name, 14)));
        if !matches!(a.health, Health::Streaming) {
            spans.push(Span::styled(format!(" {}", a.health.label()), t.health(&a.health)));
        }
        spans.push(Span::raw(" "));
    }
    let mut out = wrap(&Line::from(spans), width, 0, 1);
    for a in &app.store().agents {
        if out.len() >= 5 {
            break;
        }
        if !matches!(a.health, Health::Unauthorized { .. } | Health::Unreachable { .. }) {
            continue;
        }
        let name = line(&a.name, 24);
        let detail = trouble(&name, &a.health).unwrap_or_default();
        let text = Line::styled(
            format!(" {} {name}: {detail}", health_glyph(&a.health)),
            t.health(&a.health),
        );
        out.extend(wrap(&text, width, 2, 2));
    }
    out
}
