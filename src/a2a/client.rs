//! One client type for every agent, whichever binding and version it speaks. The wire adapters
//! in `wire` say how an operation looks; this file sends it: headers, credentials, timeouts,
//! status handling and SSE. gRPC (`grpc`) carries the same headers as metadata.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use futures::{Stream, StreamExt};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;

use super::auth::{self, CardAuth, Given, Placement, Secret, Token, TokenSource};
use super::card::{AgentCard, Binding, ProtocolVersion};
use super::discovery::{self, Discovered};
use super::error::{Error, Result};
use super::grpc;
use super::shown::ShownUrl;
use super::signature::{CardSignature, CardTrust};
use super::sse::{self, DEFAULT_FRAME_LIMIT};
use super::types::{
    GetTaskRequest, ListTasksRequest, ListTasksResponse, PushConfig, PushConfigId, SendMessageRequest, StreamResponse,
    Task, TaskIdRequest,
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

/// The pages of one listing (`Client::pages`).
pub struct Pages<'a> {
    client: &'a Client,
    /// The request for the next page; None once the last was read.
    next: Option<ListTasksRequest>,
    left: usize,
    seen: std::collections::HashSet<String>,
    tokens: std::collections::HashSet<String>,
    /// More pages were offered than the listing reads.
    pub cut: bool,
}

impl Pages<'_> {
    /// The next page's tasks not seen on an earlier page; None after the last page.
    pub async fn next(&mut self) -> Result<Option<Vec<Task>>> {
        let Some(request) = self.next.take() else {
            return Ok(None);
        };
        if self.left == 0 {
            self.cut = true;
            return Ok(None);
        }
        self.left -= 1;
        let resp = self.client.list_tasks(&request).await?;
        // A server that hands back a token it gave before would page forever.
        if !resp.next_page_token.is_empty() && self.tokens.insert(resp.next_page_token.clone()) {
            self.next = Some(ListTasksRequest {
                page_token: Some(resp.next_page_token),
                ..request
            });
        }
        let seen = &mut self.seen;
        Ok(Some(
            resp.tasks.into_iter().filter(|t| seen.insert(t.id.clone())).collect(),
        ))
    }
}

/// A stream of events; `None` means the server closed it, which says nothing about the task.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamResponse>> + Send>>;

/// What the user may choose about a connection. Every credential in it is a `Secret`, so its
/// Debug output never shows one.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The name the user gave (`--agent NAME=URL`, `--name`, the config's `name`). Only it selects
    /// `A2A_TOKEN_<NAME>`; without it the card's name is shown, but never picks a credential.
    pub name: Option<String>,
    /// Force JSON-RPC or HTTP+JSON instead of the card's preference.
    pub binding: Option<Binding>,
    pub token: Option<Secret>,
    /// Which setting gave `token`, for a 401 hint.
    pub token_from: Given,
    /// The token is offered to several agents (`--token` on a dashboard of many): it goes only to
    /// an agent whose card asks for a credential.
    pub token_shared: bool,
    /// Extra request headers. Their values may be credentials: they follow the same rules.
    pub headers: Vec<(String, Secret)>,
    /// The headers are offered to several agents (`--header` on a dashboard of many): like a
    /// shared token, they go only to an agent whose card asks for a credential.
    pub headers_shared: bool,
    /// Send credentials over plain http to a host that is not loopback.
    pub allow_insecure_http: bool,
    /// Whole-request timeout for calls that are not streams.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    /// The largest SSE event accepted.
    pub frame_limit: usize,
    /// How the card's signatures are checked, and whether a credential needs them to verify.
    pub card_trust: CardTrust,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            name: None,
            binding: None,
            token: None,
            token_from: Given::Flag,
            token_shared: false,
            headers: Vec::new(),
            headers_shared: false,
            allow_insecure_http: false,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            frame_limit: DEFAULT_FRAME_LIMIT,
            card_trust: CardTrust::default(),
        }
    }
}

/// The interface in use (spec section 8.3.2).
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: Url,
    pub binding: Binding,
    pub version: ProtocolVersion,
    pub tenant: Option<String>,
}

/// The URL in its shown form: a card may put a key in its interface's query (README "Security").
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &ShownUrl::of(&self.url))
            .field("binding", &self.binding)
            .field("version", &self.version)
            .field("tenant", &self.tenant)
            .finish()
    }
}

pub struct Client {
    http: reqwest::Client,
    pub card: AgentCard,
    pub card_source: String,
    /// What the card's signatures say; `None` for an unsigned card.
    pub card_signature: Option<CardSignature>,
    pub endpoint: Endpoint,
    /// What to call the agent: the user's name for it, the card's otherwise.
    pub name: String,
    /// The name the user gave, which alone selects `A2A_TOKEN_<NAME>`.
    user_name: Option<String>,
    /// Where a token given in the options came from; refreshed tokens come from there too.
    given_source: TokenSource,
    /// Behind a lock so a refreshed token reaches every watcher sharing this client.
    token: RwLock<Option<Token>>,
    auth: CardAuth,
    headers: HeaderMap,
    headers_shared: bool,
    /// Why nothing secret may go to the endpoint (another origin, plain http), if so.
    unsafe_destination: Option<String>,
    frame_limit: usize,
    request_timeout: Duration,
    next_id: AtomicU64,
    transport: Transport,
}

/// How requests reach the endpoint: JSON over HTTP (reqwest), or gRPC with its connections.
#[derive(Debug)]
enum Transport {
    Http(Json),
    Grpc(Box<grpc::Link>),
}

/// The two bindings that are JSON over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Json {
    Rpc,
    Rest,
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
/// (a2a-js sends no keep-alives: docs/protocol-notes.md, "SDK quirks: a2a-js"). No `Referer`, and
/// redirects are followed only within one origin: a credential on the request must not reach a host
/// the user did not name. Loopback never goes through a proxy (see `system_proxy_except_loopback`).
pub fn http_client(connect_timeout: Duration) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("a2a-watch/", env!("CARGO_PKG_VERSION")))
        .referer(false)
        .redirect(same_origin_redirects())
        .proxy(system_proxy_except_loopback())
        .build()
        .map_err(|e| Error::transport("building the HTTP client", e))
}

/// The system's proxy settings (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, and the OS
/// settings on macOS and Windows), except for loopback destinations, which are always reached
/// directly. Plain http to loopback carries credentials in clear because no one else can read
/// it; through a proxy, the proxy (another process, often another machine) would. With loopback
/// direct, `insecure` can judge by the URL: plain http to anything else is refused whether or
/// not a proxy is on the way, unless the user allowed it.
pub(crate) fn system_proxy_except_loopback() -> reqwest::Proxy {
    let system = hyper_util::client::proxy::matcher::Matcher::from_system();
    reqwest::Proxy::custom(move |url| {
        if auth::is_loopback(url) {
            return None;
        }
        let destination: http::Uri = url.as_str().parse().ok()?;
        let found = system.intercept(&destination)?;
        let mut proxy = Url::parse(&found.uri().to_string()).ok()?;
        // The matcher takes the proxy's own user info apart; reqwest reads it back from the URL.
        if let Some((user, password)) = found.raw_auth() {
            let _ = proxy.set_username(user);
            let _ = proxy.set_password(Some(password));
        }
        Some(proxy)
    })
}

/// Same origin: scheme, host and port (the default port of the scheme when none is written).
/// An https URL and an http one never are, so a redirect cannot downgrade a credential.
pub(crate) fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// Why a credential for the agent whose card came from `card` must not go to `endpoint`, if so.
/// Only within the card's origin (the one the user named: redirects stay in it). gRPC is an
/// HTTP/2 server of its own, which the SDKs run beside the card's HTTP server on another port of
/// the same host (A2A 1.0 section 10; tests/interop/GRPC.md), so a credential may follow a card's
/// gRPC interface to that host, never down to a weaker scheme, and to another port only when the
/// card came over https from that host: over plain http (loopback too) nothing vouches for the
/// card's port, and on a shared machine any local user can bind a free one.
fn untrusted_destination(card: &Url, endpoint: &Endpoint) -> Option<String> {
    if same_origin(card, &endpoint.url) {
        return None;
    }
    let grpc_on_the_cards_host = endpoint.binding == Binding::Grpc
        && card.host() == endpoint.url.host()
        && (card.scheme() == endpoint.url.scheme() || endpoint.url.scheme() == "https");
    if !grpc_on_the_cards_host {
        return Some(format!(
            "the card at {} sends requests to {}, another origin; a credential goes only to \
             the origin you named (to trust that card, save it to a file and point at the file)",
            ShownUrl::of(card),
            ShownUrl::of(&endpoint.url)
        ));
    }
    let named_port = card.port_or_known_default() == endpoint.url.port_or_known_default();
    (!named_port && card.scheme() != "https").then(|| {
        format!(
            "credential withheld: gRPC interface on another port ({} names {}, and came over plain \
             http, where nothing vouches for that port; to trust that card, save it to a file and \
             point at the file)",
            ShownUrl::of(card),
            ShownUrl::of(&endpoint.url)
        )
    })
}

/// Why a credential must not go to an agent whose card does not verify with a key that says who
/// wrote it (require_signed_card; README "Security"): a key the card itself names proves nothing.
fn unverified(signature: Option<&CardSignature>) -> Option<String> {
    let why = match signature {
        Some(signature) if signature.trusted() => return None,
        Some(signature @ CardSignature::Verified { .. }) => format!(
            "its card is signed with {}, which anyone who can change the card can re-sign \
             (pin the key with card_keys or --card-key)",
            signature.key_origin().unwrap_or_default()
        ),
        Some(CardSignature::Failed { why }) => format!("its card's signature does not verify ({why})"),
        None => "its card is not signed".to_string(),
    };
    Some(format!("{why}; require_signed_card withholds every credential"))
}

/// Follows a redirect within the first request's origin (scheme, host, port); stops at any other,
/// handing the 3xx back so `redirected` can say where it pointed.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    const MAX_HOPS: usize = 10;
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_none_or(|first| same_origin(first, attempt.url()));
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_HOPS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// A redirect that was not followed (it pointed at another origin), as an error naming where.
pub(crate) fn redirected(resp: &reqwest::Response, what: impl Into<String>) -> Option<Error> {
    if !resp.status().is_redirection() {
        return None;
    }
    let location = resp.headers().get(reqwest::header::LOCATION)?.to_str().ok()?;
    let to = resp.url().join(location).map_or_else(
        |_| "an unreadable location".to_string(),
        |u| ShownUrl::of(&u).to_string(),
    );
    Some(Error::Redirected { what: what.into(), to })
}

/// Why a credential must not go to `url`: plain http to a host that is not loopback, unless the
/// user allowed it for this agent.
pub(crate) fn insecure(url: &Url, allow_insecure_http: bool) -> Option<String> {
    // Anything but https is plain text to us (a `grpc://` URL would be cleartext HTTP/2).
    (url.scheme() != "https" && !auth::is_loopback(url) && !allow_insecure_http).then(|| {
        format!(
            "{} is plain http to a host that is not loopback; credentials go there only with \
             allow_insecure_http = true in this agent's config (or --allow-insecure-http)",
            ShownUrl::of(url)
        )
    })
}

impl Client {
    /// Discovers the card and picks the interface.
    pub async fn connect(target: &str, opts: ClientOptions) -> Result<Client> {
        let http = http_client(opts.connect_timeout)?;
        Self::connect_with(http, target, opts).await
    }

    /// Like `connect`, on a shared HTTP stack (one connection pool for many agents).
    pub async fn connect_with(http: reqwest::Client, target: &str, opts: ClientOptions) -> Result<Client> {
        let user_name = user_name(&opts);
        let early_token = auth::find_token(given_token(opts.token.clone(), given_source(&opts)), user_name);
        let label = user_name.map_or_else(|| ShownUrl::of_input(target).to_string(), str::to_string);
        // A credential meant for this agent, or an extra header, goes on every request whatever
        // the card says: refuse before connecting at all if the URL named cannot carry it.
        let meant_for_it = early_token.as_ref().is_some_and(Token::meant_for_this_agent)
            || (!opts.headers.is_empty() && !opts.headers_shared);
        if meant_for_it
            && let Ok(url) = discovery::parse_url(target)
            && !discovery::is_card_file(target)
            && let Some(reason) = insecure(&url, opts.allow_insecure_http)
        {
            return Err(Error::Withheld { agent: label, reason });
        }
        // With require_signed_card, not even the card request carries the token: whether the card
        // verifies is known only once it is read.
        let card_token = early_token.as_ref().filter(|_| !opts.card_trust.required);
        let found = discovery::discover(&http, target, card_token, user_name, &opts.card_trust).await?;
        Self::from_discovered(http, found, opts)
    }

    pub fn from_discovered(http: reqwest::Client, found: Discovered, opts: ClientOptions) -> Result<Client> {
        let Discovered {
            card,
            source,
            base,
            signature,
        } = found;
        let user_name = user_name(&opts).map(str::to_string);
        let name = user_name.clone().unwrap_or_else(|| card.name.clone());
        let endpoint = choose_endpoint(&card, base.as_ref(), opts.binding)?;
        let given_source = given_source(&opts);
        let token = auth::find_token(
            given_token(opts.token.clone(), given_source.clone()),
            user_name.as_deref(),
        );
        let mut headers = HeaderMap::new();
        for (k, v) in &opts.headers {
            let (Ok(k), Ok(mut v)) = (HeaderName::try_from(k.as_str()), HeaderValue::try_from(v.expose())) else {
                return Err(Error::Input(format!("header {k:?} is not a valid HTTP header")));
            };
            v.set_sensitive(true);
            headers.insert(k, v);
        }
        // The card names where requests go; a credential goes only to the origin the user named
        // (a card file names its interfaces itself, as the user chose it).
        let other_origin = base.as_ref().and_then(|b| untrusted_destination(b, &endpoint));
        let unsigned = opts
            .card_trust
            .required
            .then(|| unverified(signature.as_ref()))
            .flatten();
        let unsafe_destination = unsigned
            .or(other_origin)
            .or_else(|| insecure(&endpoint.url, opts.allow_insecure_http));
        let transport = match endpoint.binding {
            Binding::JsonRpc => Transport::Http(Json::Rpc),
            Binding::Rest => Transport::Http(Json::Rest),
            Binding::Grpc => Transport::Grpc(Box::new(grpc::Link::new(&endpoint.url, opts.connect_timeout)?)),
        };
        let client = Client {
            http,
            auth: auth::card_auth(&card),
            card,
            card_source: source,
            card_signature: signature,
            endpoint,
            name,
            user_name,
            given_source,
            token: RwLock::new(token),
            headers,
            headers_shared: opts.headers_shared,
            unsafe_destination,
            frame_limit: opts.frame_limit,
            request_timeout: opts.request_timeout,
            next_id: AtomicU64::new(1),
            transport,
        };
        client.check_destination(client.credential().is_some() || client.extra_headers().is_some())?;
        Ok(client)
    }

    /// The env var that would hold this agent's token: only for a name the user gave.
    pub fn token_env_var(&self) -> Option<String> {
        self.user_name.as_deref().map(auth::env_var_for)
    }

    /// Looks the token up again (after a 401): `given` is the agent's freshly resolved credential
    /// (its `token_command` run again, its `token_env` re-read); without one, the environment is
    /// read again. Every watcher sharing this client uses the new token from its next request.
    pub fn refresh_token(&self, given: Option<Secret>) {
        let token = auth::find_token(given_token(given, self.given_source.clone()), self.user_name.as_deref());
        *self.token.write().unwrap_or_else(PoisonError::into_inner) = token;
    }

    pub fn streams(&self) -> bool {
        self.card.capabilities.streaming
    }

    // ---- the operations (spec section 3.1) ----

    /// SendMessage: a task or a direct message.
    pub async fn send_message(&self, req: &SendMessageRequest) -> Result<StreamResponse> {
        self.unary(Call::SendMessage(&self.with_tenant(req))).await
    }

    pub async fn send_streaming_message(&self, req: &SendMessageRequest) -> Result<EventStream> {
        self.stream(Call::SendStreamingMessage(&self.with_tenant(req))).await
    }

    /// The interface's tenant goes on every request (spec section 8.3.2), sends included.
    fn with_tenant(&self, req: &SendMessageRequest) -> SendMessageRequest {
        let mut req = req.clone();
        req.tenant = req.tenant.or_else(|| self.endpoint.tenant.clone());
        req
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

    /// Pages of ListTasks until the last or `max_pages`. Tasks that change while we page can move
    /// between pages (docs/protocol-notes.md, "ListTasks"), so ids are de-duplicated, keeping the
    /// first (newest) copy.
    pub async fn list_pages(&self, req: &ListTasksRequest, max_pages: usize) -> Result<Listing> {
        let mut pages = self.pages(req, max_pages);
        let mut tasks = Vec::new();
        while let Some(page) = pages.next().await? {
            tasks.extend(page);
        }
        Ok(Listing { tasks, cut: pages.cut })
    }

    /// `list_pages` a page at a time, so a caller need not hold every task at once (a watcher of
    /// 100,000 tasks would otherwise keep them all until the last page came).
    pub fn pages(&self, req: &ListTasksRequest, max_pages: usize) -> Pages<'_> {
        Pages {
            client: self,
            next: Some(req.clone()),
            left: max_pages,
            seen: std::collections::HashSet::new(),
            tokens: std::collections::HashSet::new(),
            cut: false,
        }
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

    /// CreateTaskPushNotificationConfig (spec section 3.1.7): the agent POSTs the task's events to
    /// the config's URL from now on. The reply echoes the token, so it is not kept.
    pub async fn create_push_config(&self, config: &PushConfig) -> Result<()> {
        // The config's token is a credential: it goes only where a token may go (README
        // "Security"; an unverified card under require_signed_card, too).
        self.check_destination(true)?;
        let mut config = config.clone();
        config.tenant = config.tenant.or_else(|| self.endpoint.tenant.clone());
        self.unary::<serde_json::Value>(Call::CreatePushConfig(&config)).await?;
        Ok(())
    }

    /// DeleteTaskPushNotificationConfig (spec section 3.1.10); its reply is empty.
    pub async fn delete_push_config(&self, task: &str, id: &str) -> Result<()> {
        let req = PushConfigId {
            task_id: task.to_string(),
            id: id.to_string(),
            tenant: self.endpoint.tenant.clone(),
        };
        let call = Call::DeletePushConfig(&req);
        let json = match &self.transport {
            // The reply is google.protobuf.Empty (spec section 10.4.10).
            Transport::Grpc(_) => return self.unary::<serde_json::Value>(call).await.map(drop),
            Transport::Http(json) => *json,
        };
        let resp = self.send(&call, json).await?;
        let status = resp.status().as_u16();
        let body = read_body(resp, call.name(), ERROR_BODY_LIMIT).await?;
        match (json, (200..300).contains(&status)) {
            (Json::Rpc, false) => Err(jsonrpc_failure(status, call.name(), &body)),
            (Json::Rpc, true) => wire::jsonrpc::decode_empty(call.name(), &body),
            (Json::Rest, false) => Err(wire::rest::error_from_body(status, call.name(), &body)),
            (Json::Rest, true) => Ok(()),
        }
    }

    /// GetExtendedAgentCard (spec section 3.1.11): the card the agent shows to callers with the
    /// credential, which replaces the public one. Only where the card offers it
    /// (`AgentCard::has_extended_card`).
    pub async fn extended_card(&self) -> Result<AgentCard> {
        self.unary(Call::GetExtendedAgentCard {
            tenant: self.endpoint.tenant.as_deref(),
        })
        .await
    }

    fn task_id_request(&self, id: &str) -> TaskIdRequest {
        TaskIdRequest {
            id: id.to_string(),
            tenant: self.endpoint.tenant.clone(),
            metadata: None,
        }
    }

    // ---- the shared path ----

    fn wire_request(&self, call: &Call<'_>, json: Json, subscribe_method: Method) -> Result<WireRequest> {
        match json {
            Json::Rpc => wire::jsonrpc::request(
                call,
                self.endpoint.version,
                self.next_id.fetch_add(1, Ordering::Relaxed),
            ),
            Json::Rest => Ok(wire::rest::request(call, subscribe_method)),
        }
    }

    fn build(&self, call: &Call<'_>, json: Json, subscribe_method: Method) -> Result<reqwest::RequestBuilder> {
        let wire = self.wire_request(call, json, subscribe_method)?;
        let mut url = self.endpoint.url.clone();
        if !wire.path.is_empty() {
            let joined = format!("{}{}", url.path().trim_end_matches('/'), wire.path);
            url.set_path(&joined);
        }
        if !wire.query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(wire.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        let carried = self.carried(call)?;
        let mut req = self.http.request(wire.method, url).headers(carried.headers);
        if let Some((name, token)) = carried.query {
            req = req.query(&[(name.as_str(), token.expose())]);
        }
        let content_type = match json {
            Json::Rpc => "application/json",
            Json::Rest => "application/a2a+json",
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
        if !call.is_streaming() {
            req = req.timeout(self.request_timeout);
        }
        Ok(req)
    }

    /// What a request carries on any binding (as gRPC metadata too, spec section 10.2): the extra
    /// headers, the version, the extensions and the credential; a credential the card wants in the
    /// query is handed back apart.
    fn carried(&self, call: &Call<'_>) -> Result<Carried> {
        // Read once: a refresh landing between the destination check and the send must not put
        // a credential on a request the check let through without one.
        let token = self.credential();
        let extra = self.extra_headers();
        self.check_destination(token.is_some() || extra.is_some())?;
        let mut headers = extra.cloned().unwrap_or_default();
        // MUST on every request (spec section 3.6.1); a missing header means 0.3 (section 3.6.2).
        headers.append("a2a-version", HeaderValue::from_static(self.endpoint.version.label()));
        let extensions = self.requested_extensions(call).join(", ");
        if !extensions.is_empty() {
            let value = HeaderValue::try_from(&extensions).map_err(|_| {
                Error::Input(format!(
                    "extension URIs \"{}\" are not a valid header value",
                    crate::text::one_line(&extensions)
                ))
            })?;
            if self.endpoint.version == ProtocolVersion::V0_3 {
                headers.append("x-a2a-extensions", value.clone());
            }
            headers.append("a2a-extensions", value);
        }
        let mut query = None;
        if let Some(token) = token {
            let secret = |v: String| {
                let mut value = HeaderValue::try_from(v).map_err(|_| {
                    Error::Input(format!("the credential for {} is not a valid header value", self.name))
                })?;
                value.set_sensitive(true);
                Ok::<_, Error>(value)
            };
            let header = match self.placement() {
                Placement::Bearer => Some((AUTHORIZATION, secret(format!("Bearer {}", token.expose()))?)),
                Placement::Basic => Some((
                    AUTHORIZATION,
                    secret(format!("Basic {}", auth::basic_credentials(&token)))?,
                )),
                Placement::Header(name) => {
                    let name = HeaderName::try_from(name.as_str()).map_err(|_| {
                        Error::Input(format!(
                            "the card's header name \"{}\" is not valid",
                            crate::text::one_line(&name)
                        ))
                    })?;
                    Some((name, secret(token.expose().to_string())?))
                }
                Placement::Cookie(name) => Some((COOKIE, secret(format!("{name}={}", token.expose()))?)),
                Placement::Query(name) => {
                    query = Some((name, token));
                    None
                }
            };
            if let Some((name, value)) = header {
                headers.append(name, value);
            }
        }
        Ok(Carried { headers, query })
    }

    /// The credential to send: any token where the card asks for one; where it does not, only a
    /// token given for this agent (a shared `A2A_TOKEN` or `--token` is not handed to agents that
    /// never asked).
    fn credential(&self) -> Option<Secret> {
        self.sent_token().map(|t| t.secret)
    }

    /// The token that goes on requests, with where it came from.
    fn sent_token(&self) -> Option<Token> {
        let token = self.token.read().unwrap_or_else(PoisonError::into_inner).clone()?;
        (self.auth.placement.is_some() || token.meant_for_this_agent()).then_some(token)
    }

    /// The extra headers, if they go to this agent: always when given for it; when shared among
    /// several agents, only where the card asks for a credential, like a shared token.
    fn extra_headers(&self) -> Option<&HeaderMap> {
        let sent = !self.headers.is_empty() && (!self.headers_shared || self.auth.placement.is_some());
        sent.then_some(&self.headers)
    }

    /// Where the card asks the credential to go; a bearer token where it asks for nothing we know.
    fn placement(&self) -> Placement {
        self.auth.placement.clone().unwrap_or(Placement::Bearer)
    }

    /// Why no credential may go to this agent's endpoint (another origin, plain http off
    /// loopback), if none may.
    pub fn credential_withheld(&self) -> Option<&str> {
        self.unsafe_destination.as_deref()
    }

    /// Refuses to send a credential or an extra header to an endpoint that must not get one.
    fn check_destination(&self, sends_credentials: bool) -> Result<()> {
        match &self.unsafe_destination {
            Some(reason) if sends_credentials => Err(Error::Withheld {
                agent: self.name.clone(),
                reason: reason.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Extensions to activate with `A2A-Extensions` (spec section 4.6): those the message names,
    /// and interactions/v1 on every request that can return a task, so servers attach the
    /// structured interaction. Only extensions the card declares: others are never requested.
    fn requested_extensions<'a>(&'a self, call: &Call<'a>) -> Vec<&'a str> {
        let mut uris: Vec<&str> = match call {
            Call::SendMessage(r) | Call::SendStreamingMessage(r) => {
                r.message.extensions.iter().map(String::as_str).collect()
            }
            _ => Vec::new(),
        };
        uris.push(super::INTERACTIONS_EXTENSION);
        let mut seen = std::collections::HashSet::new();
        uris.retain(|uri| self.card.declares_extension(uri) && seen.insert(*uri));
        uris
    }

    /// A call as errors name it.
    fn what(&self, call: &Call<'_>) -> String {
        format!("{} on {}", call.name(), self.name)
    }

    async fn send(&self, call: &Call<'_>, json: Json) -> Result<reqwest::Response> {
        let what = self.what(call);
        let mut resp = self
            .build(call, json, Method::POST)?
            .send()
            .await
            .map_err(|e| Error::transport(&what, e))?;
        if matches!(call, Call::SubscribeToTask(_))
            && json == Json::Rest
            && resp.status() == StatusCode::METHOD_NOT_ALLOWED
        {
            resp = self
                .build(call, json, Method::GET)?
                .send()
                .await
                .map_err(|e| Error::transport(&what, e))?;
        }
        if let Some(e) = redirected(&resp, &what) {
            return Err(e);
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
            return Err(self.unauthorized(status.as_u16(), challenge));
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

    /// A refused credential: what the card asks for, how ours was sent, and from which setting.
    fn unauthorized(&self, status: u16, challenge: Option<String>) -> Error {
        self.refused(challenge).at(status)
    }

    /// What a refusal of our credential says, before its status is known.
    fn refused(&self, challenge: Option<String>) -> Refused {
        let sent = self.sent_token();
        Refused {
            agent: self.name.clone(),
            asks_for: self.auth.asks_for.clone().or(challenge),
            env_var: self.token_env_var(),
            sent_as: sent.as_ref().map(|_| self.placement().describe()),
            sent_from: sent.map(|t| t.source),
            shared_applies: self.auth.placement.is_some(),
        }
    }

    /// A gRPC call's metadata, from what every request carries, and how to read a refusal: a
    /// refused credential reads as it does over HTTP, in a stream too.
    fn grpc_request(&self, call: &Call<'_>, limit: usize) -> Result<grpc::Request> {
        let carried = self.carried(call)?;
        if carried.query.is_some() {
            return Err(Error::Input(format!(
                "{}'s card asks for the credential in the URL's query, which gRPC has no place for",
                crate::text::one_line(&self.name)
            )));
        }
        let refused = self.refused(None);
        Ok(grpc::Request {
            metadata: tonic::metadata::MetadataMap::from_headers(carried.headers),
            refusal: grpc::Refusal {
                what: self.what(call),
                limit,
                streaming: call.is_streaming(),
                unauthorized: Box::new(move |status| refused.at(status)),
            },
        })
    }

    async fn unary<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T> {
        let json = match &self.transport {
            Transport::Grpc(link) => {
                let req = self.grpc_request(&call, BODY_LIMIT)?;
                return grpc::unary(link, &call, req, self.request_timeout).await;
            }
            Transport::Http(json) => *json,
        };
        let resp = self.send(&call, json).await?;
        let status = resp.status().as_u16();
        let body = read_body(resp, call.name(), BODY_LIMIT).await?;
        match json {
            Json::Rpc if !(200..300).contains(&status) => Err(jsonrpc_failure(status, call.name(), &body)),
            Json::Rpc => wire::jsonrpc::decode(call.name(), &body),
            Json::Rest => wire::rest::decode(call.name(), status, &body),
        }
    }

    async fn stream(&self, call: Call<'_>) -> Result<EventStream> {
        let json = match &self.transport {
            Transport::Grpc(link) => {
                let req = self.grpc_request(&call, self.frame_limit)?;
                return Ok(Box::pin(grpc::stream(link, &call, req).await?));
            }
            Transport::Http(json) => *json,
        };
        let resp = self.send(&call, json).await?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if !is_sse {
            // An error raised before the stream starts is a plain JSON reply
            // (docs/protocol-notes.md, "Errors").
            let body = read_body(resp, call.name(), BODY_LIMIT).await?;
            let err = match json {
                Json::Rpc if !(200..300).contains(&status) => Some(jsonrpc_failure(status, call.name(), &body)),
                Json::Rpc => wire::jsonrpc::decode::<serde_json::Value>(call.name(), &body).err(),
                Json::Rest => Some(wire::rest::error_from_body(status, call.name(), &body)),
            };
            return Err(err.unwrap_or_else(|| Error::Http {
                status,
                what: format!("{} (expected an event stream)", call.name()),
                excerpt: super::error::excerpt(&body),
                retry_after: None,
            }));
        }
        let decode = match json {
            Json::Rpc => wire::jsonrpc::decode_frame,
            Json::Rest => wire::rest::decode_frame,
        };
        // A frame that does not decode is reported and skipped; the stream goes on.
        let events =
            sse::frames(resp.bytes_stream(), self.frame_limit).map(move |frame| frame.and_then(|f| decode(&f)));
        Ok(Box::pin(events))
    }
}

/// `Error::Unauthorized` but for its status: kept by a gRPC stream, whose refusal may come late.
struct Refused {
    agent: String,
    asks_for: Option<String>,
    env_var: Option<String>,
    sent_as: Option<String>,
    sent_from: Option<TokenSource>,
    shared_applies: bool,
}

impl Refused {
    fn at(&self, status: u16) -> Error {
        Error::Unauthorized {
            status,
            agent: self.agent.clone(),
            asks_for: self.asks_for.clone(),
            env_var: self.env_var.clone(),
            sent_as: self.sent_as.clone(),
            sent_from: self.sent_from.clone().map(Box::new),
            shared_applies: self.shared_applies,
        }
    }
}

/// What `Client::carried` puts on a request.
struct Carried {
    headers: HeaderMap,
    /// A credential the card wants in the query string: its parameter name and the secret.
    query: Option<(String, Secret)>,
}

/// The name the user gave, if any.
fn user_name(opts: &ClientOptions) -> Option<&str> {
    opts.name.as_deref().filter(|n| !n.is_empty())
}

/// Where the options' token came from: meant for this agent, or shared among several.
fn given_source(opts: &ClientOptions) -> TokenSource {
    if opts.token_shared {
        TokenSource::SharedFlag
    } else {
        TokenSource::Explicit(opts.token_from.clone())
    }
}

/// The credential given for the agent, as a token.
fn given_token(secret: Option<Secret>, source: TokenSource) -> Option<Token> {
    secret.map(|secret| Token { secret, source })
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
        let url = if binding == Binding::Grpc {
            grpc::interface_url(&i.url)?
        } else {
            match base {
                Some(b) => b.join(&i.url).ok()?,
                None => Url::parse(&i.url).ok()?,
            }
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
            {"url":"wss://h:1","protocolBinding":"WEBSOCKET","protocolVersion":"1.0"},
            {"url":"/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
            {"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
            {"url":"h:50051","protocolBinding":"GRPC","protocolVersion":"1.0"}]}));
        let base = Url::parse("http://h:9/.well-known/agent-card.json").unwrap();
        let e = choose_endpoint(&c, Some(&base), None).unwrap();
        assert_eq!((e.binding, e.url.as_str()), (Binding::Rest, "http://h:9/rest"));
        let f = choose_endpoint(&c, Some(&base), Some(Binding::JsonRpc)).unwrap();
        assert_eq!((f.binding, f.url.as_str()), (Binding::JsonRpc, "http://h/rpc"));
        // A gRPC URL is host:port, not a path under the card's URL; off loopback it is TLS.
        let g = choose_endpoint(&c, Some(&base), Some(Binding::Grpc)).unwrap();
        assert_eq!((g.binding, g.url.as_str()), (Binding::Grpc, "https://h:50051/"));
    }

    #[test]
    fn a_credential_follows_grpc_to_another_port_only_from_a_card_fetched_over_https() {
        let endpoint = |url: &str, binding| Endpoint {
            url: Url::parse(url).unwrap(),
            binding,
            version: ProtocolVersion::V1_0,
            tenant: None,
        };
        let trusted = |card: &Url, url: &str, binding| untrusted_destination(card, &endpoint(url, binding)).is_none();
        let card = Url::parse("http://127.0.0.1:8000/.well-known/agent-card.json").unwrap();
        let withheld = untrusted_destination(&card, &endpoint("http://127.0.0.1:50051/", Binding::Grpc));
        assert!(
            withheld
                .as_deref()
                .is_some_and(|w| w.starts_with("credential withheld: gRPC interface on another port")),
            "plain http, loopback too, vouches for no other port: {withheld:?}"
        );
        assert!(
            trusted(&card, "http://127.0.0.1:8000/", Binding::Grpc),
            "the port named"
        );
        assert!(
            !trusted(&card, "http://127.0.0.1:50051/", Binding::Rest),
            "HTTP interfaces keep the origin rule"
        );
        assert!(!trusted(&card, "http://10.0.0.9:50051/", Binding::Grpc));
        let plain = Url::parse("http://agents.example.com:8080/.well-known/agent-card.json").unwrap();
        assert!(
            trusted(&plain, "https://agents.example.com:8080/", Binding::Grpc),
            "the port named, up to TLS"
        );
        assert!(!trusted(&plain, "https://agents.example.com:8443/", Binding::Grpc));
        let tls = Url::parse("https://agents.example.com/.well-known/agent-card.json").unwrap();
        assert!(trusted(&tls, "https://agents.example.com:8443/", Binding::Grpc));
        assert!(
            !trusted(&tls, "http://agents.example.com:8443/", Binding::Grpc),
            "never down to plain text"
        );
        assert!(!trusted(&tls, "https://elsewhere.example.com:8443/", Binding::Grpc));
    }

    #[test]
    fn same_origin_is_scheme_host_and_port() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(same_origin(&url("https://h/a"), &url("https://H:443/b?q")));
        assert!(same_origin(&url("http://h/"), &url("http://h:80/x")));
        assert!(
            !same_origin(&url("https://h/"), &url("http://h/")),
            "a downgrade to http"
        );
        assert!(
            !same_origin(&url("http://h:8080/"), &url("http://h:8081/")),
            "another port"
        );
        assert!(!same_origin(&url("http://h/"), &url("http://h.evil/")));
        assert!(
            !same_origin(&url("file:///a"), &url("file:///a")),
            "opaque origins never match"
        );
    }

    #[test]
    fn a_card_with_nothing_we_speak_says_what_it_offered() {
        let c = card(json!({"supportedInterfaces":[{"url":"h:1","protocolBinding":"GRPC","protocolVersion":"0.3"}]}));
        let err = choose_endpoint(&c, None, None).unwrap_err().to_string();
        assert!(err.contains("GRPC 0.3"), "{err}");
    }
}
