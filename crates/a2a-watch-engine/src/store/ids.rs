//! Every task id, in sorted order, so the screen can show an id as short as it can be while
//! still telling it apart from the others: no id shares a longer prefix with it than one of its
//! two neighbours in sorted order does, so two lookups answer, whatever the number of tasks.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct SortedIds(BTreeSet<Arc<str>>);

impl SortedIds {
    /// Holds `id` (once, however many agents have a task by that id: the agent column tells
    /// those apart, not the id).
    pub fn insert(&mut self, id: &Arc<str>) {
        if !self.0.contains(&**id) {
            self.0.insert(Arc::clone(id));
        }
    }

    /// How many leading characters of `id` no other id held starts with: one more than the
    /// longest prefix it shares with a neighbour. More than `id` has when `id` is the start of
    /// another (`t-flood-99`, `t-flood-990`). Counts at most `max` characters: a hostile agent's
    /// megabyte-long ids cost no more per row than short ones.
    pub fn distinguishing_chars(&self, id: &str, max: usize) -> usize {
        let before = self
            .0
            .range::<str, _>((Bound::Unbounded, Bound::Excluded(id)))
            .next_back();
        let after = self.0.range::<str, _>((Bound::Excluded(id), Bound::Unbounded)).next();
        let shared = [before, after]
            .into_iter()
            .flatten()
            .map(|other| common_chars(id, other, max))
            .max()
            .unwrap_or(0);
        (shared + 1).min(max)
    }
}

/// Characters `a` and `b` start with in common, counting at most `max`.
fn common_chars(a: &str, b: &str, max: usize) -> usize {
    a.chars().zip(b.chars()).take(max).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holding(ids: &[&str]) -> SortedIds {
        let mut set = SortedIds::default();
        for id in ids {
            set.insert(&Arc::from(*id));
        }
        set
    }

    #[test]
    fn an_id_needs_one_character_past_what_its_nearest_neighbour_shares() {
        let ids = holding(&["t-flood-99", "t-flood-990", "t-flood-991", "t-flood-1", "zzz"]);
        // `t-flood-99` is the start of its successor: all of it and more.
        assert_eq!(ids.distinguishing_chars("t-flood-99", 64), 11);
        assert_eq!(ids.distinguishing_chars("t-flood-990", 64), 11);
        assert_eq!(ids.distinguishing_chars("t-flood-991", 64), 11);
        // Its neighbours are `t-flood-1`'s nearest: `t-flood-9…` differs at the ninth character.
        assert_eq!(ids.distinguishing_chars("t-flood-1", 64), 9);
        assert_eq!(ids.distinguishing_chars("zzz", 64), 1);
        assert_eq!(
            ids.distinguishing_chars("t-flood-99", 5),
            5,
            "counted up to the limit only"
        );
    }

    #[test]
    fn a_new_neighbour_lengthens_what_an_id_needs_and_an_old_one_changes_nothing() {
        let mut ids = holding(&["0190a1b2-c3d4-7e5f", "5b2d"]);
        assert_eq!(ids.distinguishing_chars("0190a1b2-c3d4-7e5f", 64), 1);
        // Ids sharing fifteen, then sixteen characters arrive, after it and before it.
        ids.insert(&Arc::from("0190a1b2-c3d4-7fff"));
        assert_eq!(ids.distinguishing_chars("0190a1b2-c3d4-7e5f", 64), 16);
        ids.insert(&Arc::from("0190a1b2-c3d4-7e00"));
        assert_eq!(ids.distinguishing_chars("0190a1b2-c3d4-7e5f", 64), 17);
        assert_eq!(ids.distinguishing_chars("0190a1b2-c3d4-7fff", 64), 16);
        // The same id again (another agent's task) is held once and changes nothing.
        ids.insert(&Arc::from("0190a1b2-c3d4-7e00"));
        assert_eq!(ids.0.len(), 4);
        assert_eq!(ids.distinguishing_chars("0190a1b2-c3d4-7e5f", 64), 17);
        // Multi-byte characters count as one.
        let ids = holding(&["日本語a", "日本語b"]);
        assert_eq!(ids.distinguishing_chars("日本語a", 64), 4);
    }
}
