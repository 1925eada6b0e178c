//! `GET /metrics` (issue 22): loopback unless allowed otherwise, an optional bearer token for a
//! remote scrape, anything else 404. On `local_server`'s accept loop, with its caps and header
//! timeout: every request may be hostile (README "Security").

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::{Format, Metrics};
use crate::local_server::{self, Foreign, Handler, Limits};

/// A scraper is one connection or two: a few places, each for one short request.
const LIMITS: Limits = Limits {
    connections: 16,
    per_peer: 8,
    header: Duration::from_secs(10),
    whole: Some(Duration::from_secs(30)),
};

/// What `--metrics-listen`, `--metrics-allow-remote` and `metrics_token` ask for.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    /// Required as `Authorization: Bearer TOKEN` on every scrape when set.
    pub token: Option<String>,
}

/// The metrics listen on loopback unless allowed otherwise: elsewhere, other machines read what
/// the agents are doing (their names, their counts).
pub fn check_listen(listen: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if listen.ip().is_loopback() || allow_remote {
        return Ok(());
    }
    Err(format!(
        "the metrics address {listen} is not loopback: anyone who reaches it reads what the \
         agents are doing; listen on 127.0.0.1, or add --metrics-allow-remote \
         (metrics_allow_remote = true in the config) to mean it, with metrics_token to ask \
         scrapers for a token"
    ))
}

/// The metrics socket, bound before anything starts so that a taken port is an error at start-up.
pub struct Server {
    listener: TcpListener,
    token: Option<String>,
}

impl Server {
    /// Binds `settings.listen`, once `check_listen` allows it.
    pub async fn bind(settings: &Settings) -> Result<Server, BindError> {
        check_listen(settings.listen, settings.allow_remote).map_err(BindError::NotLoopback)?;
        let listener = TcpListener::bind(settings.listen).await.map_err(BindError::Io)?;
        Ok(Server {
            listener,
            token: settings.token.clone(),
        })
    }

    /// Where it listens (a port 0 given is the port taken).
    pub fn address(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves `metrics` until what it returns is dropped.
    pub fn start(self, metrics: Metrics) -> Running {
        let mut tasks = JoinSet::new();
        let scrapes = Arc::new(Scrapes {
            metrics,
            token: self.token,
        });
        tasks.spawn(local_server::serve(self.listener, LIMITS, scrapes));
        Running { _tasks: tasks }
    }
}

/// Why the metrics server did not start.
#[derive(Debug)]
pub enum BindError {
    /// Not loopback, and not allowed (`check_listen`'s words).
    NotLoopback(String),
    Io(std::io::Error),
}

/// The running server; dropped, nothing is left listening.
pub struct Running {
    _tasks: JoinSet<()>,
}

/// Answers scrapes.
struct Scrapes {
    metrics: Metrics,
    token: Option<String>,
}

impl Handler for Scrapes {
    async fn handle(self: Arc<Self>, local: SocketAddr, req: Request<Incoming>) -> Response<Body> {
        if req.method() != Method::GET || req.uri().path() != "/metrics" {
            return local_server::plain(StatusCode::NOT_FOUND, "metrics", "only GET /metrics is here");
        }
        // On loopback, a page that rebound its name to this address must not read it.
        if local.ip().is_loopback()
            && let Some(Foreign::Host | Foreign::Origin) = local_server::foreign(req.headers(), local)
        {
            return local_server::plain(
                StatusCode::FORBIDDEN,
                "metrics",
                "a request from another site is refused",
            );
        }
        if let Some(token) = &self.token
            && !bearer_is(req.headers().get(header::AUTHORIZATION), token)
        {
            let mut resp = local_server::plain(StatusCode::UNAUTHORIZED, "metrics", "a bearer token is required");
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return resp;
        }
        let accept = req.headers().get(header::ACCEPT).and_then(|a| a.to_str().ok());
        let format = Format::accepting(accept);
        let mut resp = Response::new(Body::from(self.metrics.render(jiff::Timestamp::now(), format)));
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(format.content_type()));
        resp
    }

    async fn busy(self: Arc<Self>, _req: &Request<Incoming>) {}
}

/// Whether `authorization` is `Bearer TOKEN` with this token (RFC 6750 section 2.1), compared in
/// a time that does not tell how much of it matched.
fn bearer_is(authorization: Option<&HeaderValue>, token: &str) -> bool {
    let Some(given) = authorization.and_then(|a| a.as_bytes().strip_prefix(b"Bearer ")) else {
        return false;
    };
    constant_time_eq(given, token.as_bytes())
}

/// Equal bytes, looking at every byte of the longer whatever differs.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let longest = a.len().max(b.len());
    let mut differ = u8::from(a.len() != b.len());
    for i in 0..longest {
        differ |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    differ == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_must_match_whole() {
        let header = |v: &str| HeaderValue::from_str(v).unwrap();
        assert!(bearer_is(Some(&header("Bearer s3cret")), "s3cret"));
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret2",
            "Bearer ",
            "s3cret",
            "Basic s3cret",
            "bearer s3cret",
        ] {
            assert!(!bearer_is(Some(&header(wrong)), "s3cret"), "{wrong}");
        }
        assert!(!bearer_is(None, "s3cret"));
    }

    #[test]
    fn only_loopback_unless_allowed() {
        assert!(check_listen("127.0.0.1:9464".parse().unwrap(), false).is_ok());
        assert!(check_listen("[::1]:9464".parse().unwrap(), false).is_ok());
        let err = check_listen("0.0.0.0:9464".parse().unwrap(), false).unwrap_err();
        assert!(err.contains("--metrics-allow-remote"), "{err}");
        assert!(check_listen("0.0.0.0:9464".parse().unwrap(), true).is_ok());
    }
}
