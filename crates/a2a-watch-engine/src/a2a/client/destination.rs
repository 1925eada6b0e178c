//! Where a credential may go: the origin rule (the origin the user named, a card's gRPC port only
//! when the card vouches for it), the redirect policy that keeps requests in that origin, plain
//! http off loopback, and an unverified card under require_signed_card (README "Security").

use url::Url;

use super::{Client, Endpoint};
use crate::a2a::auth;
use crate::a2a::card::Binding;
use crate::a2a::error::{Error, Result};
use crate::a2a::shown::ShownUrl;
use crate::a2a::signature::CardSignature;

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
pub(super) fn untrusted_destination(card: &Url, endpoint: &Endpoint) -> Option<String> {
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
pub(super) fn unverified(signature: Option<&CardSignature>) -> Option<String> {
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
pub(super) fn same_origin_redirects() -> reqwest::redirect::Policy {
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
    /// Why no credential may go to this agent's endpoint (another origin, plain http off
    /// loopback), if none may.
    pub fn credential_withheld(&self) -> Option<&str> {
        self.unsafe_destination.as_deref()
    }

    /// Refuses to send a credential or an extra header to an endpoint that must not get one.
    pub(super) fn check_destination(&self, sends_credentials: bool) -> Result<()> {
        match &self.unsafe_destination {
            Some(reason) if sends_credentials => Err(Error::Withheld {
                agent: self.name.clone(),
                reason: reason.clone(),
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::card::ProtocolVersion;

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
}
