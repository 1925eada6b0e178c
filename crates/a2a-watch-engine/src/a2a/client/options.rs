//! What the user may choose about a connection (`ClientOptions`), and the two readings of it that
//! decide which credential applies: the name the user gave and where the token came from.

use std::time::Duration;

use crate::a2a::auth::{Given, Secret, TokenSource};
use crate::a2a::card::Binding;
use crate::a2a::signature::CardTrust;
use crate::a2a::sse::DEFAULT_FRAME_LIMIT;

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

/// The name the user gave, if any.
pub(super) fn user_name(opts: &ClientOptions) -> Option<&str> {
    opts.name.as_deref().filter(|n| !n.is_empty())
}

/// Where the options' token came from: meant for this agent, or shared among several.
pub(super) fn given_source(opts: &ClientOptions) -> TokenSource {
    if opts.token_shared {
        TokenSource::SharedFlag
    } else {
        TokenSource::Explicit(opts.token_from.clone())
    }
}
