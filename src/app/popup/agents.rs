//! The agents view (drawn by `ui::popups::agents`): every agent, one row each, over the panes
//! below the title. Sorted by what needs attention first, `s` for another order, `/` narrows it
//! (the filter popup, with the table's language: words, `agent:`, `group:`), ⏎ goes back to the
//! task table narrowed to the selected agent (`agent:NAME`). With groups, the rows are grouped.

use std::cmp::Reverse;

use crossterm::event::KeyCode;

use super::filter::Filter;
use super::{Behaviour, Member, ModeKeys, list_keys};
use crate::app::App;
use crate::app::keys::{Action, Key};
use crate::event::{AgentId, Health};
use crate::store::Store;
use crate::store::query::{Filter as Query, agent_matches};

/// The orders `s` goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AgentSort {
    /// Unreachable (or reconnecting), unauthorized, waiting on a person, then the rest; by name
    /// within each.
    #[default]
    Attention,
    Name,
    /// Most tasks waiting on a person first.
    Waiting,
    /// The quietest first: no event yet, then the longest since the last one.
    LastEvent,
}

impl AgentSort {
    const ALL: [AgentSort; 4] = [
        AgentSort::Attention,
        AgentSort::Name,
        AgentSort::Waiting,
        AgentSort::LastEvent,
    ];

    pub fn label(self) -> &'static str {
        match self {
            AgentSort::Attention => "needs attention",
            AgentSort::Name => "name",
            AgentSort::Waiting => "waiting on you",
            AgentSort::LastEvent => "last event, quietest first",
        }
    }

    fn next(self) -> AgentSort {
        let i = Self::ALL.iter().position(|s| *s == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
}

/// The agents view: its order, its filter and the selected row.
#[derive(Debug, Clone, Default)]
pub struct AgentsView {
    pub sort: AgentSort,
    pub filter: Query,
    /// The selected agent: the selection follows the agent as the rows move, not the row
    /// number. The first row when none is, or when the filter leaves it out.
    pub selected: Option<AgentId>,
}

pub const KEYS: ModeKeys = ModeKeys {
    name: "agents",
    title: "agents view",
    help: &[
        (Action::Up, "up"),
        (Action::Down, "down"),
        (Action::PageUp, "page up"),
        (Action::PageDown, "page down"),
        (Action::Details, "its tasks"),
        (Action::Filter, "filter: agent: group: health"),
        (Action::Sort, "next sort order"),
        (Action::Back, "close"),
    ],
    defaults: || {
        let mut keys = list_keys();
        keys.extend([
            (Key::plain(KeyCode::PageUp), Action::PageUp),
            (Key::plain(KeyCode::PageDown), Action::PageDown),
            (Key::char('/'), Action::Filter),
            (Key::char('s'), Action::Sort),
            (Key::char('A'), Action::Back),
        ]);
        keys
    },
};

/// Where an agent stands in "needs attention": the lower, the sooner a person should look.
fn attention(store: &Store, agent: AgentId) -> u8 {
    match &store.agents[agent].health {
        h if h.is_down() => 0,
        Health::Unauthorized { .. } => 1,
        _ if store.counts(agent).interrupted > 0 => 2,
        _ => 3,
    }
}

impl AgentsView {
    /// The agents the filter lets through, in the view's order: by group first when there are
    /// groups (in `Store::groups` order), then by the sort; ties by name, then by configuration.
    pub fn rows(&self, store: &Store) -> Vec<AgentId> {
        let groups = store.groups();
        let group_rank = |agent: AgentId| {
            let group = store.agents[agent].group.as_deref();
            groups.iter().position(|g| *g == group).unwrap_or(0)
        };
        let name = |agent: AgentId| store.agent_name(agent).to_lowercase();
        let mut rows: Vec<AgentId> = (0..store.agents.len())
            .filter(|agent| agent_matches(&self.filter, store, *agent))
            .collect();
        rows.sort_by_cached_key(|&agent| {
            let (rank, count, quiet) = match self.sort {
                AgentSort::Attention => (attention(store, agent), 0, None),
                AgentSort::Name => (0, 0, None),
                AgentSort::Waiting => (0, store.counts(agent).interrupted, None),
                AgentSort::LastEvent => (0, 0, store.agents[agent].last_event),
            };
            (group_rank(agent), rank, Reverse(count), quiet, name(agent), agent)
        });
        rows
    }

    /// The selected row among `rows`.
    pub fn selected_row(&self, rows: &[AgentId]) -> usize {
        (self
            .selected
            .and_then(|agent| rows.iter().position(|row| *row == agent)))
        .unwrap_or(0)
    }
}

impl App {
    /// The filter typed after `/` narrows the agents view while it is open, else the table.
    pub(in crate::app) fn set_filter(&mut self, filter: Query) {
        match self.popup_mut::<AgentsView>() {
            Some(view) => view.filter = filter,
            None => self.spec.filter = filter,
        }
        self.refresh();
    }

    /// The task table, narrowed to one agent's tasks: what ⏎ on the agents view leads to.
    fn show_tasks_of(&mut self, agent: AgentId) {
        let name = self.store.agent_name(agent).to_string();
        self.spec.filter = Query::parse(&format!("agent:{name}"));
        if self.tree.shown {
            self.toggle_tree();
        }
        self.frozen = None;
        self.selected = None;
        self.focus = crate::app::Pane::Tasks;
        self.refresh();
    }
}

impl Behaviour for AgentsView {
    const IS_BOX: bool = false;

    fn on_action(app: &mut App, action: Action) {
        // A page is the rows the view shows: the panes' space less its border and header.
        let page = usize::from(app.areas.body().height.saturating_sub(3)).max(1);
        let Some(view) = AgentsView::top_mut(&mut app.popups) else {
            return;
        };
        let rows = view.rows(&app.store);
        let at = view.selected_row(&rows);
        let to = match action {
            Action::Up => Some(at.saturating_sub(1)),
            Action::Down => Some(at + 1),
            Action::PageUp => Some(at.saturating_sub(page)),
            Action::PageDown => Some(at + page),
            _ => None,
        };
        if let Some(to) = to {
            view.selected = rows.get(to.min(rows.len().saturating_sub(1))).copied();
            return;
        }
        match action {
            Action::Sort => view.sort = view.sort.next(),
            Action::Filter => {
                let input = view.filter.text().to_string();
                app.push(Filter { input });
            }
            Action::Details => {
                let chosen = rows.get(at).copied();
                app.pop();
                if let Some(agent) = chosen {
                    app.show_tasks_of(agent);
                }
            }
            Action::Back => {
                app.pop();
            }
            _ => {}
        }
    }
}
