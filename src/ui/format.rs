//! Small text helpers shared by the panes: short ids, ages, cutting and wrapping to a width.
//! Widths are terminal columns, not characters: `日本` takes four.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::a2a::TaskState;
// Ids and widths are the app's too (its messages quote task ids): they live in `columns`.
pub use crate::columns::{SHORT_ID, TASK_ID_MAX, char_width, fit, short_id, task_id, width};
use crate::text::{head, one_line};

/// How far into an agent's text one line on screen looks: a cell shows a line, not the ten
/// megabytes a hostile agent may send, and cleaning it costs the same whatever its size.
const LINE_BYTES: usize = 4096;

/// A count of lines or characters as terminal cells, saturating: text from an agent can be
/// longer than a u16 counts.
pub fn cells(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Agent text as one line of at most `width` columns: cleaned, line breaks folded, cut visibly.
pub fn line(text: &str, width: usize) -> String {
    let (start, cut) = head(text, LINE_BYTES);
    let mut out = one_line(start);
    if cut {
        out.push('…');
    }
    fit(&out, width)
}

/// `text` cut or padded with spaces to exactly `width` columns.
pub fn pad(text: &str, width: usize) -> String {
    let mut out = fit(text, width);
    let used = self::width(&out);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// Columns a state name gets: `INPUT_REQUIRED` whole, an unknown name from an agent cut.
pub const STATE_NAME: usize = 14;

/// A state's short name, cleaned (unknown names come verbatim from the agent) and cut.
pub fn state_name(state: &TaskState) -> String {
    line(state.short_name(), STATE_NAME)
}

/// `1 task`, `3 tasks`.
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Wraps a styled line to `width` columns: at spaces where it can, inside a word that is longer
/// than a line (links are shown whole, never cut). Continuation lines are indented like the
/// first, plus `hang`. At most `max` lines; a longer text ends in `…`.
pub fn wrap(line: &Line<'_>, width: usize, hang: usize, max: usize) -> Vec<Line<'static>> {
    let chars: Vec<(char, Style, usize)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style, char_width(c))))
        .collect();
    let width = width.max(1);
    let lead = chars.iter().take_while(|(c, ..)| *c == ' ').count();
    let indent = (lead + hang).min(width / 2);
    let mut out: Vec<Vec<(char, Style, usize)>> = Vec::new();
    let mut pos = 0;
    while pos < chars.len() && out.len() < max.max(1) {
        let first = out.is_empty();
        let room = if first { width } else { width - indent };
        let mut end = pos;
        let mut used = 0;
        while end < chars.len() && used + chars[end].2 <= room {
            used += chars[end].2;
            end += 1;
        }
        if end == chars.len() {
            out.push(chars[pos..].to_vec());
            pos = end;
            break;
        }
        // Break after the last space on the line, unless that is inside the leading indent.
        let floor = if first { lead } else { pos };
        let space = (floor.max(pos)..=end).rev().find(|&i| chars[i].0 == ' ' && i > pos);
        let (stop, next) = match space {
            Some(i) => (i, i + 1),
            None => (end.max(pos + 1), end.max(pos + 1)),
        };
        let mut piece = chars[pos..stop].to_vec();
        while piece.last().is_some_and(|(c, ..)| *c == ' ') {
            piece.pop();
        }
        out.push(piece);
        pos = next;
        while pos < chars.len() && chars[pos].0 == ' ' {
            pos += 1;
        }
    }
    let room = if out.len() <= 1 { width } else { width - indent };
    if pos < chars.len()
        && let Some(last) = out.last_mut()
    {
        // Cut: the last cell says so.
        while !last.is_empty() && (last.iter().map(|c| c.2).sum::<usize>() + 1 > room || last[last.len() - 1].0 == ' ')
        {
            last.pop();
        }
        let style = last.last().map_or(Style::new(), |c| c.1);
        last.push(('…', style, 1));
    }
    out.into_iter()
        .enumerate()
        .map(|(i, cells)| {
            let mut spans: Vec<Span<'static>> = Vec::new();
            if i > 0 && indent > 0 {
                spans.push(Span::raw(" ".repeat(indent)));
            }
            let mut run = String::new();
            let mut style = cells.first().map_or(Style::new(), |c| c.1);
            for (c, s, _) in cells {
                if s != style && !run.is_empty() {
                    spans.push(Span::styled(std::mem::take(&mut run), style));
                }
                style = s;
                run.push(c);
            }
            if !run.is_empty() {
                spans.push(Span::styled(run, style));
            }
            Line::from(spans).style(line.style)
        })
        .collect()
}

fn elapsed(now: Timestamp, then: Timestamp) -> i64 {
    now.duration_since(then).max(SignedDuration::ZERO).as_secs()
}

/// Time spent in a state: `0:42`, `12:05`, `3h07`, `2d`. A question waiting ten minutes
/// should look it.
pub fn waited(now: Timestamp, since: Timestamp) -> String {
    let s = elapsed(now, since);
    match s {
        0..3600 => format!("{}:{:02}", s / 60, s % 60),
        3600..86_400 => format!("{}h{:02}", s / 3600, (s % 3600) / 60),
        _ => format!("{}d", s / 86_400),
    }
}

/// How long ago: `now`, `12s ago`, `5m ago`, `3h ago`, `2d ago`.
pub fn ago(now: Timestamp, then: Timestamp) -> String {
    let s = elapsed(now, then);
    match s {
        0..2 => "now".into(),
        2..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

/// A wall-clock time for timelines, `09:00:00`, in the zone the dashboard shows (the system's,
/// or a fixed one in tests).
pub fn clock(ts: Timestamp, tz: &TimeZone) -> String {
    ts.to_zoned_datetime(tz.clone()).strftime("%H:%M:%S").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    #[test]
    fn ages_read_at_a_glance() {
        assert_eq!(waited(at(42), at(0)), "0:42");
        assert_eq!(waited(at(725), at(0)), "12:05");
        assert_eq!(waited(at(3 * 3600 + 7 * 60), at(0)), "3h07");
        assert_eq!(waited(at(0), at(10)), "0:00", "clock skew is not negative");
        assert_eq!(ago(at(1), at(0)), "now");
        assert_eq!(ago(at(300), at(0)), "5m ago");
    }

    #[test]
    fn ids_and_cells_are_cut_visibly() {
        assert_eq!(short_id("ecf2dcb6-79c8-48f8"), "ecf2dcb6");
        assert_eq!(fit("Which base branch should I compare", 10), "Which bas…");
        assert_eq!(fit("short", 10), "short");
        assert_eq!(fit("日本語の文", 5), "日本…", "columns, not characters");
        assert_eq!(line("two\nlines\x1b[31m red", 80), "two lines red");
        let huge = "word ".repeat(1_000_000);
        let cell = line(&huge, 20);
        assert_eq!(width(&cell), 20);
        assert!(cell.ends_with('…'));
    }

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_inside_long_words() {
        let l = Line::raw("  the quick brown fox jumps");
        assert_eq!(texts(&wrap(&l, 12, 0, 10)), ["  the quick", "  brown fox", "  jumps"]);
        let link = Line::raw("    http://example.com/approve/0123456789");
        assert_eq!(
            texts(&wrap(&link, 20, 0, 10)),
            ["    http://example.c", "    om/approve/01234", "    56789"],
            "a link is shown whole"
        );
        let cut = wrap(&Line::raw("a b c d e f g h"), 3, 0, 2);
        assert_eq!(texts(&cut), ["a b", "c…"]);
        assert_eq!(texts(&wrap(&Line::raw(""), 10, 0, 3)), Vec::<String>::new());
    }

    #[test]
    fn clock_times_are_in_the_given_zone() {
        assert_eq!(clock(at(0), &TimeZone::UTC), "08:00:00");
        let tokyo = TimeZone::fixed(jiff::tz::offset(9));
        assert_eq!(clock(at(0), &tokyo), "17:00:00");
    }
}
