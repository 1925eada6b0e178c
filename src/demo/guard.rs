//! What every A2A request passes before any operation runs: the bearer check where the card asks
//! for one (spec §7.4), the protocol version (spec §3.6), and the echo of activated extensions.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::{ApiError, ApiResult};
use crate::a2a::ErrorKind;

const VERSION_HEADER: &str = "A2A-Version";
const EXTENSIONS_HEADER: &str = "A2A-Extensions";

/// Major version 1 is spoken ("1", "1.0", "1.1"), as a2a-python compares it. A request without
/// the header is a 0.3 request (spec §3.6.2); the header may also come as a query parameter.
pub fn check_version(headers: &HeaderMap, query: Option<&str>) -> ApiResult<()> {
    let from_query = || {
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .find(|(k, _)| k == VERSION_HEADER)
            .map(|(_, v)| v.into_owned())
    };
    let version = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(from_query)
        .unwrap_or_else(|| "0.3".into());
    let version = version.trim();
    if version.split('.').next() == Some("1") {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::VersionNotSupported,
        format!("A2A version '{version}' is not supported by this agent. Expected version '1.0'."),
    ))
}

pub struct Bearer {
    pub token: String,
    pub realm: String,
}

/// HTTP 401 with a challenge before any A2A processing, as the SDKs' middleware does
/// (docs/protocol-notes.md, "Authorization"; RFC 6750 `invalid_token` when a wrong token was sent).
pub async fn require_bearer(State(bearer): State<Arc<Bearer>>, request: Request, next: Next) -> Response {
    let sent = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| match v.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => "",
        });
    if sent == Some(bearer.token.as_str()) {
        return next.run(request).await;
    }
    let mut challenge = format!("Bearer realm=\"{}\"", bearer.realm);
    if sent.is_some() {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let body = json!({"error": {"code": 401, "status": "UNAUTHENTICATED",
        "message": "missing or invalid bearer token"}});
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// Echoes the requested extensions this agent declares (topics/extensions.md: the server SHOULD
/// list the ones it activated).
pub async fn echo_extensions(State(declared): State<Arc<Vec<String>>>, request: Request, next: Next) -> Response {
    let active: Vec<String> = request
        .headers()
        .get_all(EXTENSIONS_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|uri| declared.iter().any(|d| d == uri))
        .map(str::to_string)
        .collect();
    let mut response = next.run(request).await;
    if !active.is_empty()
        && let Ok(value) = HeaderValue::from_str(&active.join(", "))
    {
        response.headers_mut().insert(EXTENSIONS_HEADER, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(version: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(VERSION_HEADER, HeaderValue::from_str(version).unwrap());
        headers
    }

    #[test]
    fn major_one_passes_and_a_missing_header_is_0_3() {
        assert!(check_version(&with("1.0"), None).is_ok());
        assert!(check_version(&with("1.1"), None).is_ok());
        assert!(check_version(&HeaderMap::new(), Some("A2A-Version=1.0")).is_ok());
        let missing = check_version(&HeaderMap::new(), None).unwrap_err();
        assert_eq!(missing.kind, ErrorKind::VersionNotSupported);
        assert!(missing.message.contains("'0.3'"));
        assert!(check_version(&with("2.0"), None).is_err());
        assert!(check_version(&with("10"), None).is_err());
    }
}
