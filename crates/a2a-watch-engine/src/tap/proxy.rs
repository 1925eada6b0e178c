//! Forwarding: one request of the planner to the agent, its response back as it comes. Bodies
//! stream chunk by chunk both ways (the tap holds neither; an SSE frame reaches the planner when
//! it reaches us); each response chunk is also handed, by an unbounded queue, to the observer of
//! `observe`, so the proxy never waits for the store. Requests are refused before anything is
//! sent when they are not the planner's to make (README "Security").

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use http::header::{self, HeaderMap, HeaderName};
use http::{Request, Response, StatusCode};
use hyper::body::{Body as _, Incoming};
use url::Url;

use super::{card, observe};
use crate::a2a::client::read_body;
use crate::a2a::discovery::CARD_LIMIT;
use crate::event::{self, AgentId, Event, LocalServer, SignedCardAtTap, TraceParent};
use crate::local_server::{self, Handler};

pub(super) struct Tap {
    pub agent: AgentId,
    /// The agent's base URL; the planner's paths are appended to its path.
    pub upstream: Url,
    /// Rewrite a signed card and drop its signatures, rather than pass it on unchanged.
    pub strip_signatures: bool,
    pub http: reqwest::Client,
    pub events: event::Sender,
    /// What this tap's observers hold.
    pub backlog: observe::Backlog,
}

impl Handler for Tap {
    async fn handle(self: Arc<Self>, local: SocketAddr, req: Request<Incoming>) -> Response<Body> {
        handle(self, local, req).await
    }

    async fn busy(self: Arc<Self>, _: &Request<Incoming>) {
        let busy = Event::Busy {
            agent: self.agent,
            server: LocalServer::Tap,
        };
        let _ = self.events.send(busy).await;
    }
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

/// Whether a planner's path could leave the upstream's path prefix once appended to it: a dot
/// segment (RFC 3986 section 5.2.4), literal or percent-encoded (URL parsers, ours included,
/// read `%2e%2e` as `..`; some servers read `..;` so), an encoded separator (`%2f`, `%5c`)
/// that the agent may decode into one, or an encoded `%` (`%25`), which an agent that decodes
/// twice reads as any of those (`%252e%252e`). No A2A path has any of them.
fn leaves_prefix(path: &str) -> bool {
    path.split('/').any(|segment| {
        let decoded: Vec<u8> = percent_encoding::percent_decode_str(segment).collect();
        let name = decoded.split(|b| *b == b';').next().unwrap_or_default();
        matches!(name, b"." | b"..") || decoded.iter().any(|b| matches!(b, b'/' | b'\\' | b'%'))
    })
}

/// Why a request is not one to forward, if it is not: only an origin-form target (RFC 9112
/// section 3.2.1, a path from `/`) goes under the agent's path. `OPTIONS *` would become
/// `/a2a*`, a sibling of the prefix, and CONNECT (RFC 9110 section 9.3.6) asks for a tunnel
/// to its authority, not an A2A call.
fn not_forwarded(method: &http::Method, path: &str) -> Option<&'static str> {
    if method == http::Method::CONNECT {
        Some("CONNECT (a tunnel) is not forwarded")
    } else if !path.starts_with('/') {
        Some("only a request for a path (from /) is forwarded")
    } else if leaves_prefix(path) {
        Some("a path that could leave the agent's path is refused")
    } else {
        None
    }
}

/// The planner's trace context: one valid `traceparent` (W3C Trace Context section 3.2; a
/// request with several is not in a trace, section 3.2.1). Read, never changed: the header goes
/// on with the others.
fn planner_trace(headers: &HeaderMap) -> Option<TraceParent> {
    let mut values = headers.get_all("traceparent").iter();
    match (values.next(), values.next()) {
        (Some(only), None) => TraceParent::parse(only.to_str().ok()?),
        _ => None,
    }
}

/// A short plain answer of the tap's own (never with a URL or a header in it).
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    local_server::plain(status, "tap", text)
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

/// One request of the planner, on a connection to the tap at `local`.
async fn handle(tap: Arc<Tap>, local: SocketAddr, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    // Refused before anything is sent: the request would carry the planner's credentials.
    if let Some(foreign) = local_server::foreign(&parts.headers, local) {
        return plain(StatusCode::FORBIDDEN, foreign.reason());
    }
    if let Some(refused) = not_forwarded(&parts.method, parts.uri.path()) {
        return plain(StatusCode::BAD_REQUEST, refused);
    }
    let mut headers = end_to_end(&parts.headers);
    // The observer reads what passes; a compressed body it could not. The planner takes identity.
    headers.remove(header::ACCEPT_ENCODING);
    // 100-continue is between the planner and the tap (hyper answers it when the body is read).
    headers.remove(header::EXPECT);
    // The body goes on as it comes, a copy kept (within the tap's backlog) to tell the binding.
    let (copier, copied) = observe::CopyRequest::new(&tap.backlog);
    let sent = tap
        .http
        .request(parts.method.clone(), target(&tap.upstream, &parts.uri))
        .headers(headers)
        .body(copied_upload(body, copier))
        .send()
        .await;
    let upstream = match sent {
        Ok(resp) => resp,
        Err(e) => return plain(StatusCode::BAD_GATEWAY, unreachable(&e)),
    };
    let status = upstream.status();
    let headers = end_to_end(upstream.headers());
    // The agent has the whole request by now (it answers what it read).
    let request = copied.await.ok();
    let body = request.as_ref().map_or(&[][..], |r| &r.bytes[..]);
    if let Some(at) = card::card_at(&parts.method, parts.uri.path(), body).filter(|_| status.is_success()) {
        drop(request);
        return card_response(&tap, local, at, status, headers, upstream).await;
    }
    let Some(request) = request else {
        // Not kept (over the tap's bound, or broken off): passed on, not observed.
        return respond(status, headers, Body::from_stream(upstream.bytes_stream()));
    };
    let is_sse = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    let exchange = observe::Exchange {
        agent: tap.agent,
        method: parts.method,
        path: parts.uri.path().to_string(),
        request,
        status: status.as_u16(),
        sse: is_sse,
        trace: planner_trace(&parts.headers),
    };
    observed_response(&tap, exchange, headers, upstream)
}

/// The planner's body as it comes, each chunk also handed to `copier`; the copy is finished once
/// the body is whole, and dropped if it breaks off.
fn copied_upload(body: Incoming, copier: observe::CopyRequest) -> reqwest::Body {
    if body.is_end_stream() {
        copier.finish();
        return reqwest::Body::from(Bytes::new());
    }
    let chunks = futures::stream::unfold((body, Some(copier)), |(mut body, mut copier)| async move {
        loop {
            let chunk = match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(chunk) => chunk,
                    // Trailers: not a part of the body.
                    Err(_) => continue,
                },
                // A body that broke off is not kept: it was not the request the agent got.
                Some(Err(e)) => return Some((Err(e), (body, None))),
                None => {
                    if let Some(copier) = copier {
                        copier.finish();
                    }
                    return None;
                }
            };
            if let Some(copier) = &mut copier {
                copier.push(&chunk);
            }
            // Whole once its length is read: the agent's client need not ask for more.
            if body.is_end_stream()
                && let Some(copier) = copier.take()
            {
                copier.finish();
            }
            return Some((Ok(chunk), (body, copier)));
        }
    });
    reqwest::Body::wrap_stream(chunks)
}

/// The agent's card, read whole and rewritten so the planner's calls come back through the tap
/// (and, if asked, stripped of its signatures, which the rewrite would break).
async fn card_response(
    tap: &Tap,
    local: SocketAddr,
    at: card::CardAt,
    status: StatusCode,
    mut headers: HeaderMap,
    upstream: reqwest::Response,
) -> Response<Body> {
    // Held whole to be rewritten, so bounded as a2a-watch bounds the cards it reads itself.
    let Ok(whole) = read_body(upstream, "the agent's card", CARD_LIMIT).await else {
        return plain(StatusCode::BAD_GATEWAY, "the agent's card broke off, or is over 1 MiB");
    };
    // Where the planner reached the tap, never what its Host header says.
    let rewritten = card::tap_url(local)
        .and_then(|tap_url| card::rewrite(&whole, at, &tap.upstream, &tap_url, tap.strip_signatures));
    let body = match rewritten {
        None => Bytes::from(whole),
        Some(card::Rewritten::Moved(rewritten)) => {
            headers.remove(header::CONTENT_LENGTH);
            Bytes::from(rewritten)
        }
        Some(card::Rewritten::Signed(rewritten)) => {
            let card = match rewritten {
                Some(_) => SignedCardAtTap::Stripped,
                None => SignedCardAtTap::PassedThrough,
            };
            let _ = (tap.events).send(Event::TapSignedCard { agent: tap.agent, card }).await;
            match rewritten {
                Some(rewritten) => {
                    headers.remove(header::CONTENT_LENGTH);
                    Bytes::from(rewritten)
                }
                None => Bytes::from(whole),
            }
        }
    };
    respond(status, headers, Body::from(body))
}

/// The agent's response passed on as it comes, each chunk also queued for the observer of the
/// exchange.
fn observed_response(
    tap: &Tap,
    exchange: observe::Exchange,
    headers: HeaderMap,
    upstream: reqwest::Response,
) -> Response<Body> {
    let status = upstream.status();
    let (mut tee, chunks) = observe::queue(&tap.backlog);
    tokio::spawn(observe::observe(exchange, chunks, tap.events.clone()));
    let stream = upstream.bytes_stream().map(move |chunk| {
        // A full backlog or a gone observer never stops the planner's response.
        if let Ok(bytes) = &chunk {
            tee.send(bytes);
        }
        chunk
    });
    respond(status, headers, Body::from_stream(stream))
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
    fn the_planners_trace_is_one_valid_traceparent() {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut h = HeaderMap::new();
        assert_eq!(planner_trace(&h), None);
        h.insert("traceparent", valid.parse().unwrap());
        assert_eq!(planner_trace(&h), TraceParent::parse(valid));
        h.append("traceparent", valid.parse().unwrap());
        assert_eq!(planner_trace(&h), None, "two are none");
        h.insert("traceparent", "00-zz".parse().unwrap());
        assert_eq!(planner_trace(&h), None);
    }

    #[test]
    fn paths_that_could_climb_out_of_the_prefix_are_refused() {
        for bad in [
            "/../admin",
            "/a2a/%2e%2e/admin",
            "/%2E%2E/admin",
            "/.%2e/x",
            "/./x",
            "/..;/admin",
            "/a%2f..%2fadmin",
            "/a%5cb",
            "/..",
            "/%252e%252e/admin",
            "/a%25b",
        ] {
            assert!(leaves_prefix(bad), "{bad}");
        }
        for ok in [
            "/",
            "/tasks/t-1",
            "/.well-known/agent-card.json",
            "/a..b/c.d",
            "/v1/message:send",
        ] {
            assert!(!leaves_prefix(ok), "{ok}");
        }
    }

    #[test]
    fn only_origin_form_targets_are_forwarded() {
        assert!(not_forwarded(&http::Method::GET, "/tasks").is_none());
        assert!(not_forwarded(&http::Method::OPTIONS, "*").is_some());
        assert!(not_forwarded(&http::Method::GET, "").is_some());
        assert!(not_forwarded(&http::Method::CONNECT, "/").is_some());
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
