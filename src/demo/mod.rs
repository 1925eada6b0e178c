//! Built-in demo agents: four real A2A 1.0 servers on loopback that play one scenario
//! (docs/protocol-notes.md, "The demo scenario"), as `test-runner`, `code-reviewer`, `deployer` and
//! `assistant`, over JSON-RPC and HTTP+JSON, for `serve-demo`, `demo` and the integration tests.
//! They answer in a2a-python's shapes.

mod approval_page;
mod assistant;
mod card;
mod code_reviewer;
mod deployer;
mod error;
mod guard;
mod jsonrpc;
mod listing;
pub mod planner;
mod rest;
mod router;
mod scenario;
mod service;
mod shutdown;
mod sse;
mod store;
mod test_runner;

use std::io;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use scenario::Scenario;
use service::Agent;
use shutdown::Shutdown;

#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// The first agent's port; the others take the next ones. 0 = an ephemeral port each.
    pub base_port: u16,
    /// The bearer token the deployer accepts.
    pub token: String,
    /// The pause between scenario steps.
    pub step: Duration,
}

impl Default for DemoConfig {
    fn default() -> DemoConfig {
        DemoConfig {
            base_port: 41241,
            token: "demo-token".into(),
            step: Duration::from_millis(600),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunningAgent {
    pub name: String,
    /// Base URL, e.g. `http://127.0.0.1:41241`; the card is at `/.well-known/agent-card.json`.
    pub url: String,
    pub port: u16,
}

/// The running agents. Dropping this stops them too, without waiting.
pub struct DemoAgents {
    pub agents: Vec<RunningAgent>,
    stop: watch::Sender<bool>,
    servers: Vec<JoinHandle<io::Result<()>>>,
}

/// Open streams end with the shutdown signal, so this bounds only a stuck connection.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

impl DemoAgents {
    /// The base URL of the agent with this name.
    ///
    /// # Panics
    /// If no demo agent has that name: the names are fixed, so that is a caller's bug.
    pub fn url(&self, name: &str) -> &str {
        match self.agents.iter().find(|a| a.name == name) {
            Some(agent) => &agent.url,
            None => panic!("no demo agent is named {name:?}"),
        }
    }

    /// Stops every agent: open streams end, servers finish their connections and stop.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for server in self.servers {
            let abort = server.abort_handle();
            if tokio::time::timeout(SHUTDOWN_GRACE, server).await.is_err() {
                abort.abort();
            }
        }
    }
}

fn scenarios() -> [Box<dyn Scenario>; 4] {
    [
        Box::new(test_runner::TestRunner),
        Box::new(code_reviewer::CodeReviewer),
        Box::new(deployer::Deployer),
        Box::new(assistant::Assistant),
    ]
}

/// Starts the four agents on 127.0.0.1 and returns once all of them listen.
pub async fn start(config: DemoConfig) -> io::Result<DemoAgents> {
    let (stop, shutdown) = Shutdown::channel();
    let mut agents = Vec::new();
    let mut servers = Vec::new();
    for (offset, scenario) in (0u16..).zip(scenarios()) {
        let port = match config.base_port {
            0 => 0,
            base => base
                .checked_add(offset)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "base port too high for four agents"))?,
        };
        // On an error here `stop` drops, which stops the agents already started.
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let port = listener.local_addr()?.port();
        let url = format!("http://127.0.0.1:{port}");
        let agent = Arc::new(Agent::new(scenario, url.clone(), config.step, shutdown.clone()));
        agents.push(RunningAgent {
            name: agent.card.name.clone(),
            url,
            port,
        });
        let app = router::router(agent, &config.token);
        let signal = shutdown.clone().signalled();
        servers.push(tokio::spawn(async move {
            // The approval page checks Host against the address a connection came in on.
            let app = app.into_make_service_with_connect_info::<crate::local_server::ConnectedTo>();
            axum::serve(listener, app).with_graceful_shutdown(signal).await
        }));
    }
    Ok(DemoAgents { agents, stop, servers })
}
