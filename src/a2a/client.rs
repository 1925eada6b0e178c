//! One client type for every agent, whichever binding and version it speaks. The wire adapters
//! in `wire` say how an operation looks; this file sends it: headers, credentials, timeouts,
//! status handling and SSE.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;

use super::auth::{self, CardAuth, Placement, Secret, Token};
use super::card::{AgentCard, Binding, ProtocolVersion};
use super::discovery::{self, Discovered};
use super::error::{Error, Result};
use super::sse::{self, DEFAULT_FRAME_LIMIT};
use super::types::{
    GetTaskRequest, ListTasksRequest, ListTasksResponse, SendMessageRequest, StreamResponse, Task, TaskIdRequest,
};
use super::wire::{self, Call, WireRequest};

/// Pages read per listing at most: a server that always has another page cannot keep us paging.
pub const MAX_PAGES: usize = 1000;

/// What one listing found.
#[derive(Debug)]
pub struct Listing {
    pub tasks: Vec<Task>,
    /// More pages were offered than `list_pages` reads.
    pub cut: bool,
}

/// A stream of events; `None` means the server closed it, which says nothing about the task.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamResponse>> + Send>>;

/// What the user may choose about a connection.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The name the user gave (`NAME=URL`); the card's name otherwise.
    pub name: Option<String>,
    /// Force JSON-RPC or HTTP+JSON instead of the card's preference.
    pub binding: Option<Binding>,
    pub token: Option<Secret>,
    pub headers: Vec<(String, String)>,
    /// Whole-request timeout for calls that are not streams.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    /// The largest SSE event accepted.
    pub frame_limit: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            name: None,
            binding: None,
            token: None,
            headers: Vec::new(),
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            frame_limit: DEFAULT_FRAME_LIMIT,
        }
    }
}

/// The interface in use (spec section 8.3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: Url,
    pub binding: Binding,
    pub version: ProtocolVersion,
    pub tenant: Option<String>,
}

pub struct Client {
    http: reqwest::Client,
    pub card: AgentCard,
    pub card_source: String,
    pub endpoint: Endpoint,
    pub name: String,
    token: Option<Token>,
    auth: CardAuth,
    headers: HeaderMap,
    frame_limit: usize,
    request_timeout: Duration,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// The HTTP stack every client shares; no read timeout, since streams may be quiet for hours
/// (a2a-js sends no keep-alives, SDK-QUIRKS.md).
pub fn http_client(connect_timeout: Duration) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("a2a-watch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::transport("building the HTTP client", e))
}

impl Client {
    /// Discovers the card and picks the interface.
    pub async fn connect(target: &str, opts: ClientOptions) -> Result<Client> {
        let http = http_client(opts.connect_timeout)?;
        Self::connect_with(http, target, opts).await
    }

    /// Like `connect`, on a shared HTTP stack (one connection pool for many agents).
    pub async fn connect_with(http: reqwest::Client, target: &str, opts: ClientOptions) -> Result<Client> {
        let given = opts.name.clone().unwrap_or_default();
        let early_token = auth::find_token(opts.token.as_ref(), &[&given]);
        let label = if given.is_empty() {
            target.to_string()
        } else {
            given.clone()
        };
        let found = discovery::discover(&http, target, early_token.as_ref(), &label).await?;
        Self::from_discovered(http, found, opts)
    }

    pub fn from_discovered(http: reqwest::Client, found: Discovered, opts: ClientOptions) -> Result<Client> {
        let Discovered { card, source, base } = found;
        let name = opts
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| card.name.clone());
        let endpoint = choose_endpoint(&card, base.as_ref(), opts.binding)?;
        let token = auth::find_token(opts.token.as_ref(), &[&name, &card.name]);
        let mut headers = HeaderMap::new();
        for (k, v) in &opts.headers {
            let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::try_from(v.as_str())) else {
                return Err(Error::Usage(format!("header {k:?} is not a valid HTTP header")));
            };
            headers.insert(k, v);
        }
        Ok(Client {
            http,
            auth: auth::card_auth(&card),
            card,
            card_source: source,
            endpoint,
            name,
            token,
            headers,
            frame_limit: opts.frame_limit,
            request_timeout: opts.request_timeout,
            next_id: AtomicU64::new(1),
        })
    }

    /// The env var that would hold this agent's token.
    pub fn token_env_var(&self) -> String {
        auth::env_var_for(&self.name)
    }

    pub fn streams(&self) -> bool {
        self.card.capabilities.streaming
    }

    // ---- the operations (spec section 3.1) ----

    /// SendMessage: a task or a direct message.
    pub async fn send_message(&self, req: &SendMessageRequest) -> Result<StreamResponse> {
        self.unary(Call::SendMessage(req)).await
    }

    pub async fn send_streaming_message(&self, req: &SendMessageRequest) -> Result<EventStream> {
        self.stream(Call::SendStreamingMessage(req)).await
    }

    pub async fn get_task(&self, id: &str, history_length: Option<u32>) -> Result<Task> {
        let req = GetTaskRequest {
            id: id.to_string(),
            history_length,
            tenant: self.endpoint.tenant.clone(),
        };
        self.unary(Call::GetTask(&req)).await
    }

    /// One page of ListTasks.
    pub async fn list_tasks(&self, req: &ListTasksRequest) -> Result<ListTasksResponse> {
        let mut req = req.clone();
        req.tenant = req.tenant.or_else(|| self.endpoint.tenant.clone());
        self.unary(Call::ListTasks(&req)).await
    }

    /// Every page of ListTasks, up to `MAX_PAGES`.
    pub async fn list_all_tasks(&self, req: &ListTasksRequest) -> Result<Vec<Task>> {
        Ok(self.list_pages(req, MAX_PAGES).await?.tasks)
    }

    /// Pages of ListTasks until the last or `max_pages`. Tasks that change while we page can move
    /// between pages (SDK-QUIRKS.md), so ids are de-duplicated, keeping the first (newest) copy.
    pub async fn list_pages(&self, req: &ListTasksRequest, max_pages: usize) -> Result<Listing> {
        let mut seen = std::collections::HashSet::new();
        let mut tasks = Vec::new();
        let mut page = req.clone();
        let mut tokens = std::collections::HashSet::new();
        for _ in 0..max_pages {
            let resp = self.list_tasks(&page).await?;
            tasks.extend(resp.tasks.into_iter().filter(|t| seen.insert(t.id.clone())));
            // A server that hands back a token it gave before would page forever.
            if resp.next_page_token.is_empty() || !tokens.insert(resp.next_page_token.clone()) {
                return Ok(Listing { tasks, cut: false });
            }
            page.page_token = Some(resp.next_page_token);
        }
        Ok(Listing { tasks, cut: true })
    }

    pub async fn cancel_task(&self, id: &str) -> Result<Task> {
        self.unary(Call::CancelTask(&self.task_id_request(id))).await
    }

    /// SubscribeToTask: the first event is the task snapshot (spec section 3.1.6).
    ///
    /// 0.3 agents (a2a-python 0.3.26) differ: `tasks/resubscribe` sends no snapshot, and a
    /// refusal (unknown task, terminal task as -32602, an INPUT_REQUIRED task whose turn ended as
    /// TaskNotFound) is a 200 event stream with one error frame, not an error reply. Telling it
    /// apart here would mean waiting for the first frame, which on a quiet task never comes; so
    /// this returns the stream, whose one item is that typed error, and then its end. Callers
    /// already treat an error frame as the end of the stream and ask GetTask. (0.3.26 also
    /// neither relays CANCELED to such streams, which just end, nor stores the chunks it relays
    /// only once: GetTask then repeats them. Nothing a client can mend; the tests pin it.)
    pub async fn subscribe(&self, id: &str) -> Result<EventStream> {
        self.stream(Call::SubscribeToTask(&self.task_id_request(id))).await
    }

    pub async fn extended_card(&self) -> Result<AgentCard> {
        self.unary(Call::GetExtendedAgentCard).await
    }

    fn task_id_request(&self, id: &str) -> TaskIdRequest {
        TaskIdRequest {
            id: id.to_string(),
            tenant: self.endpoint.tenant.clone(),
            metadata: None,
        }
    }

    // ---- the shared path ----

    fn wire_request(&self, call: &Call<'_>, subscribe_method: Method) -> Result<WireRequest> {
        match self.endpoint.binding {
            Binding::JsonRpc => wire::jsonrpc::request(
                call,
                self.endpoint.version,
                self.next_id.fetch_add(1, Ordering::Relaxed),
            ),
            Binding::Rest => Ok(wire::rest::request(call, subscribe_method)),
        }
    }

    fn build(&self, call: &Call<'_>, subscribe_method: Method) -> Result<reqwest::RequestBuilder> {
        let wire = self.wire_request(call, subscribe_method)?;
        let mut url = self.endpoint.url.clone();
        if !wire.path.is_empty() {
            let joined = format!("{}{}", url.path().trim_end_matches('/'), wire.path);
            url.set_path(&joined);
        }
        if !wire.query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(wire.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        let mut req = self.http.request(wire.method, url).headers(self.headers.clone());
        // MUST on every request (spec section 3.6.1); a missing header means 0.3 (section 3.6.2).
        req = req.header("A2A-Version", self.endpoint.version.label());
        let content_type = match self.endpoint.binding {
            Binding::JsonRpc => "application/json",
            Binding::Rest => "application/a2a+json",
        };
        req = req.header(
            "Accept",
            if call.is_streaming() {
                "text/event-stream"
            } else {
                "application/json, application/a2a+json"
            },
        );
        if let Some(body) = wire.body {
            req = req.header(CONTENT_TYPE, content_type).body(body.to_string());
        }
        let extensions = requested_extensions(call);
        if !extensions.is_empty() {
            req = req.header("A2A-Extensions", extensions.join(", "));
            if self.endpoint.version == ProtocolVersion::V0_3 {
                req = req.header("X-A2A-Extensions", extensions.join(", "));
            }
        }
        if let Some(token) = self.credential() {
            req = match self.auth.placement.as_ref().unwrap_or(&Placement::Bearer) {
                Placement::Bearer => req.bearer_auth(token.expose()),
                Placement::Header(name) => req.header(name.as_str(), token.expose()),
                Placement::Query(name) => req.query(&[(name.as_str(), token.expose())]),
                Placement::Cookie(name) => req.header("Cookie", format!("{name}={}", token.expose())),
            };
        }
        if !call.is_streaming() {
            req = req.timeout(self.request_timeout);
        }
        Ok(req)
    }

    /// The credential to send: any token where the card asks for one; where it does not, only a
    /// token given for this agent (a shared `A2A_TOKEN` is not handed to agents that never asked).
    fn credential(&self) -> Option<&Secret> {
        let token = self.token.as_ref()?;
        (self.auth.placement.is_some() || token.meant_for_this_agent()).then_some(&token.secret)
    }

    async fn send(&self, call: &Call<'_>) -> Result<reqwest::Response> {
        let what = format!("{} on {}", call.name(), self.name);
        let mut resp = self
            .build(call, Method::POST)?
            .send()
            .await
            .map_err(|e| Error::transport(&what, e))?;
        if matches!(call, Call::SubscribeToTask(_))
            && self.endpoint.binding == Binding::Rest
            && resp.status() == StatusCode::METHOD_NOT_ALLOWED
        {
            resp = self
                .build(call, Method::GET)?
                .send()
                .await
                .map_err(|e| Error::transport(&what, e))?;
        }
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let challenge = resp
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    let scheme = v.split_whitespace().next().unwrap_or(v);
                    format!("{scheme} (from the server's WWW-Authenticate)")
                });
            return Err(Error::Unauthorized {
                status: status.as_u16(),
                agent: self.name.clone(),
                asks_for: self.auth.asks_for.clone().or(challenge),
                env_var: self.token_env_var(),
                sent_credential: self.credential().is_some(),
            });
        }
        // Overloaded or rate limited, for every call and either binding: the caller waits as
        // long as the server asks (RFC 9110 section 10.2.3), whatever the body says.
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| super::error::parse_retry_after(v, jiff::Timestamp::now()));
            let body = read_body(resp, call.name(), ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(Error::Http {
                status: status.as_u16(),
                what: what.clone(),
                excerpt: super::error::first_line(&body),
                retry_after,
            });
        }
        Ok(resp)
    }

    async fn unary<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T> {
        let resp = self.send(&call).await?;
        let status = resp.status().as_u16();
        let body = read_body(resp, call.name(), BODY_LIMIT).await?;
        match self.endpoint.binding {
            Binding::JsonRpc if !(200..300).contains(&status) => Err(jsonrpc_failure(status, call.name(), &body)),
            Binding::JsonRpc => wire::jsonrpc::decode(call.name(), &body),
            Binding::Rest => wire::rest::decode(call.name(), status, &body),
        }
    }

    async fn stream(&self, call: Call<'_>) -> Result<EventStream> {
        let resp = self.send(&call).await?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if !is_sse {
            // An error raised before the stream starts is a plain JSON reply (SDK-QUIRKS.md).
            let body = read_body(resp, call.name(), BODY_LIMIT).await?;
            let err = match self.endpoint.binding {
                Binding::JsonRpc if !(200..300).contains(&status) => Some(jsonrpc_failure(status, call.name(), &body)),
                Binding::JsonRpc => wire::jsonrpc::decode::<serde_json::Value>(call.name(), &body).err(),
                Binding::Rest => Some(wire::rest::error_from_body(status, call.name(), &body)),
            };
            return Err(err.unwrap_or_else(|| Error::Http {
                status,
                what: format!("{} (expected an event stream)", call.name()),
                excerpt: super::error::excerpt(&body),
                retry_after: None,
            }));
        }
        let decode = match self.endpoint.binding {
            Binding::JsonRpc => wire::jsonrpc::decode_frame,
            Binding::Rest => wire::rest::decode_frame,
        };
        // A frame that does not decode is reported and skipped; the stream goes on.
        let events =
            sse::frames(resp.bytes_stream(), self.frame_limit).map(move |frame| frame.and_then(|f| decode(&f)));
        Ok(Box::pin(events))
    }
}

/// Extensions the outgoing message activates, for the `A2A-Extensions` header (spec section 4.6).
fn requested_extensions<'a>(call: &Call<'a>) -> &'a [String] {
    match call {
        Call::SendMessage(r) | Call::SendStreamingMessage(r) => &r.message.extensions,
        _ => &[],
    }
}

/// Bodies larger than this are refused rather than held in memory.
const BODY_LIMIT: usize = 64 * 1024 * 1024;
/// An error reply is read only far enough to quote its first line.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// A JSON-RPC reply with a non-2xx status: the agent's error if the body is a JSON-RPC error,
/// otherwise the status and what a proxy or framework put in the body, never a decode error.
fn jsonrpc_failure(status: u16, what: &str, body: &[u8]) -> Error {
    match wire::jsonrpc::decode::<serde_json::Value>(what, body) {
        Err(e @ Error::Agent { .. }) => e,
        _ => Error::Http {
            status,
            what: what.to_string(),
            excerpt: super::error::first_line(body),
            retry_after: None,
        },
    }
}

/// Reads a reply up to `limit` bytes; a longer one is refused, not held in memory.
pub(crate) async fn read_body(resp: reqwest::Response, what: &str, limit: usize) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| Error::transport(format!("reading the {what} reply"), e))?;
        if body.len() + chunk.len() > limit {
            return Err(Error::BodyTooLarge {
                what: what.to_string(),
                limit,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The first interface of the card's order that we speak, or of the forced binding.
fn choose_endpoint(card: &AgentCard, base: Option<&Url>, forced: Option<Binding>) -> Result<Endpoint> {
    let interfaces = card.interfaces();
    let pick = interfaces.iter().find_map(|i| {
        let (binding, version) = i.supported()?;
        if forced.is_some_and(|f| f != binding) {
            return None;
        }
        let url = match base {
            Some(b) => b.join(&i.url).ok()?,
            None => Url::parse(&i.url).ok()?,
        };
        Some(Endpoint {
            url,
            binding,
            version,
            tenant: i.tenant.clone(),
        })
    });
    pick.ok_or_else(|| {
        let offered: Vec<String> = interfaces
            .iter()
            .map(|i| format!("{} {}", i.binding_name, i.version_name))
            .collect();
        let offered = if offered.is_empty() {
            "none".to_string()
        } else {
            offered.join(", ")
        };
        match forced {
            Some(b) => Error::NoInterface {
                offered: format!("{offered}; forced {}", b.label()),
            },
            None => Error::NoInterface { offered },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(v: serde_json::Value) -> AgentCard {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_first_supported_interface_wins_unless_forced() {
        let c = card(json!({"supportedInterfaces":[
            {"url":"grpc://h:1","protocolBinding":"GRPC","protocolVersion":"1.0"},
            {"url":"/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
            {"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}));
        let base = Url::parse("http://h:9/.well-known/agent-card.json").unwrap();
        let e = choose_endpoint(&c, Some(&base), None).unwrap();
        assert_eq!((e.binding, e.url.as_str()), (Binding::Rest, "http://h:9/rest"));
        let f = choose_endpoint(&c, Some(&base), Some(Binding::JsonRpc)).unwrap();
        assert_eq!((f.binding, f.url.as_str()), (Binding::JsonRpc, "http://h/rpc"));
    }

    #[test]
    fn a_card_with_nothing_we_speak_says_what_it_offered() {
        let c =
            card(json!({"supportedInterfaces":[{"url":"grpc://h","protocolBinding":"GRPC","protocolVersion":"1.0"}]}));
        let err = choose_endpoint(&c, None, None).unwrap_err().to_string();
        assert!(err.contains("GRPC 1.0"), "{err}");
    }
}
