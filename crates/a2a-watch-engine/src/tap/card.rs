//! The agent card as the planner gets it through the tap: the interface URLs that lead to the
//! upstream lead to the tap instead (1.0 `supportedInterfaces[].url`, spec section 8.3; 0.3 `url`
//! and `additionalInterfaces[].url`), so the planner's calls keep coming through it. Nothing
//! else in the card changes in meaning; relative URLs already resolve against the tap.

use std::net::SocketAddr;

use http::Method;
use serde_json::Value;
use url::Url;

use crate::a2a::discovery::{LEGACY_WELL_KNOWN, WELL_KNOWN};

/// Where a response holds a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CardAt {
    /// The body is the card.
    Body,
    /// The body is a JSON-RPC response whose `result` is the card.
    RpcResult,
}

/// Whether the request asks for a card: the well-known paths, 1.0 and 0.3 (docs/protocol-notes.md,
/// "Versions and cards"), or the extended card (spec section 3.1.11: REST `GET /extendedAgentCard`,
/// 0.3 `GET /v1/card`; JSON-RPC `GetExtendedAgentCard`, 0.3 `agent/getAuthenticatedExtendedCard`).
pub(super) fn card_at(method: &Method, path: &str, body: &[u8]) -> Option<CardAt> {
    let under = |file: &str| path.strip_suffix(file).is_some_and(|dir| dir.ends_with('/'));
    if [WELL_KNOWN, LEGACY_WELL_KNOWN].iter().any(|known| under(known)) {
        return Some(CardAt::Body);
    }
    if method == Method::GET && (under("extendedAgentCard") || path.ends_with("/v1/card")) {
        return Some(CardAt::Body);
    }
    // Most requests are not for the card: no parse unless the name is in the body at all.
    let named = |name: &str| memchr::memmem::find(body, name.as_bytes()).is_some();
    if method == Method::POST && (named("GetExtendedAgentCard") || named("getAuthenticatedExtendedCard")) {
        let rpc = super::observe::rpc_method(body)?;
        return matches!(
            rpc.as_str(),
            "GetExtendedAgentCard" | "agent/getAuthenticatedExtendedCard"
        )
        .then_some(CardAt::RpcResult);
    }
    None
}

/// The tap as the planner reached it: the address its connection came in on (the listening
/// address, made concrete when the tap listens on 0.0.0.0). Never the `Host` header, which the
/// client chooses. None for an address no URL can hold (an IPv6 zone, `%eth0`).
pub(super) fn tap_url(local: SocketAddr) -> Option<Url> {
    Url::parse(&format!("http://{local}")).ok()
}

/// A card the tap changed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Rewritten {
    /// Its interface URLs lead to the tap.
    Moved(Vec<u8>),
    /// A signed card (A2A 1.0 section 8.4, `signatures`) whose URLs would move: a rewritten
    /// card's signatures no longer match, so it is passed on unchanged (None; the planner then
    /// goes around the tap), or, when asked (`strip_signatures`), moved without them.
    Signed(Option<Vec<u8>>),
}

/// The card with its upstream interface URLs moved to `tap`; None if nothing needed it (or it
/// is not a JSON object), so the card goes out byte for byte.
pub(super) fn rewrite(body: &[u8], at: CardAt, upstream: &Url, tap: &Url, strip_signatures: bool) -> Option<Rewritten> {
    let mut whole: Value = serde_json::from_slice(body).ok()?;
    let card = match at {
        CardAt::Body => &mut whole,
        CardAt::RpcResult => whole.get_mut("result")?,
    };
    let fields = card.as_object_mut()?;
    let mut changed = false;
    let mut moved = |url: &mut Value| {
        if let Some(to) = url.as_str().and_then(|s| through_tap(s, upstream, tap)) {
            *url = Value::String(to);
            changed = true;
        }
    };
    for list in ["supportedInterfaces", "additionalInterfaces"] {
        if let Some(Value::Array(interfaces)) = fields.get_mut(list) {
            for url in interfaces.iter_mut().filter_map(|i| i.get_mut("url")) {
                moved(url);
            }
        }
    }
    if let Some(url) = fields.get_mut("url") {
        moved(url);
    }
    if !changed {
        return None;
    }
    let signed = fields
        .get("signatures")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty());
    if !signed {
        return serde_json::to_vec(&whole).ok().map(Rewritten::Moved);
    }
    if !strip_signatures {
        return Some(Rewritten::Signed(None));
    }
    fields.remove("signatures");
    Some(Rewritten::Signed(serde_json::to_vec(&whole).ok()))
}

/// `url` under the upstream (same origin, within its path), at the same place under the tap.
fn through_tap(url: &str, upstream: &Url, tap: &Url) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    if parsed.origin() != upstream.origin() {
        return None;
    }
    let prefix = upstream.path().trim_end_matches('/');
    let rest = parsed.path().strip_prefix(prefix)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let mut moved = tap.clone();
    moved.set_path(rest);
    moved.set_query(parsed.query());
    moved.set_fragment(parsed.fragment());
    Some(moved.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn only_the_upstreams_interface_urls_move() {
        let card = json!({
            "name": "runner",
            "url": "http://127.0.0.1:41241/a2a/v03",
            "documentationUrl": "http://127.0.0.1:41241/a2a/docs",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:41241/a2a/rpc", "protocolBinding": "JSONRPC"},
                {"url": "http://127.0.0.1:41241/other", "protocolBinding": "HTTP+JSON"},
                {"url": "https://elsewhere.example/a2a/rpc", "protocolBinding": "JSONRPC"},
                {"url": "/a2a/relative", "protocolBinding": "HTTP+JSON"}
            ],
            "additionalInterfaces": [{"url": "http://127.0.0.1:41241/a2a?x=1", "transport": "JSONRPC"}]
        });
        let body = serde_json::to_vec(&card).unwrap();
        let out = rewrite(
            &body,
            CardAt::Body,
            &url("http://127.0.0.1:41241/a2a"),
            &url("http://127.0.0.1:9000"),
            false,
        )
        .unwrap();
        let Rewritten::Moved(out) = out else { panic!("moved") };
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(out["url"], "http://127.0.0.1:9000/v03");
        assert_eq!(out["documentationUrl"], card["documentationUrl"], "not an interface");
        let urls: Vec<&str> = out["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["url"].as_str().unwrap())
            .collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:9000/rpc",
                "http://127.0.0.1:41241/other",
                "https://elsewhere.example/a2a/rpc",
                "/a2a/relative"
            ]
        );
        assert_eq!(out["additionalInterfaces"][0]["url"], "http://127.0.0.1:9000/?x=1");
        assert_eq!(out["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    }

    #[test]
    fn a_card_with_nothing_to_move_is_left_as_it_came() {
        let body = br#"{"supportedInterfaces":[{"url":"https://elsewhere.example/rpc"}]}"#;
        assert_eq!(
            rewrite(
                body,
                CardAt::Body,
                &url("http://127.0.0.1:1"),
                &url("http://127.0.0.1:2"),
                false
            ),
            None
        );
        assert_eq!(
            rewrite(
                b"not json",
                CardAt::Body,
                &url("http://127.0.0.1:1"),
                &url("http://127.0.0.1:2"),
                false
            ),
            None
        );
    }

    #[test]
    fn a_signed_card_is_passed_on_unless_its_signatures_are_stripped() {
        let card = json!({
            "supportedInterfaces": [{"url": "http://127.0.0.1:1/rpc"}],
            "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln"}]
        });
        let body = card.to_string();
        let (upstream, tap) = (url("http://127.0.0.1:1"), url("http://127.0.0.1:2"));
        assert_eq!(
            rewrite(body.as_bytes(), CardAt::Body, &upstream, &tap, false),
            Some(Rewritten::Signed(None))
        );
        let Some(Rewritten::Signed(Some(stripped))) = rewrite(body.as_bytes(), CardAt::Body, &upstream, &tap, true)
        else {
            panic!("stripped and moved")
        };
        let stripped: Value = serde_json::from_slice(&stripped).unwrap();
        assert_eq!(stripped["supportedInterfaces"][0]["url"], "http://127.0.0.1:2/rpc");
        assert!(stripped.get("signatures").is_none());
        let unsigned = json!({"supportedInterfaces": [{"url": "http://127.0.0.1:1/rpc"}], "signatures": []});
        assert!(matches!(
            rewrite(unsigned.to_string().as_bytes(), CardAt::Body, &upstream, &tap, false),
            Some(Rewritten::Moved(_))
        ));
    }

    #[test]
    fn the_tap_is_the_address_the_connection_came_in_on() {
        let url = |at: &str| tap_url(at.parse().unwrap()).map(String::from);
        assert_eq!(url("10.0.0.5:9000").as_deref(), Some("http://10.0.0.5:9000/"));
        assert_eq!(url("[::1]:9000").as_deref(), Some("http://[::1]:9000/"));
        assert_eq!(url("[fe80::1%2]:9000"), None, "a zone has no place in a URL");
    }

    #[test]
    fn cards_are_asked_for_at_the_well_known_paths_and_as_the_extended_card() {
        let get = |path: &str| card_at(&Method::GET, path, b"");
        assert_eq!(get("/.well-known/agent-card.json"), Some(CardAt::Body));
        assert_eq!(get("/a2a/.well-known/agent.json"), Some(CardAt::Body));
        assert_eq!(get("/x.well-known/agent.json"), None);
        assert_eq!(get("/a2a/rest/extendedAgentCard"), Some(CardAt::Body));
        assert_eq!(get("/v1/card"), Some(CardAt::Body));
        assert_eq!(get("/tasks/t-1"), None);
        let rpc = |method: &str| {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}).to_string();
            card_at(&Method::POST, "/", body.as_bytes())
        };
        assert_eq!(rpc("GetExtendedAgentCard"), Some(CardAt::RpcResult));
        assert_eq!(rpc("agent/getAuthenticatedExtendedCard"), Some(CardAt::RpcResult));
        assert_eq!(rpc("GetTask"), None);
        let mentions = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"GetExtendedAgentCard"}]}}}"#;
        assert_eq!(card_at(&Method::POST, "/", mentions), None, "a message that names it");
    }

    #[test]
    fn an_extended_card_in_a_json_rpc_result_moves_too() {
        let body = json!({"jsonrpc": "2.0", "id": 3, "result": {
            "supportedInterfaces": [{"url": "http://127.0.0.1:1/rpc"}]}});
        let out = rewrite(
            body.to_string().as_bytes(),
            CardAt::RpcResult,
            &url("http://127.0.0.1:1"),
            &url("http://127.0.0.1:2"),
            false,
        )
        .unwrap();
        let Rewritten::Moved(out) = out else { panic!("moved") };
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(out["result"]["supportedInterfaces"][0]["url"], "http://127.0.0.1:2/rpc");
        assert_eq!(out["id"], 3);
    }
}
