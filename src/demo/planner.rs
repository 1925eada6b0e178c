//! The demo's planner: delegates a realistic mix of work to the demo agents, the way an
//! orchestrating agent would, all in one context: test runs (one fails), reviews that ask a
//! question, deploys that need an operator's approval, a production deploy that is rejected,
//! a run it cancels, and an assistant turn that speaks interactions/v1.

use std::time::Duration;

use crate::a2a::auth::Secret;
use crate::a2a::{Client, ClientOptions, Message, Part, SendMessageRequest, StreamResponse, TaskState};

/// What the planner does to a task later, unless a person got there first.
#[derive(Debug, Clone, Copy)]
enum FollowUp {
    Cancel,
    /// Plays the operator: POSTs to the approval link (outside A2A).
    Approve,
    /// Answers the question itself.
    Answer(&'static str),
}

/// One delegation: which agent, what to ask, what to do later, how long to wait before the next.
struct Step {
    agent: &'static str,
    text: &'static str,
    /// After this many beats, this follow-up.
    later: Option<(u32, FollowUp)>,
    pause: u32,
}

const ROUND: [Step; 8] = [
    Step {
        agent: "test-runner",
        text: "run the tests of payments-api at 3f2c9e1",
        later: None,
        pause: 2,
    },
    Step {
        agent: "code-reviewer",
        text: "review this diff of payments-api",
        later: Some((30, FollowUp::Answer("main"))),
        pause: 3,
    },
    Step {
        agent: "deployer",
        text: "deploy build 2026.10.06-1 to staging",
        later: Some((20, FollowUp::Approve)),
        pause: 3,
    },
    Step {
        agent: "test-runner",
        text: "run the tests of refunds at deadbee, expect a fail",
        later: None,
        pause: 2,
    },
    Step {
        agent: "deployer",
        text: "deploy build 2026.10.06-1 to production",
        later: None,
        pause: 2,
    },
    Step {
        agent: "assistant",
        text: "open a pull request with the release notes",
        later: None,
        pause: 3,
    },
    Step {
        agent: "test-runner",
        text: "run the slow integration tests",
        later: Some((4, FollowUp::Cancel)),
        pause: 6,
    },
    Step {
        agent: "test-runner",
        text: "run the tests of ledger at 9a1b7c3",
        later: None,
        pause: 8,
    },
];

/// Rounds before the planner rests, so a demo left open all day stays small.
const ROUNDS: usize = 12;

pub struct Planner {
    clients: Vec<(&'static str, Client)>,
    context: String,
    step: Duration,
}

impl Planner {
    /// Connects to each demo agent (the deployer with its token).
    /// Connects to each demo agent at `url(name)` (the agent itself, or a tap in front of it);
    /// every delegation goes into `context`.
    pub async fn connect(
        url: impl Fn(&str) -> String,
        token: &str,
        step: Duration,
        context: String,
    ) -> Result<Planner, crate::a2a::Error> {
        let mut clients = Vec::new();
        for name in ["test-runner", "code-reviewer", "deployer", "assistant"] {
            let opts = ClientOptions {
                name: Some(name.to_string()),
                token: (name == "deployer").then(|| Secret::new(token)),
                ..ClientOptions::default()
            };
            clients.push((name, Client::connect(&url(name), opts).await?));
        }
        Ok(Planner {
            clients,
            context,
            step: step.max(Duration::from_millis(50)),
        })
    }

    fn client(&self, agent: &str) -> Option<&Client> {
        self.clients.iter().find(|(n, _)| *n == agent).map(|(_, c)| c)
    }

    /// Delegates until the rounds are done; errors are logged and the planner goes on.
    pub async fn run(self) {
        let beat = self.step * 2;
        let mut due: Vec<(u32, FollowUp, &Client, String)> = Vec::new();
        let mut tick = 0u32;
        for _ in 0..ROUNDS {
            for step in &ROUND {
                let Some(client) = self.client(step.agent) else {
                    continue;
                };
                let mut message = Message::user(vec![Part::text(step.text)]);
                message.context_id = Some(self.context.clone());
                let req = SendMessageRequest::without_waiting(message);
                match client.send_message(&req).await {
                    Ok(StreamResponse::Task(task)) => {
                        if let Some((after, what)) = step.later {
                            due.push((tick + after, what, client, task.id));
                        }
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(agent = step.agent, error = %e, "planner could not delegate"),
                }
                for _ in 0..step.pause {
                    tokio::time::sleep(beat).await;
                    tick += 1;
                    let now: Vec<_> = due.iter().filter(|d| d.0 <= tick).cloned().collect();
                    due.retain(|d| d.0 > tick);
                    for (_, what, client, id) in now {
                        follow_up(client, &id, what).await;
                    }
                }
            }
        }
    }
}

/// Acts on a task only while it still waits for that act: a person may have been first.
async fn follow_up(client: &Client, id: &str, what: FollowUp) {
    let task = match client.get_task(id, Some(0)).await {
        Ok(t) => t,
        Err(e) => return tracing::info!(task = %id, error = %e, "planner lost a task"),
    };
    let result = match what {
        FollowUp::Cancel if !task.status.state.is_terminal() => client.cancel_task(id).await.map(drop),
        FollowUp::Approve if task.status.state == TaskState::AuthRequired => {
            let link = task.status.message.as_ref().and_then(|m| m.links().into_iter().next());
            match link {
                Some(link) => approve(&link).await,
                None => Ok(()),
            }
        }
        FollowUp::Answer(text) if task.status.state == TaskState::InputRequired => {
            let message = Message::on_task(vec![Part::text(text)], &task.id, &task.context_id);
            client
                .send_message(&SendMessageRequest::without_waiting(message))
                .await
                .map(drop)
        }
        _ => Ok(()),
    };
    if let Err(e) = result {
        tracing::info!(task = %id, error = %e, "planner follow-up refused");
    }
}

async fn approve(link: &str) -> Result<(), crate::a2a::Error> {
    let http = crate::a2a::client::http_client(Duration::from_secs(5))?;
    http.post(link)
        .send()
        .await
        .map_err(|e| crate::a2a::Error::transport("approving", e))?;
    Ok(())
}
