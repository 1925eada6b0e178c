//! What a2a-watch's own HTTP servers (the tap, the push receiver; the demo's approval page for
//! the request rule) share, since every request they get may be hostile (README "Security"):
//! one rule for `Host` and `Origin`, and one accept loop that caps connections (all, and one
//! peer's) and the time a client may take.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use http::header::{self, HeaderMap, HeaderValue};
use http::uri::Authority;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// How much of one server (one tap, the push receiver) a client may hold, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; past it a request is answered 503 and counted
    /// (`Handler::busy`).
    pub connections: usize,
    /// Connections served at once from one peer (its IPv4 address, or its IPv6 /64, which one
    /// host commonly holds whole); past it 503, not counted: one peer can neither take every
    /// place from the others nor inflate the count that says deliveries were lost.
    pub per_peer: usize,
    /// A client that has not sent its whole request head by then is cut off: a half-sent head
    /// would otherwise hold its connection (and a place under the caps) for ever.
    pub header: Duration,
    /// When set, a connection serves one request and is closed after this, whatever it is
    /// doing; otherwise it is kept alive for as long as it is used (the tap's streams).
    pub whole: Option<Duration>,
}

/// Why a request is not this server's to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// `Host` names another server: a page whose name was rebound to this address (DNS
    /// rebinding), or no `Host` at all.
    Host,
    /// `Origin` is another site: a page in the user's browser posting here.
    Origin,
}

impl Foreign {
    pub fn reason(self) -> &'static str {
        match self {
            Foreign::Host => "the Host header does not name this server",
            Foreign::Origin => "a request from another site's page (Origin) is refused",
        }
    }
}

/// The one Host and Origin rule of the local servers. `local` is the address the client
/// connected to (the listening address, made concrete when listening on 0.0.0.0). `Host` must
/// name it, or on loopback `localhost`, `127.0.0.1` or `[::1]` with its port: a name that a
/// page rebound to this address (DNS rebinding) is refused. An `Origin`, if any, must be this
/// server itself (RFC 6454): a browser names the page a request came from there.
pub fn foreign(headers: &HeaderMap, local: SocketAddr) -> Option<Foreign> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| names_local(h, local)) {
        return Some(Foreign::Host);
    }
    let origin = headers.get(header::ORIGIN).map(HeaderValue::to_str);
    match origin {
        None => None,
        Some(Ok(origin)) if origin.strip_prefix("http://").is_some_and(|a| names_local(a, local)) => None,
        Some(_) => Some(Foreign::Origin),
    }
}

/// Whether `authority` (`host:port`) is the address `local`.
fn names_local(authority: &str, local: SocketAddr) -> bool {
    let Ok(authority) = authority.parse::<Authority>() else {
        return false;
    };
    if authority.as_str().contains('@') || authority.port_u16().unwrap_or(80) != local.port() {
        return false;
    }
    let host = authority.host();
    if local.ip().is_loopback() && host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() else {
        return false;
    };
    ip == local.ip()
        || (local.ip().is_loopback()
            && [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)].contains(&ip))
}

/// The address a connection came in on. An IPv4 client of a dual-stack `[::]` listener arrives
/// at `::ffff:a.b.c.d` (RFC 4291 section 2.5.5.2): that is the IPv4 address, for `foreign` (a
/// mapped address is not `is_loopback`) and for the URLs that name the server.
fn connected_to(stream: &TcpStream) -> std::io::Result<SocketAddr> {
    let at = stream.local_addr()?;
    Ok(SocketAddr::new(at.ip().to_canonical(), at.port()))
}

/// The address an axum server's connection came in on (`ConnectInfo`), for `foreign`.
#[derive(Debug, Clone, Copy)]
pub struct ConnectedTo(pub SocketAddr);

impl Connected<IncomingStream<'_, TcpListener>> for ConnectedTo {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> ConnectedTo {
        // Without it (a socket already gone), port 0 names no Host: the request is refused.
        let unknown = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        ConnectedTo(connected_to(stream.io()).unwrap_or(unknown))
    }
}

/// A short plain answer of the `server`'s own, in words that hold no URL or header.
pub fn plain(status: StatusCode, server: &str, text: &str) -> Response<Body> {
    let mut resp = Response::new(Body::from(format!("a2a-watch {server}: {text}\n")));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// One local server's requests.
pub trait Handler: Send + Sync + 'static {
    /// A request on a connection to `local`.
    fn handle(
        self: Arc<Self>,
        local: SocketAddr,
        req: Request<Incoming>,
    ) -> impl Future<Output = Response<Body>> + Send;

    /// A request on a connection over the cap, answered 503 once this returns (to count it).
    fn busy(self: Arc<Self>, req: &Request<Incoming>) -> impl Future<Output = ()> + Send;
}

impl Limits {
    fn http1(&self, keep_alive: bool) -> http1::Builder {
        let mut builder = http1::Builder::new();
        // hyper times nothing without a timer.
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.header)
            .keep_alive(keep_alive && self.whole.is_none());
        builder
    }

    /// `connection` run to its end, or cut off after `whole`.
    async fn within(&self, connection: impl Future) {
        match self.whole {
            Some(whole) => {
                let _ = tokio::time::timeout(whole, connection).await;
            }
            None => {
                connection.await;
            }
        }
    }
}

/// The place a peer is counted under: its IPv4 address (a mapped one as such), or its IPv6 /64.
fn peer_of(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        v4 => v4,
    }
}

/// The connections each peer has open.
#[derive(Default, Clone)]
struct Peers(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// One connection of `peer`'s, counted until dropped (with its task, however that ends).
struct PeerPlace {
    peers: Peers,
    peer: IpAddr,
}

impl Peers {
    fn take(&self, peer: IpAddr, per_peer: usize) -> Option<PeerPlace> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let held = open.entry(peer).or_default();
        if *held >= per_peer {
            return None;
        }
        *held += 1;
        Some(PeerPlace {
            peers: self.clone(),
            peer,
        })
    }
}

impl Drop for PeerPlace {
    fn drop(&mut self) {
        let mut open = self.peers.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = open.get_mut(&self.peer) {
            *held -= 1;
            if *held == 0 {
                open.remove(&self.peer);
            }
        }
    }
}

/// Accepts until dropped, serving at most `limits.connections` connections at once and
/// `limits.per_peer` of one peer's; every connection is its own task, aborted with this one.
/// Past a cap, as many again are answered 503 and closed (a request over the server's own cap
/// counted by `Handler::busy`); past that a connection is closed unanswered.
pub async fn serve<H: Handler>(listener: TcpListener, limits: Limits, handler: Arc<H>) {
    let peers = Peers::default();
    let mut connections = JoinSet::new();
    let mut refusing = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let Ok(local) = connected_to(&stream) else { continue };
                    // Frames go out as they come: no waiting to fill a segment.
                    let _ = stream.set_nodelay(true);
                    let handler = handler.clone();
                    let io = TokioIo::new(stream);
                    let full = connections.len() >= limits.connections;
                    let place = if full { None } else { peers.take(peer_of(peer.ip()), limits.per_peer) };
                    if let Some(place) = place {
                        connections.spawn(async move {
                            let _place = place;
                            let service = service_fn(move |req| {
                                let handler = handler.clone();
                                async move { Ok::<_, Infallible>(handler.handle(local, req).await) }
                            });
                            limits.within(limits.http1(true).serve_connection(io, service)).await;
                        });
                    } else if refusing.len() < limits.connections {
                        let text = if full { "too many connections; try again" } else { "too many connections from one address; try again" };
                        refusing.spawn(async move {
                            let service = service_fn(move |req| {
                                let handler = handler.clone();
                                async move {
                                    if full {
                                        handler.busy(&req).await;
                                    }
                                    Ok::<_, Infallible>(plain(StatusCode::SERVICE_UNAVAILABLE, "server", text))
                                }
                            });
                            limits.within(limits.http1(false).serve_connection(io, service)).await;
                        });
                    }
                }
                // Out of file descriptors, say: the next accept may work once some close.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            Some(_) = refusing.join_next(), if !refusing.is_empty() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(host) = host {
            h.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            h.insert(header::ORIGIN, origin.parse().unwrap());
        }
        h
    }

    #[test]
    fn host_names_the_listening_address_or_loopback_by_name() {
        let loopback: SocketAddr = "127.0.0.1:9000".parse().unwrap();
        for ok in ["127.0.0.1:9000", "localhost:9000", "LocalHost:9000", "[::1]:9000"] {
            assert_eq!(foreign(&headers(Some(ok), None), loopback), None, "{ok}");
        }
        for bad in [
            "evil.example:9000",
            "127.0.0.1:9001",
            "127.0.0.1",
            "user@127.0.0.1:9000",
            "127.0.0.2:9000",
        ] {
            assert_eq!(
                foreign(&headers(Some(bad), None), loopback),
                Some(Foreign::Host),
                "{bad}"
            );
        }
        assert_eq!(foreign(&headers(None, None), loopback), Some(Foreign::Host));
        let remote: SocketAddr = "10.0.0.5:9000".parse().unwrap();
        assert_eq!(foreign(&headers(Some("10.0.0.5:9000"), None), remote), None);
        assert_eq!(
            foreign(&headers(Some("localhost:9000"), None), remote),
            Some(Foreign::Host),
            "localhost is another machine's name for itself"
        );
    }

    #[test]
    fn an_origin_must_be_this_server() {
        let at: SocketAddr = "127.0.0.1:9000".parse().unwrap();
        let host = Some("127.0.0.1:9000");
        assert_eq!(foreign(&headers(host, Some("http://localhost:9000")), at), None);
        for bad in [
            "https://evil.example",
            "null",
            "http://127.0.0.1:9001",
            "https://127.0.0.1:9000",
        ] {
            assert_eq!(foreign(&headers(host, Some(bad)), at), Some(Foreign::Origin), "{bad}");
        }
    }

    #[test]
    fn a_peer_is_its_ipv4_address_or_its_ipv6_slash_64() {
        let peer = |ip: &str| peer_of(ip.parse().unwrap());
        assert_eq!(
            peer("::ffff:10.0.0.5"),
            peer("10.0.0.5"),
            "a mapped address is the IPv4 one"
        );
        assert_ne!(peer("10.0.0.5"), peer("10.0.0.6"));
        assert_eq!(peer("2001:db8:1:2::1"), peer("2001:db8:1:2:ffff::9"), "one host's /64");
        assert_ne!(peer("2001:db8:1:2::1"), peer("2001:db8:1:3::1"));
    }
}
