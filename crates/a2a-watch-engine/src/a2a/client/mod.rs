//! One client type for every agent, whichever binding and version it speaks: how it is made from a
//! card (`connect`, `from_discovered`) and the operations it offers (spec section 3.1). The jobs
//! under it live next door, each in its own file, so that a change to one policy touches one home:
//! - `dispatch`: sending one operation over the binding in use, statuses, replies and SSE;
//! - `credentials`: which credential goes and where the card asks for it, and refusals;
//! - `destination`: where a credential may go (origin, redirects, plain http, signed cards);
//! - `endpoint`: which of the card's interfaces requests go to;
//! - `http`: the shared HTTP stack and its proxy, and reading a reply with a limit;
//! - `options`: what the user may choose about a connection;
//! - `paging`: ListTasks a page at a time.

mod credentials;
mod destination;
mod dispatch;
mod endpoint;
mod http;
mod options;
mod paging;

use std::pin::Pin;
use std::sync::RwLock;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use futures::Stream;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::auth::{self, CardAuth, Token, TokenSource};
use super::card::{AgentCard, Binding};
use super::discovery::{self, Discovered};
use super::error::{Error, Result};
use super::grpc;
use super::shown::ShownUrl;
use super::signature::CardSignature;
use super::types::{
    GetTaskRequest, ListTasksRequest, ListTasksResponse, PushConfig, PushConfigId, SendMessageRequest, StreamResponse,
    Task, TaskIdRequest,
};
use super::wire::Call;
use credentials::given_token;
use destination::{untrusted_destination, unverified};
use dispatch::{Json, Transport};
use endpoint::choose_endpoint;
use options::{given_source, user_name};

pub(crate) use destination::{insecure, redirected, same_origin};
pub use endpoint::Endpoint;
pub use http::http_client;
pub(crate) use http::{read_body, system_proxy_except_loopback};
pub use options::ClientOptions;
pub use paging::{Listing, MAX_PAGES, Pages};

/// A stream of events; `None` means the server closed it, which says nothing about the task.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamResponse>> + Send>>;

/// One agent, connected: its card, the interface in use, and what its requests carry. Shared by
/// every watcher of the agent (behind an `Arc`), so a refreshed token reaches them all.
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

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
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
        self.unary_empty(Call::DeletePushConfig(&req)).await
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
}
