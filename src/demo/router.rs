//! The HTTP surface of one demo agent: the public card and approval page (approval_page.rs), and
//! the two A2A bindings behind the guards its card calls for.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use axum::http::header::{ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::Value;

use super::approval_page;
use super::error::to_json;
use super::guard::{self, Bearer};
use super::jsonrpc;
use super::rest;
use super::service::Agent;

pub fn router(agent: Arc<Agent>, token: &str) -> Router {
    let card = &agent.card;
    let mut a2a = Router::new()
        .route("/", post(jsonrpc::handle))
        .route("/rest/{*path}", any(rest::handle));
    let declared: Vec<String> = card.capabilities.extensions.iter().map(|e| e.uri.clone()).collect();
    if !declared.is_empty() {
        a2a = a2a.layer(from_fn_with_state(Arc::new(declared), guard::echo_extensions));
    }
    // The guard follows the card: an agent that asks for a credential checks it (spec §7.4).
    if !card.security_requirements.is_empty() {
        let bearer = Bearer {
            token: token.into(),
            realm: card.name.clone(),
        };
        a2a = a2a.layer(from_fn_with_state(Arc::new(bearer), guard::require_bearer));
    }
    let card = Arc::new(CardDocument::new(to_json(card).unwrap_or(Value::Null)));
    Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move |headers: HeaderMap| async move { card.reply(&headers) }),
        )
        .route(
            "/approve/{task_id}",
            get(approval_page::show)
                .post(approval_page::approve)
                .route_layer(axum::middleware::from_fn(approval_page::same_site)),
        )
        .merge(a2a)
        .with_state(agent)
}

/// The card with a weak ETag, so clients can revalidate with If-None-Match (spec §8.6).
struct CardDocument {
    body: Value,
    etag: String,
}

impl CardDocument {
    fn new(body: Value) -> CardDocument {
        let mut hasher = DefaultHasher::new();
        body.to_string().hash(&mut hasher);
        CardDocument {
            etag: format!("W/\"{:016x}\"", hasher.finish()),
            body,
        }
    }

    fn reply(&self, headers: &HeaderMap) -> Response {
        let fresh = headers
            .get(IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|tags| tags.split(',').any(|t| t.trim() == self.etag || t.trim() == "*"));
        let mut response = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            Json(self.body.clone()).into_response()
        };
        if let Ok(etag) = HeaderValue::from_str(&self.etag) {
            response.headers_mut().insert(ETAG, etag);
        }
        response
    }
}
