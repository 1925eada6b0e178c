//! `status`: one line for a shell prompt or a tmux status bar, from one ListTasks round per
//! agent, all agents at once, within `--timeout`. It shows only numbers, so no agent text
//! reaches the prompt; why an agent could not be read goes to stderr, sanitised.
//!
//! What is counted, over every task each agent lists (spec section 4.3, TaskState):
//! - waiting: INPUT_REQUIRED and AUTH_REQUIRED, a person's turn;
//! - failed: FAILED and REJECTED, work that did not happen;
//! - working: SUBMITTED and WORKING;
//! - unauthorized: agents that refused our credential (HTTP 401/403), or that we could not send
//!   one (`token_command` failed, or it would go over plain http off loopback): a person can fix
//!   these, so they are not lost among the agents that are down;
//! - unreachable: agents whose card or listing did not come for any other reason.
//!
//! `--group NAME` counts only the agents the config puts in that group.
//!
//! 0.3 agents have no ListTasks: they are read (their card answers) but add nothing.
//!
//! COMPLETED and CANCELED are not shown: a prompt with nothing to do prints nothing.

use std::time::Duration;

use serde::Serialize;

use super::args::{ConnArgs, StatusArgs, StatusFormat, WatchArgs};
use super::specs::{agent_specs, watch_options};
use super::{Error, out};
use crate::a2a::client::MAX_PAGES;
use crate::a2a::{Client, ListTasksRequest, Task, TaskState};
use crate::config::Config;
use crate::event::Health;
use crate::text::one_line;
use crate::watch::{AgentSpec, WatchOptions};

/// The whole round's limit when `--timeout` is not given: a prompt cannot wait long.
const STATUS_TIMEOUT: f64 = 3.0;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub waiting: usize,
    pub failed: usize,
    pub working: usize,
    pub unreachable: usize,
    pub unauthorized: usize,
    pub agents: usize,
}

impl Counts {
    fn add(&mut self, tasks: &[Task]) {
        for task in tasks {
            match task.status.state {
                TaskState::InputRequired | TaskState::AuthRequired => self.waiting += 1,
                TaskState::Failed | TaskState::Rejected => self.failed += 1,
                TaskState::Submitted | TaskState::Working => self.working += 1,
                _ => {}
            }
        }
    }

    /// The non-zero counts, in order of urgency, each with its tmux colour.
    fn segments(&self) -> Vec<(String, &'static str)> {
        [
            (self.waiting, "◆", "waiting", "yellow"),
            (self.failed, "✖", "failed", "red"),
            (self.working, "●", "working", "cyan"),
            (self.unreachable, "✖", "unreachable", "red"),
            (self.unauthorized, "⊘", "unauthorized", "magenta"),
        ]
        .into_iter()
        .filter(|(n, ..)| *n > 0)
        .map(|(n, mark, what, colour)| (format!("{mark} {n} {what}"), colour))
        .collect()
    }

    /// The line in `format`; empty (plain, tmux) when nothing is worth a look.
    pub fn line(&self, format: StatusFormat) -> String {
        let segments = self.segments();
        match format {
            StatusFormat::Json => serde_json::to_string(self).unwrap_or_default(),
            StatusFormat::Plain => segments.into_iter().map(|(s, _)| s).collect::<Vec<_>>().join(" · "),
            StatusFormat::Tmux => segments
                .into_iter()
                .map(|(s, colour)| format!("#[fg={colour}]{s}#[default]"))
                .collect::<Vec<_>>()
                .join(" · "),
        }
    }
}

/// `status`; `before` holds what came before the command (`a2a-watch --agent URL status`):
/// its agents are counted too, and its `--context` narrows every listing.
pub async fn status(conn: &ConnArgs, args: StatusArgs, before: WatchArgs) -> Result<(), Error> {
    let mut watch = before;
    watch.agents.extend(args.agents);
    watch.config = args.config.or(watch.config);
    let config = Config::load(watch.config.as_deref())?;
    let mut specs = agent_specs(conn, &watch, &config)?;
    if let Some(group) = &args.group {
        specs.retain(|spec| spec.group.as_ref() == Some(group));
        if specs.is_empty() {
            return Err(Error::Usage(format!(
                "no agent is in the group {:?}: groups are set in the config file, `group = \"NAME\"`",
                one_line(group)
            )));
        }
    }
    let request = ListTasksRequest {
        context_id: watch_options(&watch, &config).context,
        ..ListTasksRequest::default()
    };
    if specs.is_empty() {
        return Err(Error::Usage(
            "no agents: pass --agent URL or add [[agent]] to the config file".into(),
        ));
    }
    let limit = conn.timeout_or(STATUS_TIMEOUT)?;
    let rounds = specs.iter().map(|spec| tasks_of(spec, &request, limit));
    let results = futures::future::join_all(rounds).await;
    let mut counts = Counts {
        agents: specs.len(),
        ..Counts::default()
    };
    for (spec, result) in specs.iter().zip(results) {
        match result {
            Ok(tasks) => counts.add(&tasks),
            Err(Unread { refused, why }) => {
                *(if refused {
                    &mut counts.unauthorized
                } else {
                    &mut counts.unreachable
                }) += 1;
                out::error(&format!("a2a-watch: {}: {}", one_line(&spec.label()), one_line(&why)));
            }
        }
    }
    let line = counts.line(args.format);
    if !line.is_empty() {
        out::line(&line);
    }
    let unread = counts.unreachable + counts.unauthorized;
    if unread > 0 {
        return Err(Error::Failed(format!(
            "{unread} of {} agents could not be read",
            counts.agents
        )));
    }
    Ok(())
}

/// Why an agent's tasks could not be counted.
struct Unread {
    /// It refused the credential (401/403), or ours could not be had (`token_command` failed):
    /// `Health::Unauthorized`'s cases, as the dashboard tells them.
    refused: bool,
    why: String,
}

impl From<crate::a2a::Error> for Unread {
    fn from(e: crate::a2a::Error) -> Unread {
        // A credential withheld from where it must not go is the dashboard's unauthorized too
        // (`watch::agent`): a setting to fix, not an outage.
        let refused = matches!(
            e,
            crate::a2a::Error::Unauthorized { .. } | crate::a2a::Error::Withheld { .. }
        );
        Unread {
            refused,
            why: e.to_string(),
        }
    }
}

/// Every task one agent lists (every page), or why not, within `limit`.
async fn tasks_of(spec: &AgentSpec, request: &ListTasksRequest, limit: Duration) -> Result<Vec<Task>, Unread> {
    let round = async {
        let options = spec
            .client_options(WatchOptions::default().token_command_timeout.min(limit))
            .await
            .map_err(|health| Unread {
                refused: matches!(health, Health::Unauthorized { .. }),
                why: health.detail().unwrap_or_else(|| health.label().to_string()),
            })?;
        let client = Client::connect(&spec.url, options).await?;
        match client.list_pages(request, MAX_PAGES).await {
            Ok(listing) => Ok(listing.tasks),
            // 0.3 has no ListTasks: the agent answered its card, it just cannot be counted.
            Err(crate::a2a::Error::NotInVersion { .. }) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    };
    tokio::time::timeout(limit, round).await.unwrap_or_else(|_| {
        Err(Unread {
            refused: false,
            why: format!("no answer within {} s", limit.as_secs_f64()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::TaskStatus;

    fn task(state: TaskState) -> Task {
        Task {
            status: TaskStatus::new(state, None),
            ..Task::default()
        }
    }

    #[test]
    fn the_line_shows_what_needs_a_look_and_nothing_when_all_is_quiet() {
        let mut counts = Counts::default();
        counts.add(&[task(TaskState::Completed), task(TaskState::Canceled)]);
        assert_eq!(counts.line(StatusFormat::Plain), "");
        assert_eq!(counts.line(StatusFormat::Tmux), "");
        counts.add(&[
            task(TaskState::InputRequired),
            task(TaskState::AuthRequired),
            task(TaskState::Failed),
            task(TaskState::Rejected),
            task(TaskState::Working),
        ]);
        counts.unreachable = 1;
        counts.unauthorized = 2;
        assert_eq!(
            counts.line(StatusFormat::Plain),
            "◆ 2 waiting · ✖ 2 failed · ● 1 working · ✖ 1 unreachable · ⊘ 2 unauthorized"
        );
        assert_eq!(
            counts.line(StatusFormat::Tmux),
            "#[fg=yellow]◆ 2 waiting#[default] · #[fg=red]✖ 2 failed#[default] · \
             #[fg=cyan]● 1 working#[default] · #[fg=red]✖ 1 unreachable#[default] · \
             #[fg=magenta]⊘ 2 unauthorized#[default]"
        );
        let json: serde_json::Value = serde_json::from_str(&counts.line(StatusFormat::Json)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"waiting": 2, "failed": 2, "working": 1, "unreachable": 1, "unauthorized": 2, "agents": 0})
        );
    }
}
