//! Demo wiring: the built-in agents alone (`serve-demo`), or with a planner and the dashboard
//! on its context (`demo`).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use super::Error;
use super::dashboard::{self, ScreenArgs};
use super::{out, print};
use crate::a2a::auth::Secret;
use crate::config::Config;
use crate::demo;
use crate::watch::{AgentSpec, Credential, WatchOptions};

/// The demo agents alone, on loopback, until interrupted.
pub async fn serve(base_port: u16, token: String, delay: f64) -> Result<(), Error> {
    let agents = demo::start(demo_config(base_port, token, delay)?)
        .await
        .map_err(|e| Error::Io {
            what: format!("127.0.0.1:{base_port}"),
            source: e,
        })?;
    out::print(&print::demo_banner(&agents));
    wait_for_interrupt().await;
    agents.shutdown().await;
    Ok(())
}

/// The demo agents, a planner delegating to them, and the dashboard on the planner's context.
pub async fn run(base_port: u16, delay: f64, screen: &ScreenArgs) -> Result<(), Error> {
    let token = uuid::Uuid::new_v4().simple().to_string();
    let config = demo_config(base_port, token.clone(), delay)?;
    let agents = match demo::start(config.clone()).await {
        Ok(agents) => agents,
        // Zero setup: if the ports are taken, any free ones will do.
        Err(_) => demo::start(demo::DemoConfig { base_port: 0, ..config })
            .await
            .map_err(|e| Error::Io {
                what: "127.0.0.1".into(),
                source: e,
            })?,
    };
    let specs: Vec<AgentSpec> = agents
        .agents
        .iter()
        .map(|a| {
            let mut spec = AgentSpec::new(a.url.clone());
            spec.name = Some(a.name.clone());
            spec.poll_interval = Duration::from_secs(2);
            if a.name == "deployer" {
                spec.credential = Credential::Value(Secret::new(token.clone()));
            }
            // The planner talks to each agent through a tap, as a user's own planner would
            // (README, "Watching your own planner"): what it delegates shows as it happens.
            spec.tap = Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
            spec
        })
        .collect();
    let taps = dashboard::bind_taps(&specs).await?;
    let tapped: Vec<(String, String)> = (taps.addresses().into_iter())
        .filter_map(|(agent, at)| Some((specs[agent].name.clone()?, format!("http://{at}"))))
        .collect();
    let through_tap = move |name: &str| tapped.iter().find(|(n, _)| n == name).map(|(_, url)| url.clone());
    let direct: Vec<(String, String)> = (agents.agents.iter())
        .map(|a| (a.name.clone(), a.url.clone()))
        .collect();
    // The planner connects once the dashboard runs, since that is when the taps answer.
    let context = uuid::Uuid::new_v4().to_string();
    let step = Duration::from_secs_f64(delay);
    let (planner_token, planner_context) = (token.clone(), context.clone());
    let planning = tokio::spawn(async move {
        let url = |name: &str| {
            let direct = || direct.iter().find(|(n, _)| n == name).map(|(_, url)| url.clone());
            through_tap(name).or_else(direct).unwrap_or_default()
        };
        match demo::planner::Planner::connect(url, &planner_token, step, planner_context).await {
            Ok(planner) => planner.run().await,
            Err(e) => tracing::warn!(error = %e, "the demo's planner could not connect"),
        }
    });
    let opts = WatchOptions {
        context: Some(context),
        ..WatchOptions::default()
    };
    let result = dashboard::watch(specs, taps, opts, &Config::default(), screen).await;
    planning.abort();
    agents.shutdown().await;
    result
}

fn demo_config(base_port: u16, token: String, delay: f64) -> Result<demo::DemoConfig, Error> {
    if !(delay >= 0.0 && delay.is_finite()) {
        return Err(Error::Usage("--delay must be a number of seconds, 0 or more".into()));
    }
    Ok(demo::DemoConfig {
        base_port,
        token,
        step: Duration::from_secs_f64(delay),
    })
}

async fn wait_for_interrupt() {
    // If the signal handler cannot be installed there is nothing to wait for but the end.
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}
