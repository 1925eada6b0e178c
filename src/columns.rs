//! Text measured in terminal columns, and task ids as people quote them: what the panes draw
//! with (`ui::format`) and what the app's own messages say ("cancel 3f2a…"). Widths are terminal
//! columns, not characters: `日本` takes four.

use ratatui::text::Span;

use crate::store::Store;
use crate::text::{head, one_line};

/// Characters of an id people quote (and the least an id column is wide).
pub const SHORT_ID: usize = 8;

/// Columns a task id may take on screen: a UUID whole. Ids alike for longer are cut all the same.
pub const TASK_ID_MAX: usize = 36;

/// The first 8 characters of an id, the way people quote them.
pub fn short_id(id: &str) -> String {
    one_line(head(id, 64).0).chars().take(SHORT_ID).collect()
}

/// A task id as people quote it, its first 8 characters, unless another task's id starts the
/// same way: then as many as tell it apart from every other, and `…` when that is not all of
/// it, so `t-flood-99` (whole) and `t-flood-99a…` (cut) read differently. Two neighbour lookups
/// in the store, whatever the number of tasks.
pub fn task_id(store: &Store, id: &str) -> String {
    // One column is kept for the `…`.
    let needed = store.task_id_chars(id, TASK_ID_MAX - 1);
    if needed <= SHORT_ID {
        return short_id(id);
    }
    let (shown, cut) = match id.char_indices().nth(needed) {
        Some((end, _)) => (&id[..end], true),
        None => (id, false),
    };
    let mut out = one_line(shown);
    if cut {
        out.push('…');
    }
    fit(&out, TASK_ID_MAX)
}

/// Columns `text` takes on screen.
pub fn width(text: &str) -> usize {
    Span::raw(text).width()
}

/// Columns one character takes on screen.
pub fn char_width(c: char) -> usize {
    width(c.encode_utf8(&mut [0; 4]))
}

/// Cuts to `width` columns, marking the cut with `…`.
pub fn fit(text: &str, width: usize) -> String {
    if self::width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}
