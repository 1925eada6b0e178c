//! Forwarding: one request of the planner to the agent, its response back as it comes. Bodies
//! stream chunk by chunk (an SSE frame reaches the planner when it reaches us); each chunk is
//! also handed, by an unbounded queue, to the observer of `observe`, so the proxy never waits
//! for the store.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use http::header::{self, HeaderMap, HeaderName};
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use url::Url;

use super::{card, observe};
use crate::a2a::client::read_body;
use crate::a2a::discovery::CARD_LIMIT;
use crate::event::{self, AgentId};

/// A planner's request body larger than this is refused (413), as the client refuses replies.
const REQUEST_LIMIT: usize = 64 * 1024 * 1024;

pub(super) struct Tap {
    pub agent: AgentId,
    /// The agent's base URL; the planner's paths are appended to its path.
    pub upstream: Url,
    /// Where the tap listens, for card URLs when the planner sent no `Host`.
    pub listen: Option<SocketAddr>,
    pub http: reqwest::Client,
    pub events: event::Sender,
    /// What this tap's observers hold unread.
    pub backlog: observe::Backlog,
}

/// The engine's HTTP stack, minus what a client does for itself: redirects go back to the planner
/// as they came (following them is the planner's choice), and no User-Agent of ours replaces
/// the planner's. Loopback is reached directly, never through a system proxy.
pub(super) fn http_client(connect_timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .referer(false)
        .redirect(reqwest::redirect::Policy::none())
        .proxy(crate::a2a::client::system_proxy_except_loopback())
        .build()
        .unwrap_or_default()
}

/// Connection-level headers (RFC 9110 section 7.6.1), which belong to one hop and are not
/// forwarded; `Host` is the upstream's own.
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

/// The headers that go to the next hop: all but the hop-by-hop ones, those `Connection` names,
/// `Upgrade` and `Host`.
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .collect();
    let mut out = headers.clone();
    for name in HOP_BY_HOP.iter().chain([&header::UPGRADE, &header::HOST]) {
        out.remove(name);
    }
    for name in named {
        out.remove(name.as_str());
    }
    out
}

/// Where the planner's request goes: the upstream's path, then the planner's path and query.
fn target(upstream: &Url, uri: &http::Uri) -> Url {
    let mut url = upstream.clone();
    let path = format!("{}{}", upstream.path().trim_end_matches('/'), uri.path());
    url.set_path(&path);
    url.set_query(uri.query());
    url
}

/// A short plain answer of the tap's own (never with a URL or a header in it).
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut resp = Response::new(Body::from(format!("a2a-watch tap: {text}\n")));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// Why the agent could not be reached, in words that hold no URL (reqwest's own do).
fn unreachable(e: &reqwest::Error) -> &'static str {
    if e.is_connect() {
        "cannot connect to the agent (refused or unreachable)"
    } else if e.is_timeout() {
        "the agent did not answer in time"
    } else {
        "the agent's connection failed"
    }
}

pub(super) async fn handle(tap: Arc<Tap>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(Body::new(body), REQUEST_LIMIT).await else {
        return Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large or broken"));
    };
    let mut headers = end_to_end(&parts.headers);
    // The observer reads what passes; a compressed body it could not. The planner takes identity.
    headers.remove(header::ACCEPT_ENCODING);
    // The body is read whole already: its length is the one sent, and there is nothing to wait for.
    headers.remove(header::CONTENT_LENGTH);
    headers.remove(header::EXPECT);
    let card_at = card::card_at(&parts.method, parts.uri.path(), &body);
    let sent = tap
        .http
        .request(parts.method.clone(), target(&tap.upstream, &parts.uri))
        .headers(headers)
        .body(body.clone())
        .send()
        .await;
    let upstream = match sent {
        Ok(resp) => resp,
        Err(e) => return Ok(plain(StatusCode::BAD_GATEWAY, unreachable(&e))),
    };
    let status = upstream.status();
    let mut headers = end_to_end(upstream.headers());
    if let Some(at) = card_at.filter(|_| status.is_success()) {
        // Held whole to be rewritten, so bounded as a2a-watch bounds the cards it reads itself.
        let Ok(whole) = read_body(upstream, "the agent's card", CARD_LIMIT).await else {
            return Ok(plain(
                StatusCode::BAD_GATEWAY,
                "the agent's card broke off, or is over 1 MiB",
            ));
        };
        let tap_origin = card::tap_origin(parts.headers.get(header::HOST), tap.listen);
        let body = match tap_origin.and_then(|origin| card::rewrite(&whole, at, &tap.upstream, &origin)) {
            Some(rewritten) => {
                headers.remove(header::CONTENT_LENGTH);
                Bytes::from(rewritten)
            }
            None => Bytes::from(whole),
        };
        return Ok(respond(status, headers, Body::from(body)));
    }
    let is_sse = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    let (mut tee, chunks) = observe::queue(&tap.backlog);
    let exchange = observe::Exchange {
        agent: tap.agent,
        method: parts.method,
        path: parts.uri.path().to_string(),
        request: body,
        status: status.as_u16(),
        sse: is_sse,
    };
    tokio::spawn(observe::observe(exchange, chunks, tap.events.clone()));
    let stream = upstream.bytes_stream().map(move |chunk| {
        // A full backlog or a gone observer never stops the planner's response.
        if let Ok(bytes) = &chunk {
            tee.send(bytes);
        }
        chunk
    });
    Ok(respond(status, headers, Body::from_stream(stream)))
}

fn respond(status: StatusCode, headers: HeaderMap, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_stay_and_the_rest_go_on() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "Bearer planner".parse().unwrap());
        h.insert(header::CONNECTION, "keep-alive, X-Hop".parse().unwrap());
        h.insert("x-hop", "1".parse().unwrap());
        h.insert(header::TRANSFER_ENCODING, "chunked".parse().unwrap());
        h.insert(header::HOST, "127.0.0.1:9000".parse().unwrap());
        h.insert("a2a-version", "1.0".parse().unwrap());
        let out = end_to_end(&h);
        let names: Vec<&str> = out.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["authorization", "a2a-version"]);
    }

    #[test]
    fn paths_and_queries_go_under_the_upstream_path() {
        let uri: http::Uri = "/tasks/t-1?historyLength=2".parse().unwrap();
        let root = Url::parse("http://127.0.0.1:41241").unwrap();
        assert_eq!(
            target(&root, &uri).as_str(),
            "http://127.0.0.1:41241/tasks/t-1?historyLength=2"
        );
        let prefixed = Url::parse("https://h/a2a/").unwrap();
        let uri: http::Uri = "/".parse().unwrap();
        assert_eq!(target(&prefixed, &uri).as_str(), "https://h/a2a/");
    }
}
