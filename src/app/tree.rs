//! The delegation tree as the person sees it: shown in the table's place or not, collapsed
//! branches (by node, so they survive rebuilds), the selection and the rows on screen, over the
//! tree's shape (`store::tree`).

use std::collections::HashSet;

use super::App;
use super::keys::Action;
use crate::store::query::ViewSpec;
use crate::store::tree::{Node, TaskTree};
use crate::store::{Journal, Store};

/// One row on screen: a node and how deep it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub node: Node,
    pub depth: usize,
}

/// The tree as the person sees it.
#[derive(Debug, Default)]
pub struct TreeView {
    /// Shown in the table's place.
    pub shown: bool,
    tree: TaskTree,
    collapsed: HashSet<Node>,
    rows: Vec<Row>,
    pub selected: Option<Node>,
    /// Where the selection was last found in `rows`: checked first, so finding it costs nothing
    /// while the rows stand still.
    selected_row: usize,
    /// First visible row.
    pub offset: usize,
    /// The store changed while the tree was not looked at: build it again when it is.
    pub(super) stale: bool,
}

impl TreeView {
    pub fn tree(&self) -> &TaskTree {
        &self.tree
    }

    pub fn rows_from(&self, offset: usize) -> &[Row] {
        self.rows.get(offset..).unwrap_or(&[])
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    pub fn is_collapsed(&self, node: &Node) -> bool {
        self.collapsed.contains(node)
    }

    pub fn selected_index(&self) -> Option<usize> {
        let selected = self.selected.as_ref()?;
        if self.rows.get(self.selected_row).is_some_and(|r| r.node == *selected) {
            return Some(self.selected_row);
        }
        self.rows.iter().position(|r| r.node == *selected)
    }

    /// Brings the tree up to date with what the store says changed.
    fn refresh(&mut self, store: &Store, spec: &ViewSpec, journal: &Journal) {
        let same_spec = self.tree.built_for(spec);
        let updated = match journal {
            Journal::Changed(keys) if same_spec && !self.stale => self.tree.update(store, keys),
            _ => false,
        };
        if !updated {
            self.tree = TaskTree::build(store, spec);
            self.stale = false;
            self.lay_out();
        }
    }

    /// The rows from the tree and what is collapsed.
    fn lay_out(&mut self) {
        let collapsed = &self.collapsed;
        self.rows = (self.tree.preorder_with(|n| !collapsed.contains(n)).into_iter())
            .map(|(node, depth)| Row { node, depth })
            .collect();
    }

    fn set_collapsed(&mut self, node: &Node, collapse: bool) {
        let changed = if collapse {
            self.collapsed.insert(node.clone())
        } else {
            self.collapsed.remove(node)
        };
        if changed {
            self.lay_out();
        }
    }

    /// Opens every branch above a node, so that it is on screen.
    fn reveal(&mut self, node: &Node) {
        let mut at = self.tree.parent(node).cloned();
        let mut opened = false;
        while let Some(p) = at {
            opened |= self.collapsed.remove(&p);
            at = self.tree.parent(&p).cloned();
        }
        if opened {
            self.lay_out();
        }
    }
}

impl App {
    /// Shows the tree, or the table again. The tree is built afresh when shown: while hidden it
    /// did not follow the store.
    pub(super) fn toggle_tree(&mut self) {
        self.tree.shown = !self.tree.shown;
        self.tree.stale = true;
    }

    /// The tree after the store changed (while frozen it stands still, and is built afresh on
    /// thawing); the selection follows the task the app selected elsewhere (the inbox, a new
    /// task).
    pub(super) fn refresh_tree(&mut self, journal: &Journal) {
        let changed = !matches!(journal, Journal::Changed(keys) if keys.is_empty());
        if self.frozen.is_some() {
            self.tree.stale |= changed;
        } else if changed || self.tree.stale || !self.tree.tree.built_for(&self.spec) {
            self.tree.refresh(&self.store, &self.spec, journal);
        }
        if let Some(key) = &self.selected {
            let node = Node::Task(key.clone());
            if self.tree.selected.as_ref() != Some(&node) && self.tree.tree.contains(&node) {
                self.tree.reveal(&node);
                self.tree.selected = Some(node);
            }
        }
        match self.tree.selected_index() {
            Some(i) => self.tree.selected_row = i,
            None => {
                self.tree.selected = self.tree.rows.first().map(|r| r.node.clone());
                self.tree.selected_row = 0;
            }
        }
        self.selected = self.tree.selected.as_ref().and_then(Node::task).cloned();
        let page = self.page.max(1);
        let len = self.tree.rows.len();
        let tree = &mut self.tree;
        match tree.selected_index() {
            Some(i) if i < tree.offset => tree.offset = i,
            Some(i) if i >= tree.offset + page => tree.offset = i + 1 - page,
            _ => {}
        }
        tree.offset = tree.offset.min(len.saturating_sub(page));
    }

    /// Selects the `i`-th row of the tree (clamped).
    pub(super) fn tree_select(&mut self, i: usize) {
        let last = self.tree.rows.len().saturating_sub(1);
        if let Some(row) = self.tree.rows.get(i.min(last)) {
            self.tree.selected = Some(row.node.clone());
            self.tree.selected_row = i.min(last);
            self.selected = row.node.task().cloned();
        }
    }

    /// The main screen's keys while the tree is shown: moves, collapse and expand, and ⏎ on a
    /// context opens or closes it. False if the action is not the tree's (the app does it).
    pub(super) fn tree_action(&mut self, action: Action) -> bool {
        let at = self.tree.selected_index().unwrap_or(0);
        let page = self.page.max(1);
        let node = self.tree.selected.clone();
        let branch = node.as_ref().filter(|n| !self.tree.tree.children(n).is_empty());
        match action {
            Action::Up => self.tree_select(at.saturating_sub(1)),
            Action::Down => self.tree_select(at + 1),
            Action::PageUp => self.tree_select(at.saturating_sub(page)),
            Action::PageDown => self.tree_select(at + page),
            Action::Top => self.tree_select(0),
            Action::Bottom => self.tree_select(usize::MAX),
            Action::Collapse => match (branch, &node) {
                (Some(b), _) if !self.tree.is_collapsed(b) => self.tree.set_collapsed(&b.clone(), true),
                // On a leaf or a closed branch: up to the parent, as file trees do.
                (_, Some(n)) => {
                    if let Some(parent) = self.tree.tree.parent(n).cloned() {
                        self.select_node(parent);
                    }
                }
                _ => {}
            },
            Action::Expand => {
                if let Some(b) = branch {
                    self.tree.set_collapsed(&b.clone(), false);
                }
            }
            Action::ToggleBranch => {
                if let Some(b) = branch {
                    let collapse = !self.tree.is_collapsed(b);
                    self.tree.set_collapsed(&b.clone(), collapse);
                }
            }
            Action::Details if matches!(node, Some(Node::Context { .. })) => {
                if let Some(b) = branch {
                    let collapse = !self.tree.is_collapsed(b);
                    self.tree.set_collapsed(&b.clone(), collapse);
                }
            }
            _ => return false,
        }
        true
    }

    fn select_node(&mut self, node: Node) {
        self.selected = node.task().cloned();
        self.tree.selected = Some(node);
    }
}
