//! The HTTP stack every client shares (timeouts, the system proxy but never for loopback, the
//! same-origin redirect policy) and reading a reply with a size limit.

use std::time::Duration;

use futures::StreamExt;
use url::Url;

use super::destination::same_origin_redirects;
use crate::a2a::auth;
use crate::a2a::error::{Error, Result};

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

/// Bodies larger than this are refused rather than held in memory.
pub(super) const BODY_LIMIT: usize = 64 * 1024 * 1024;
/// An error reply is read only far enough to quote its first line.
pub(super) const ERROR_BODY_LIMIT: usize = 64 * 1024;

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
