//! The tap (issue 12): a transparent A2A proxy in a planner's path. The planner is pointed at
//! `http://LISTEN`; every request goes on to the agent (UPSTREAM) and every response comes back
//! unchanged but for the agent card, whose interface URLs are pointed back at the tap so the
//! planner keeps coming through it. What passes through is decoded, off the proxy path, into the
//! store's own events, attributed to the agent: the dashboard sees the planner's tasks as the
//! planner sees them, even where ListTasks would not show them to a2a-watch.
//!
//! The planner's credentials go upstream with its requests and nowhere else: nothing here keeps,
//! logs or shows a header or a body. a2a-watch's own calls to the agent (the engine's) use only
//! what the user configured for it.
//!
//! Here: what a tap is (`--tap`, `[[tap]]`) and the listeners; `proxy` forwards, `card` rewrites
//! the card, `observe` turns what passed into events.

mod card;
mod observe;
mod proxy;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinSet;
use url::Url;

use crate::a2a::discovery;
use crate::event::{self, AgentId};
use crate::local_server;
use crate::watch::AgentSpec;

/// A planner's streams may stay open for hours; one peer (on loopback, every local process)
/// may hold 32 of a tap's 64 places, enough for a busy planner's streams, so that no other
/// address can take them all.
const LIMITS: local_server::Limits = local_server::Limits {
    connections: 64,
    per_peer: 32,
    header: Duration::from_secs(10),
    whole: None,
};

/// One `--tap [NAME=]LISTEN=UPSTREAM`, or one `[[tap]]` of the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapArg {
    /// The agent's name, as `--agent NAME=URL` gives it (it selects `A2A_TOKEN_<NAME>` for
    /// a2a-watch's own calls, never the planner's).
    pub name: Option<String>,
    pub listen: SocketAddr,
    pub upstream: String,
    /// Rewrite a signed card without its signatures (`--tap-strip-signatures`,
    /// `strip_signatures`) rather than pass it on unchanged.
    pub strip_signatures: bool,
}

/// `[NAME=]LISTEN=UPSTREAM`. Neither NAME nor LISTEN holds a `=`; the URL may (`?a=b`). Errors
/// never repeat the argument whole: its URL could hold a password.
pub fn parse_arg(arg: &str) -> Result<TapArg, String> {
    let expected = || "--tap: expected [NAME=]LISTEN=UPSTREAM, like 127.0.0.1:9000=http://127.0.0.1:41241".to_string();
    let (first, rest) = arg.split_once('=').ok_or_else(expected)?;
    let (name, listen, upstream) = match first.parse::<SocketAddr>() {
        Ok(listen) => (None, listen, rest),
        Err(_) => {
            let (listen, upstream) = rest.split_once('=').ok_or_else(expected)?;
            let listen = listen.parse().map_err(|_| {
                format!("--tap: {listen:?} is not an address to listen on (IP:PORT, like 127.0.0.1:9000)")
            })?;
            (Some(first.to_string()).filter(|n| !n.is_empty()), listen, upstream)
        }
    };
    upstream_url(upstream).map_err(|e| format!("--tap: {e}"))?;
    Ok(TapArg {
        name,
        listen,
        upstream: upstream.to_string(),
        strip_signatures: false,
    })
}

/// The agent's base URL: http or https, no credentials in it (README "Security"), no query or
/// fragment (request paths are appended to it).
pub fn upstream_url(upstream: &str) -> Result<Url, String> {
    let url = discovery::parse_url(upstream).map_err(|e| e.to_string())?;
    if !matches!(url.scheme(), "http" | "https") || url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "the upstream must be the agent's http(s) base URL without a query, not {}",
            crate::a2a::shown::ShownUrl::of_input(upstream)
        ));
    }
    Ok(url)
}

/// A tap listens on loopback unless allowed otherwise: elsewhere, other machines could send
/// requests through it (and read the agent's answers) as if they were the planner.
pub fn check_listen(listen: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if listen.ip().is_loopback() || allow_remote {
        return Ok(());
    }
    Err(format!(
        "the tap address {listen} is not loopback: anyone who reaches it talks to the agent \
         through a2a-watch; listen on 127.0.0.1, or add --tap-allow-remote (allow_remote = true \
         in a [[tap]]) to mean it"
    ))
}

/// The taps' sockets, bound before anything starts so that a taken port is an error at start-up.
pub struct Taps {
    bound: Vec<Bound>,
}

struct Bound {
    agent: AgentId,
    listener: TcpListener,
    upstream: Url,
    strip_signatures: bool,
}

impl Taps {
    /// Binds every agent's tap (`AgentSpec::tap`); the error names the address.
    pub async fn bind(specs: &[AgentSpec]) -> Result<Taps, (SocketAddr, std::io::Error)> {
        let mut bound = Vec::new();
        for (agent, spec) in specs.iter().enumerate() {
            let Some(listen) = spec.tap else { continue };
            let upstream = upstream_url(&spec.url).map_err(|e| (listen, std::io::Error::other(e)))?;
            // The planner's credentials cross to the agent as a2a-watch's own would: plain http
            // only to loopback, unless the user allowed it for this agent.
            if let Some(reason) = crate::a2a::client::insecure(&upstream, spec.client.allow_insecure_http) {
                return Err((listen, std::io::Error::other(reason)));
            }
            let listener = TcpListener::bind(listen).await.map_err(|e| (listen, e))?;
            bound.push(Bound {
                agent,
                listener,
                upstream,
                strip_signatures: spec.tap_strip_signatures,
            });
        }
        Ok(Taps { bound })
    }

    /// Where each tap listens (a port 0 given is the port taken), with its agent.
    pub fn addresses(&self) -> Vec<(AgentId, SocketAddr)> {
        (self.bound.iter())
            .filter_map(|b| Some((b.agent, b.listener.local_addr().ok()?)))
            .collect()
    }

    /// One line per tap: where the planner is pointed, and where it leads.
    pub fn describe(&self) -> Vec<String> {
        (self.bound.iter())
            .filter_map(|b| {
                let at = b.listener.local_addr().ok()?;
                let remote = if at.ip().is_loopback() {
                    ""
                } else {
                    " (not loopback: reachable from other machines)"
                };
                let strip = if b.strip_signatures {
                    "; a signed card loses its signatures"
                } else {
                    ""
                };
                Some(format!(
                    "tap: point the planner at http://{at} (forwards to {}{strip}){remote}",
                    crate::a2a::shown::ShownUrl::of_input(b.upstream.as_str())
                ))
            })
            .collect()
    }

    /// Starts serving; dropping what it returns stops every tap and closes its connections.
    pub fn start(self, events: event::Sender) -> Running {
        let mut tasks = JoinSet::new();
        // A connect timeout only: streams may stay quiet for hours.
        let http = proxy::http_client(Duration::from_secs(10));
        for b in self.bound {
            let tap = Arc::new(proxy::Tap {
                agent: b.agent,
                upstream: b.upstream,
                strip_signatures: b.strip_signatures,
                http: http.clone(),
                events: events.clone(),
                backlog: Default::default(),
            });
            tasks.spawn(local_server::serve(b.listener, LIMITS, tap));
        }
        Running { _tasks: tasks }
    }
}

/// The running taps; dropped, nothing is left listening.
pub struct Running {
    _tasks: JoinSet<()>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tap_is_listen_and_upstream_with_an_optional_name() {
        let plain = parse_arg("127.0.0.1:9000=http://127.0.0.1:41241").unwrap();
        assert_eq!(plain.name, None);
        assert_eq!(plain.listen, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(plain.upstream, "http://127.0.0.1:41241");
        let named = parse_arg("ops=[::1]:9000=https://ops.example/a2a").unwrap();
        assert_eq!(named.name.as_deref(), Some("ops"));
        assert_eq!(named.listen, "[::1]:9000".parse().unwrap());
        assert_eq!(named.upstream, "https://ops.example/a2a");
        for bad in [
            "http://127.0.0.1:41241",
            "ops=localhost:9000=http://h",
            "127.0.0.1:9000=ftp://h",
            "127.0.0.1:9000=http://h/?key=k",
            "127.0.0.1:9000=http://user:pw@h",
        ] {
            let err = parse_arg(bad).unwrap_err();
            assert!(err.starts_with("--tap"), "{err}");
            assert!(!err.contains("pw"), "a password is never repeated: {err}");
        }
    }

    #[test]
    fn only_loopback_listens_without_the_flag() {
        assert!(check_listen("127.0.0.1:1".parse().unwrap(), false).is_ok());
        assert!(check_listen("[::1]:1".parse().unwrap(), false).is_ok());
        let err = check_listen("0.0.0.0:9000".parse().unwrap(), false).unwrap_err();
        assert!(
            err.contains("0.0.0.0:9000") && err.contains("--tap-allow-remote"),
            "{err}"
        );
        assert!(check_listen("0.0.0.0:9000".parse().unwrap(), true).is_ok());
    }
}
