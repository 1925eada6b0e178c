//! Push notifications (spec sections 3.1.7, 3.1.10, 4.3): a webhook receiver inside the dashboard.
//! For agents whose card says `pushNotifications: true`, each watched task gets a push config
//! that points here and carries a token made for this session and that agent. Every delivery must
//! carry it back (`X-A2A-Notification-Token`); one that does not is refused with 401 and counted on
//! the agent's row. A delivery is taken only for a task registered with that agent (else 404), so
//! no agent can speak for another's tasks. Deliveries feed the store as stream events do (the
//! store tolerates repeats and order).
//! A config is deleted when its task's watch ends, and the rest when the engine stops.
//! The receiver is reached by agents, maybe through a tunnel (`--push-url`), so no `Host` rule
//! applies here: the token is checked before the body is read, and connections are capped as
//! on every local server (`local_server`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use jiff::Timestamp;
use tokio::sync::Notify;
use url::Url;

use crate::a2a::auth::Secret;
use crate::a2a::sse::DEFAULT_FRAME_LIMIT;
use crate::a2a::{Client, PushConfig, StateClass, StreamResponse};
use crate::event::{self, AgentId, Event, LocalServer};
use crate::local_server::{self, Handler};

/// Where the agent puts the config's token on a delivery (a2a-sdk's push sender; spec section
/// 4.3.3).
const TOKEN_HEADER: &str = "x-a2a-notification-token";
/// The receiver's path for one agent's deliveries, under the base URL.
const PATH: &str = "push";
/// A delivered task may be as large as a streamed event may be.
const DELIVERY_LIMIT: usize = DEFAULT_FRAME_LIMIT;

/// An agent sends a delivery, one small request, whole and at once: a client that has not sent
/// its head in 3 s, or a connection not done in 15 s, is cut off, so that clients without the
/// token (which need not stop at the token check) cannot keep agents out. One peer holds at
/// most 8 of the 64 places; behind a tunnel every agent is one peer, and the time limits hold.
const RECEIVER_LIMITS: local_server::Limits = local_server::Limits {
    connections: 64,
    per_peer: 8,
    header: Duration::from_secs(3),
    whole: Some(Duration::from_secs(15)),
};

/// What the user chose: `--push-listen`, `--push-url`, `--push-allow-remote` (or the config).
#[derive(Debug, Clone)]
pub struct PushSettings {
    pub listen: SocketAddr,
    /// Where agents reach the receiver's root, when not at `http://LISTEN/` (a tunnel).
    pub url: Option<Url>,
    /// Listen on an address other than loopback.
    pub allow_remote: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error(
        "--push-listen {0} is not a loopback address: anyone who can reach it could post to the \
         dashboard; pass --push-allow-remote (push_allow_remote = true) to listen there anyway"
    )]
    Remote(SocketAddr),
    #[error("--push-url {0} cannot be a base URL (it needs a scheme and a host and no query, like https://host/)")]
    Url(String),
    #[error("listening for push notifications on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// One config this session registered.
struct Registration {
    client: Arc<Client>,
    /// Woken when a delivery says the task ended, so its watcher checks at once rather than at
    /// its next (slow) poll.
    ended: Arc<Notify>,
}

/// The receiver, and the configs registered with agents.
pub struct Push {
    addr: SocketAddr,
    /// Ends with `/`; the agent's number and nothing else is appended.
    base: Url,
    /// One per agent, made when its first task is registered: an agent that knows its own token
    /// cannot post as another.
    tokens: Mutex<HashMap<AgentId, Secret>>,
    /// The same id on every config of this session: registering a task again replaces its
    /// config (spec section 3.1.7) rather than adding one.
    config_id: String,
    listener: Mutex<Option<tokio::net::TcpListener>>,
    registered: Mutex<HashMap<(AgentId, String), Registration>>,
}

impl std::fmt::Debug for Push {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Push")
            .field("addr", &self.addr)
            .field("base", &self.base.as_str())
            .finish_non_exhaustive()
    }
}

impl Push {
    /// Binds the receiver (it serves once the engine starts) and makes the session's token.
    pub async fn bind(settings: &PushSettings) -> Result<Push, PushError> {
        if !settings.listen.ip().is_loopback() && !settings.allow_remote {
            return Err(PushError::Remote(settings.listen));
        }
        let listener = tokio::net::TcpListener::bind(settings.listen)
            .await
            .map_err(|source| PushError::Bind {
                addr: settings.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| PushError::Bind {
            addr: settings.listen,
            source,
        })?;
        let root = match &settings.url {
            Some(url) => url.clone(),
            None => Url::parse(&format!("http://{addr}/")).map_err(|_| PushError::Url(addr.to_string()))?,
        };
        // The agent's number goes at the end of the path: a query or fragment would swallow it.
        if root.cannot_be_a_base() || root.host().is_none() || root.query().is_some() || root.fragment().is_some() {
            return Err(PushError::Url(crate::a2a::shown::ShownUrl::of(&root).to_string()));
        }
        let mut base = root;
        let path = format!("{}/{PATH}/", base.path().trim_end_matches('/'));
        base.set_path(&path);
        let session = uuid::Uuid::new_v4().simple().to_string();
        Ok(Push {
            addr,
            base,
            tokens: Mutex::default(),
            config_id: format!("a2a-watch-{}", &session[..12]),
            listener: Mutex::new(Some(listener)),
            registered: Mutex::default(),
        })
    }

    /// The address the receiver listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL one agent's deliveries go to.
    pub fn url_for(&self, agent: AgentId) -> String {
        format!("{}{agent}", self.base)
    }

    fn registered(&self) -> std::sync::MutexGuard<'_, HashMap<(AgentId, String), Registration>> {
        self.registered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tokens(&self) -> std::sync::MutexGuard<'_, HashMap<AgentId, Secret>> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The agent's token, made on first use.
    fn token_for(&self, agent: AgentId) -> Secret {
        (self.tokens().entry(agent))
            .or_insert_with(|| Secret::new(uuid::Uuid::new_v4().simple().to_string()))
            .clone()
    }

    /// Asks the agent to push the task's events here. Some: registered, and what wakes when a
    /// delivery says the task ended.
    pub async fn register(&self, agent: AgentId, client: &Arc<Client>, task: &str) -> crate::a2a::Result<Arc<Notify>> {
        let config = PushConfig {
            task_id: task.to_string(),
            id: self.config_id.clone(),
            url: self.url_for(agent),
            token: self.token_for(agent),
            tenant: None,
        };
        let key = (agent, task.to_string());
        let ended = Arc::new(Notify::new());
        // Known before the agent is asked: its first delivery may come before its answer.
        self.registered().insert(
            key.clone(),
            Registration {
                client: client.clone(),
                ended: ended.clone(),
            },
        );
        if let Err(e) = client.create_push_config(&config).await {
            self.registered().remove(&key);
            return Err(e);
        }
        Ok(ended)
    }

    /// A refused registration, as it may be logged: an agent that echoes its params in an error
    /// would echo the token, which never shows.
    pub fn shown_error(&self, e: &crate::a2a::Error) -> String {
        let mut shown = e.to_string();
        for token in self.tokens().values() {
            shown = without_secret(&shown, token.expose());
        }
        shown
    }

    /// Deletes the task's config, if this session registered one (best effort).
    pub async fn unregister(&self, agent: AgentId, task: &str) {
        let key = (agent, task.to_string());
        // Forgotten only once deleted: a watcher stopped mid-delete by the engine's shutdown
        // leaves it to `unregister_all`.
        let client = self.registered().get(&key).map(|reg| reg.client.clone());
        if let Some(client) = client {
            self.delete(agent, task, &client).await;
            self.registered().remove(&key);
        }
    }

    async fn delete(&self, agent: AgentId, task: &str, client: &Client) {
        if let Err(e) = client.delete_push_config(task, &self.config_id).await {
            let error = self.shown_error(&e);
            tracing::info!(agent, task, %error, "could not delete a push config");
        }
    }

    /// Deletes every config still registered, all at once, giving up after `within`.
    pub async fn unregister_all(&self, within: Duration) {
        let left: Vec<_> = self.registered().drain().collect();
        let deletes = left
            .iter()
            .map(|((agent, task), reg)| self.delete(*agent, task, &reg.client));
        if tokio::time::timeout(within, futures::future::join_all(deletes))
            .await
            .is_err()
        {
            tracing::info!("gave up deleting push configs after {} s", within.as_secs_f64());
        }
    }

    /// Serves deliveries until the engine stops (the task is then aborted, and nothing is left
    /// listening).
    pub async fn serve(self: Arc<Self>, events: event::Sender) {
        let Some(listener) = self.listener.lock().unwrap_or_else(PoisonError::into_inner).take() else {
            return;
        };
        let receiver = Arc::new(Receiver { push: self, events });
        local_server::serve(listener, RECEIVER_LIMITS, receiver).await;
    }

    /// What wakes the task's watcher, if the delivery says the task ended.
    fn ended_wake(&self, agent: AgentId, event: &StreamResponse) -> Option<Arc<Notify>> {
        let state = match event {
            StreamResponse::Task(t) => &t.status.state,
            StreamResponse::StatusUpdate(u) => &u.status.state,
            _ => return None,
        };
        if state.class() != StateClass::Terminal {
            return None;
        }
        let task = event.named_task()?.to_string();
        self.registered().get(&(agent, task)).map(|reg| reg.ended.clone())
    }
}

/// `text` with `secret` masked, and also any start of it of 4 characters or more: an error may
/// quote a body cut short in the middle of the token.
fn without_secret(text: &str, secret: &str) -> String {
    let mut shown = text.replace(secret, "***");
    for len in (4..secret.len()).rev() {
        if let Some(start) = secret.get(..len)
            && shown.contains(start)
        {
            shown = shown.replace(start, "***");
        }
    }
    shown
}

/// Equal without a timing that tells how much of a guess was right.
fn same_token(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len() && given.iter().zip(token).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// The receiver's requests.
struct Receiver {
    push: Arc<Push>,
    events: event::Sender,
}

impl Handler for Receiver {
    async fn handle(self: Arc<Self>, _: SocketAddr, req: Request<Incoming>) -> Response<Body> {
        let mut resp = Response::new(Body::empty());
        *resp.status_mut() = deliver(&self.push, &self.events, req).await;
        resp
    }

    /// Counted on the row of the agent the path names, if this session gave it a token.
    async fn busy(self: Arc<Self>, req: &Request<Incoming>) {
        let Some(agent) = addressed_to(req.uri().path()) else {
            return;
        };
        if self.push.tokens().contains_key(&agent) {
            let _ = (self.events)
                .send(Event::Busy {
                    agent,
                    server: LocalServer::Push,
                })
                .await;
        }
    }
}

/// The agent a delivery's path names (`/push/<agent>`).
fn addressed_to(path: &str) -> Option<AgentId> {
    let agent = path.strip_prefix('/')?.strip_prefix(PATH)?.strip_prefix('/')?;
    agent.bytes().all(|b| b.is_ascii_digit()).then(|| agent.parse().ok())?
}

/// A delivery's body: a bare StreamResponse (1.0: `task`, `statusUpdate`, `artifactUpdate`;
/// 0.3 agents post the bare Task, which reads too) that names its task; None for anything else.
pub fn read_delivery(body: &[u8]) -> Option<StreamResponse> {
    let event = serde_json::from_slice::<StreamResponse>(body).ok()?;
    event.named_task().is_some().then_some(event)
}

/// What a refused request's body may still send, read after the answer and dropped: a delivery
/// is small, and more is never read.
const REFUSED_BODY_DRAIN: usize = 16 * 1024;

/// A refusal decided before the body is read. The answer goes at once; the body is then read,
/// up to `REFUSED_BODY_DRAIN` within a second, and dropped, because closing on unread bytes
/// resets the connection and a client still writing its body would see a broken pipe, not the
/// status (hyper keeps the connection while the body is held).
fn refused(req: Request<Incoming>, status: StatusCode) -> StatusCode {
    let body = Body::new(req.into_body());
    tokio::spawn(tokio::time::timeout(
        Duration::from_secs(1),
        axum::body::to_bytes(body, REFUSED_BODY_DRAIN),
    ));
    status
}

/// One delivery: the token first, and only then the body (an agent without the token gets its
/// refusal before the receiver reads anything, and what it sends after is dropped, see `refused`).
async fn deliver(push: &Push, events: &event::Sender, req: Request<Incoming>) -> StatusCode {
    let Some(agent) = addressed_to(req.uri().path()) else {
        return refused(req, StatusCode::NOT_FOUND);
    };
    if req.method() != Method::POST {
        return refused(req, StatusCode::METHOD_NOT_ALLOWED);
    }
    // An agent this session gave no token to has nothing here (and no row to count on).
    let Some(token) = push.tokens().get(&agent).cloned() else {
        return refused(req, StatusCode::NOT_FOUND);
    };
    let given = req.headers().get(TOKEN_HEADER).map(|v| v.as_bytes());
    if !given.is_some_and(|g| same_token(g, token.expose().as_bytes())) {
        let _ = events.send(Event::PushRefused { agent }).await;
        return refused(req, StatusCode::UNAUTHORIZED);
    }
    let Ok(body) = axum::body::to_bytes(Body::new(req.into_body()), DELIVERY_LIMIT).await else {
        return StatusCode::PAYLOAD_TOO_LARGE;
    };
    let Some(event) = read_delivery(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let task = event.named_task().unwrap_or_default();
    // Only a task registered with this agent: not another's, not one never asked for.
    if !push.registered().contains_key(&(agent, task.to_string())) {
        return StatusCode::NOT_FOUND;
    }
    let ended = push.ended_wake(agent, &event);
    let seen = Timestamp::now();
    if events.send(Event::from_stream(agent, event, seen)).await.is_err() {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    // After the store has the delivery: the watcher's GetTask then only confirms it.
    if let Some(ended) = ended {
        ended.notify_one();
    }
    StatusCode::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_is_addressed_by_its_path_and_names_its_task() {
        assert_eq!(addressed_to("/push/3"), Some(3));
        for bad in [
            "/push/",
            "/push/+3",
            "/push/3/x",
            "/pushed/3",
            "/push/99999999999999999999999",
        ] {
            assert_eq!(addressed_to(bad), None, "{bad}");
        }
        let status = br#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;
        assert!(read_delivery(status).is_some());
        let bare_message = br#"{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}"#;
        assert!(read_delivery(bare_message).is_none(), "names no task");
        assert!(read_delivery(b"{").is_none());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"abc", b"abc"));
        assert!(!same_token(b"abd", b"abc"));
        assert!(!same_token(b"ab", b"abc"), "a prefix");
        assert!(!same_token(b"", b"abc"));
    }

    #[tokio::test]
    async fn a_remote_address_needs_the_flag_and_the_url_can_be_overridden() {
        let remote = PushSettings {
            listen: "0.0.0.0:0".parse().unwrap(),
            url: None,
            allow_remote: false,
        };
        assert!(matches!(Push::bind(&remote).await, Err(PushError::Remote(_))));
        let tunnel = PushSettings {
            listen: "127.0.0.1:0".parse().unwrap(),
            url: Some(Url::parse("https://tunnel.example/hooks").unwrap()),
            allow_remote: false,
        };
        let push = Push::bind(&tunnel).await.unwrap();
        assert_eq!(push.url_for(3), "https://tunnel.example/hooks/push/3");
        let query = PushSettings {
            url: Some(Url::parse("https://tunnel.example/hooks?via=t").unwrap()),
            ..tunnel.clone()
        };
        assert!(matches!(Push::bind(&query).await, Err(PushError::Url(_))));
        let local = PushSettings { url: None, ..tunnel };
        let push = Push::bind(&local).await.unwrap();
        assert_eq!(push.url_for(0), format!("http://{}/push/0", push.local_addr()));
        let (token, other) = (push.token_for(0), push.token_for(1));
        assert_ne!(token.expose(), other.expose(), "a token per agent");
        assert_eq!(
            push.token_for(0).expose(),
            token.expose(),
            "the same for the same agent"
        );
        assert!(!format!("{push:?}").contains(token.expose()), "the token never prints");
        let echoed = crate::a2a::Error::Input(format!("bad config {{token: {}}}", token.expose()));
        assert_eq!(push.shown_error(&echoed), "bad config {token: ***}");
        let cut = crate::a2a::Error::Input(format!("bad config {{token: {}…", &other.expose()[..9]));
        assert_eq!(
            push.shown_error(&cut),
            "bad config {token: ***…",
            "a token cut short is masked too"
        );
    }
}
