//! The delegation tree's model: contexts as roots, their tasks under them, and a task whose
//! messages name another task in `referenceTaskIds` (spec section 4.4, Message) nested under that
//! task instead. A contextId and a task id only mean something on their agent, so both are per
//! agent; but a planner's own traffic through a tap (`TaskEntry::tapped`) is grouped by the
//! context the planner gave, across the agents it delegated to: one root per fan-out, as the
//! planner sees it.
//!
//! `TaskTree` is the shape, built from the store in O(n log n) and rebuilt only when its shape
//! may have changed (a task appears, disappears from the view, or refers elsewhere); a task that
//! only moved state updates the counts of its ancestors. What the person chose (shown, collapsed
//! branches, the selection) is the dashboard's: `app::tree`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;

use super::query::ViewSpec;
use super::{Counts, Store, TaskEntry, TaskKey};
use crate::a2a::TaskState;
use crate::event::AgentId;

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
    pub fn preorder_with(&self, open: impl Fn(&Node) -> bool) -> Vec<(Node, usize)> {
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
    pub fn update(&mut self, store: &Store, changed: &[TaskKey]) -> bool {
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

    /// Whether it was built with this view's filter (the sort does not apply): if not, it is
    /// built again.
    pub fn built_for(&self, spec: &ViewSpec) -> bool {
        self.spec == tree_spec(spec)
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
