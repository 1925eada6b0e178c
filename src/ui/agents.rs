//! The agents pane: one row per agent with its health, protocol and counts, its trouble in its
//! own words; on narrow screens, one line of badges instead.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format::{line, pad, plural, width, wrap};
use super::view::{Labels, border, counts_spans, spans_width};
use crate::app::App;
use crate::app::keys::Action;
use crate::event::{Health, SignedCardAtTap};
use crate::text::one_line;
use crate::theme::health_glyph;

/// Lines an agent's trouble may take on its row before it is cut.
const HEALTH_LINES: usize = 3;

pub(super) fn agent_protocol(app: &App, i: usize) -> String {
    match &app.store().agents[i].info {
        Some(info) => format!("{} {}", info.version.label(), info.binding.label()),
        None => "-".into(),
    }
}

/// What is wrong with an agent, in the agent's own words, without repeating its name.
pub(super) fn trouble(name: &str, health: &Health) -> Option<String> {
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
/// When the badges do not fit, the troubled agents are named first, as many as fit whole, and
/// the line ends with what matters of the rest: `50 agents · 2 unreachable · 1 unauthorized ·
/// A all` (the key of the agents view).
pub(super) fn agent_badges(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let all: Vec<usize> = (0..app.store().agents.len()).collect();
    let mut spans = badges(app, &all);
    // The last badge's trailing space may go past the edge.
    if spans_width(&spans).saturating_sub(1) > width {
        spans = summary_strip(app, width);
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

/// One badge per agent: its health's glyph, its name, and its health's word when not streaming.
fn badges(app: &App, agents: &[usize]) -> Vec<Span<'static>> {
    let t = app.theme();
    let mut spans = Vec::new();
    for a in agents.iter().filter_map(|i| app.store().agents.get(*i)) {
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
    spans
}

/// How soon a person should look at an agent's badge: those that cannot be reached (retrying
/// included, as in the agents view's "needs attention"), refused, not streaming, then the rest.
fn trouble_rank(health: &Health) -> u8 {
    match health {
        Health::Unreachable { .. } | Health::Reconnecting { .. } => 0,
        Health::Unauthorized { .. } => 1,
        Health::Connecting | Health::Polling { .. } => 2,
        Health::Streaming => 3,
    }
}

/// The strip when the badges do not fit: whole badges, the troubled first, then the counts.
fn summary_strip(app: &App, width: usize) -> Vec<Span<'static>> {
    let (t, store) = (app.theme(), app.store());
    let count = |wanted: fn(&Health) -> bool| store.agents.iter().filter(|a| wanted(&a.health)).count();
    let broken = Style::new().fg(t.broken);
    let mut summary = vec![Span::styled(plural(store.agents.len(), "agent"), t.dim())];
    for (n, what) in [
        (count(|h| matches!(h, Health::Unreachable { .. })), "unreachable"),
        // A down agent is shown retrying after its first failed attempt (`watch::agent`).
        (count(|h| matches!(h, Health::Reconnecting { .. })), "reconnecting"),
        (count(|h| matches!(h, Health::Unauthorized { .. })), "unauthorized"),
    ] {
        if n > 0 {
            summary.push(Span::styled(" · ", t.dim()));
            summary.push(Span::styled(format!("{n} {what}"), broken));
        }
    }
    summary.push(Span::styled(
        format!(" · {} all ", app.keys().hint(Action::Agents)),
        t.dim(),
    ));
    let mut order: Vec<usize> = (0..store.agents.len()).collect();
    order.sort_by_key(|i| trouble_rank(&store.agents[*i].health));
    let room = width.saturating_sub(spans_width(&summary));
    let mut spans = Vec::new();
    for agent in order {
        let badge = badges(app, &[agent]);
        if spans_width(&spans) + spans_width(&badge) > room {
            break;
        }
        spans.extend(badge);
    }
    let gap = room.saturating_sub(spans_width(&spans));
    spans.push(Span::raw(" ".repeat(gap)));
    spans.extend(summary);
    spans
}

/// What one group of agents (the config's `group`) comes to: the title and the agents view
/// count them so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct GroupCount<'a> {
    /// `None` for the agents in no group.
    pub name: Option<&'a str>,
    pub agents: usize,
    /// Unreachable or reconnecting.
    pub unreachable: usize,
    pub unauthorized: usize,
    /// Tasks waiting on a person.
    pub waiting: usize,
}

/// Every group in the order the config first names it, the agents in none last
/// (`Store::groups`); empty when no agent has a group.
pub(super) fn group_counts(app: &App) -> Vec<GroupCount<'_>> {
    let store = app.store();
    let mut groups: Vec<GroupCount> = (store.groups().into_iter())
        .map(|name| GroupCount {
            name,
            ..GroupCount::default()
        })
        .collect();
    for (i, a) in store.agents.iter().enumerate() {
        let Some(g) = groups.iter_mut().find(|g| g.name == a.group.as_deref()) else {
            continue;
        };
        g.agents += 1;
        g.unreachable += usize::from(a.health.is_down());
        g.unauthorized += usize::from(matches!(a.health, Health::Unauthorized { .. }));
        g.waiting += store.counts(i).interrupted;
    }
    groups
}

/// A group's counts as spans: its agents, then only what is not zero of what needs a look.
pub(super) fn group_spans(g: &GroupCount, app: &App) -> Vec<Span<'static>> {
    let t = app.theme();
    let name = g.name.map_or_else(|| "no group".to_string(), |n| line(n, 24));
    let mut spans = vec![Span::raw(format!("{name} {}", g.agents))];
    let broken = Style::new().fg(t.broken);
    for (n, glyph, style) in [
        (g.unreachable, "✖", broken),
        (g.unauthorized, "⊘", broken),
        (
            g.waiting,
            "◆",
            Style::new().fg(t.interrupted).add_modifier(Modifier::BOLD),
        ),
    ] {
        if n > 0 {
            spans.push(Span::styled(format!(" {glyph}{n}"), style));
        }
    }
    spans
}
