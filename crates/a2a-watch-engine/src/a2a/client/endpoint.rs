//! Which of the card's interfaces requests go to (spec section 8.3.2): the first in the card's
//! order that we speak, or the one of a forced binding.

use url::Url;

use crate::a2a::card::{AgentCard, Binding, ProtocolVersion};
use crate::a2a::error::{Error, Result};
use crate::a2a::grpc;
use crate::a2a::shown::ShownUrl;

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

/// The first interface of the card's order that we speak, or of the forced binding.
pub(super) fn choose_endpoint(card: &AgentCard, base: Option<&Url>, forced: Option<Binding>) -> Result<Endpoint> {
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
    fn a_card_with_nothing_we_speak_says_what_it_offered() {
        let c = card(json!({"supportedInterfaces":[{"url":"h:1","protocolBinding":"GRPC","protocolVersion":"0.3"}]}));
        let err = choose_endpoint(&c, None, None).unwrap_err().to_string();
        assert!(err.contains("GRPC 0.3"), "{err}");
    }
}
