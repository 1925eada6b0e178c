//! Small text helpers shared by the panes: short ids, ages, links.

use jiff::{SignedDuration, Timestamp};

use crate::text::one_line;

/// The first 8 characters of an id, the way people quote them.
pub fn short_id(id: &str) -> String {
    one_line(id).chars().take(8).collect()
}

/// Cuts to `width` characters, marking the cut with `…`.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
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

/// A local wall-clock time for timelines: `09:00:00`.
pub fn clock(ts: Timestamp) -> String {
    let zoned = ts.to_zoned_datetime(jiff::tz::TimeZone::system());
    zoned.strftime("%H:%M:%S").to_string()
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
    }
}
