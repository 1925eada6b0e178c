//! The delegation tree: contexts as roots, their tasks under them, and a task whose messages name
//! another task in `referenceTaskIds` (spec section 4.4, Message) nested under that task instead.
//! A contextId and a task id only mean something on their agent, so both are per agent; but a
//! planner's own traffic through a tap (`TaskEntry::tapped`) is grouped by the context the planner
//! gave, across the agents it delegated to: one root per fan-out, as the planner sees it.
//!
//! `TaskTree` is the shape, built from the store in O(n log n) and rebuilt only when its shape
//! may have changed (a task appears, disappears from the view, or refers elsewhere); a task that
//! only moved state updates the counts of its ancestors. `TreeView` adds what the person chose:
//! shown or not, collapsed branches (by node, so they survive rebuilds), the selection and the
//! rows on screen.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;

use super::App;
use super::keys::Action;
use crate::a2a::TaskState;
use crate::event::AgentId;
use crate::store::query::ViewSpec;
use crate::store::{Counts, Journal, Store, TaskEntry, TaskKey};

/// A row of the tree: a context of one agent (of no one agent: a planner's, through taps), or a
/// task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    Context { agent: Option<AgentId>, id: Arc<str> },
    Task(TaskKey),
}

impl Node {
    pub fn task(&self) -> Option<&TaskKey> {
        match self {
            Node::Task(key) => Some(key),
            Node::Context { .. } => None,
        }
    }

    fn context_of(t: &TaskEntry) -> Node {
        Node::Context {
            agent: (!t.tapped).then_some(t.key.agent),
            id: t.context.clone(),
        }
    }
}

#[derive(Debug)]
struct NodeData {
    parent: Option<Node>,
    /// Oldest first: a branch reads in the order things were delegated.
    children: Vec<Node>,
    /// The tasks below this node by class (not the node itself).
    below: Counts,
    kind: Kind,
}

impl NodeData {
    /// A node about to be filled in: a context or referent first met as a parent.
    fn blank() -> NodeData {
        NodeData {
            parent: None,
            children: Vec::new(),
            below: Counts::default(),
            kind: Kind::Task {
                state: TaskState::Unspecified,
                context: Node::Context {
                    agent: None,
                    id: Arc::from(""),
                },
                refers: None,
            },
        }
    }
}

#[derive(Debug)]
enum Kind {
    /// Its first task gives the label.
    Context { first: TaskKey },
    /// As counted, and what places it: a change to any of these is a change of shape.
    Task {
        state: TaskState,
        /// Its context's node (which says whether it came through a tap).
        context: Node,
        /// The task its messages refer to, before cycles are broken.
        refers: Option<TaskKey>,
    },
}

/// The tree's shape over the tasks a view shows.
#[derive(Debug, Default)]
pub struct TaskTree {
    /// The filter and "finished hidden" it was built with (the sort does not apply).
    spec: ViewSpec,
    nodes: HashMap<Node, NodeData>,
    /// Newest context first.
    roots: Vec<Node>,
}

/// When a task was first seen: the order of a branch.
fn first_seen(t: &TaskEntry) -> Timestamp {
    t.timeline.front().map_or(t.state_since, |first| first.at)
}

/// The first task on the same agent that the task's messages name in `referenceTaskIds` (its
/// history oldest first, then its status message) and `known` holds; never itself.
fn referent(t: &TaskEntry, known: impl Fn(&TaskKey) -> bool) -> Option<TaskKey> {
    let messages = t.history.iter().chain(t.status.message.as_ref());
    let ids = messages.flat_map(|m| &m.reference_task_ids);
    ids.filter(|id| **id != *t.key.id)
        .map(|id| TaskKey {
            agent: t.key.agent,
            id: id.as_str().into(),
        })
        .find(|key| known(key))
}

/// The view's filter without its sort, which the tree does not use.
fn tree_spec(spec: &ViewSpec) -> ViewSpec {
    ViewSpec {
        sort: Default::default(),
        ..spec.clone()
    }
}

impl TaskTree {
    pub fn build(store: &Store, spec: &ViewSpec) -> TaskTree {
        let spec = tree_spec(spec);
        let mut shown: Vec<&TaskEntry> = store.tasks().filter(|t| spec.shows(store, t)).collect();
        let keys: HashSet<&TaskKey> = shown.iter().map(|t| &t.key).collect();
        let refers: HashMap<&TaskKey, TaskKey> = (shown.iter())
            .filter_map(|t| Some((&t.key, referent(t, |k| keys.contains(k))?)))
            .collect();
        let looped = on_cycles(&refers);
        shown.sort_by_cached_key(|t| (first_seen(t), t.key.clone()));
        let mut tree = TaskTree {
            spec,
            ..TaskTree::default()
        };
        let mut context_first: HashMap<Node, (Timestamp, TaskKey)> = HashMap::new();
        for t in &shown {
            let refers = refers.get(&t.key).cloned();
            let context = Node::context_of(t);
            // Tasks come oldest first: the first of a context is its first task.
            context_first
                .entry(context.clone())
                .or_insert_with(|| (first_seen(t), t.key.clone()));
            let parent = match &refers {
                Some(r) if !looped.contains(&t.key) => Node::Task(r.clone()),
                _ => context,
            };
            let node = Node::Task(t.key.clone());
            // A referent seen after a task that names it already holds that task as a child.
            let data = tree.nodes.entry(node.clone()).or_insert_with(NodeData::blank);
            data.parent = Some(parent.clone());
            data.kind = Kind::Task {
                state: t.state().clone(),
                context: Node::context_of(t),
                refers,
            };
            // Children arrive oldest first, so every branch is in order without a sort.
            tree.nodes
                .entry(parent)
                .or_insert_with(NodeData::blank)
                .children
                .push(node);
        }
        for (context, (_, first)) in &context_first {
            if let Some(data) = tree.nodes.get_mut(context) {
                data.kind = Kind::Context { first: first.clone() };
                tree.roots.push(context.clone());
            }
        }
        // Newest context first; ties by agent and id, so roots never swap at random.
        let at = |n: &Node| context_first.get(n).map(|(at, _)| *at);
        tree.roots.sort_by(|a, b| at(b).cmp(&at(a)).then_with(|| a.cmp(b)));
        tree.count_below();
        tree
    }

    /// Every node's `below`, children before parents (no recursion: a chain of references can
    /// be as deep as there are tasks).
    fn count_below(&mut self) {
        let order = self.preorder(|_| true);
        for node in order.iter().rev() {
            let Some(data) = self.nodes.get(node) else { continue };
            let (Some(parent), Kind::Task { state, .. }) = (data.parent.clone(), &data.kind) else {
                continue;
            };
            let mut add = data.below;
            add.add(state);
            if let Some(p) = self.nodes.get_mut(&parent) {
                p.below.merge(&add);
            }
        }
    }

    /// The nodes in display order with their depth, skipping the children of the nodes `open`
    /// refuses.
    fn preorder_with(&self, open: impl Fn(&Node) -> bool) -> Vec<(Node, usize)> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<(&Node, usize)> = self.roots.iter().rev().map(|r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            out.push((node.clone(), depth));
            if open(node) {
                stack.extend(self.children(node).iter().rev().map(|c| (c, depth + 1)));
            }
        }
        out
    }

    fn preorder(&self, open: impl Fn(&Node) -> bool) -> Vec<Node> {
        self.preorder_with(open).into_iter().map(|(n, _)| n).collect()
    }

    /// Takes the tasks that changed: true if only their states moved (the counts are updated),
    /// false if the shape may have changed and the tree must be built again.
    fn update(&mut self, store: &Store, changed: &[TaskKey]) -> bool {
        for key in changed {
            let node = Node::Task(key.clone());
            let shown = store.task(key).filter(|t| self.spec.shows(store, t));
            let (t, state) = match (shown, self.nodes.get(&node).map(|d| &d.kind)) {
                (None, None) => continue,
                (Some(t), Some(Kind::Task { state, context, refers })) => {
                    let known = |k: &TaskKey| self.nodes.contains_key(&Node::Task(k.clone()));
                    if *context != Node::context_of(t) || *refers != referent(t, known) {
                        return false;
                    }
                    (t, state.clone())
                }
                _ => return false,
            };
            if state != *t.state() {
                self.recount_ancestors(&node, &state, t.state());
            }
        }
        true
    }

    fn recount_ancestors(&mut self, node: &Node, old: &TaskState, new: &TaskState) {
        if let Some(NodeData {
            kind: Kind::Task { state, .. },
            ..
        }) = self.nodes.get_mut(node)
        {
            *state = new.clone();
        }
        let mut at = self.parent(node).cloned();
        while let Some(p) = at {
            let Some(data) = self.nodes.get_mut(&p) else { break };
            data.below.remove(old);
            data.below.add(new);
            at = data.parent.clone();
        }
    }

    pub fn roots(&self) -> &[Node] {
        &self.roots
    }

    pub fn children(&self, node: &Node) -> &[Node] {
        self.nodes.get(node).map_or(&[], |d| &d.children)
    }

    pub fn parent(&self, node: &Node) -> Option<&Node> {
        self.nodes.get(node)?.parent.as_ref()
    }

    pub fn contains(&self, node: &Node) -> bool {
        self.nodes.contains_key(node)
    }

    /// The tasks below a node, by class.
    pub fn below(&self, node: &Node) -> Counts {
        self.nodes.get(node).map(|d| d.below).unwrap_or_default()
    }

    /// A context's first task, whose first user message names it.
    pub fn first_task(&self, node: &Node) -> Option<&TaskKey> {
        match &self.nodes.get(node)?.kind {
            Kind::Context { first } => Some(first),
            Kind::Task { .. } => None,
        }
    }
}

/// The tasks whose references go round in a circle: they stay under their context, so the
/// tree has no loop. Each reference is followed once (O(n)).
fn on_cycles(refers: &HashMap<&TaskKey, TaskKey>) -> HashSet<TaskKey> {
    let mut done: HashSet<&TaskKey> = HashSet::new();
    let mut looped = HashSet::new();
    for start in refers.keys() {
        let mut path: Vec<&TaskKey> = Vec::new();
        // Where each key of this walk sits on it, so that meeting one again costs O(1).
        let mut on_path: HashMap<&TaskKey, usize> = HashMap::new();
        let mut at: Option<&TaskKey> = Some(start);
        while let Some(key) = at {
            if done.contains(key) {
                break;
            }
            if let Some(&from) = on_path.get(key) {
                looped.extend(path[from..].iter().map(|k| (*k).clone()));
                break;
            }
            on_path.insert(key, path.len());
            path.push(key);
            at = refers.get(key);
        }
        done.extend(path);
    }
    looped
}

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
        let same_spec = self.tree.spec == tree_spec(spec);
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
        } else if changed || self.tree.stale || self.tree.tree.spec != tree_spec(&self.spec) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> TaskKey {
        TaskKey {
            agent: 0,
            id: id.into(),
        }
    }

    #[test]
    fn cycles_are_found_once_and_chains_into_them_are_not_cycles() {
        let (a, b, c, d, e) = (key("a"), key("b"), key("c"), key("d"), key("e"));
        // a → b → c → a is a circle; d → a leads into it; e → d is a plain chain.
        let refers: HashMap<&TaskKey, TaskKey> = HashMap::from([
            (&a, b.clone()),
            (&b, c.clone()),
            (&c, a.clone()),
            (&d, a.clone()),
            (&e, d.clone()),
        ]);
        let looped = on_cycles(&refers);
        assert_eq!(looped, HashSet::from([a.clone(), b.clone(), c.clone()]));
    }
}
