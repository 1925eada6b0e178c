//! Sending one operation: building the request of the binding in use (the wire adapters in `wire`
//! say how it looks), what every request carries (version, extensions, credential), the statuses
//! every call shares (redirect, refusal, rate limit), and decoding a reply or an SSE stream. gRPC
//! (`grpc`) carries the same headers as metadata.

use std::sync::atomic::Ordering;

use futures::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use super::destination::redirected;
use super::http::{BODY_LIMIT, ERROR_BODY_LIMIT, read_body};
use super::{Client, EventStream};
use crate::a2a::auth::Secret;
use crate::a2a::card::ProtocolVersion;
use crate::a2a::error::{Error, Result};
use crate::a2a::grpc;
use crate::a2a::sse;
use crate::a2a::wire::{self, Call, WireRequest};

/// How requests reach the endpoint: JSON over HTTP (reqwest), or gRPC with its connections.
#[derive(Debug)]
pub(super) enum Transport {
    Http(Json),
    Grpc(Box<grpc::Link>),
}

/// The two bindings that are JSON over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Json {
    Rpc,
    Rest,
}

/// What `Client::carried` puts on a request.
struct Carried {
    headers: HeaderMap,
    /// A credential the card wants in the query string: its parameter name and the secret.
    query: Option<(String, Secret)>,
}

impl Client {
    fn wire_request(&self, call: &Call<'_>, json: Json, subscribe_method: Method) -> Result<WireRequest> {
        match json {
            Json::Rpc => wire::jsonrpc::request(
                call,
                self.endpoint.version,
                self.next_id.fetch_add(1, Ordering::Relaxed),
            ),
            Json::Rest => Ok(wire::rest::request(call, subscribe_method)),
        }
    }

    fn build(&self, call: &Call<'_>, json: Json, subscribe_method: Method) -> Result<reqwest::RequestBuilder> {
        let wire = self.wire_request(call, json, subscribe_method)?;
        let mut url = self.endpoint.url.clone();
        if !wire.path.is_empty() {
            let joined = format!("{}{}", url.path().trim_end_matches('/'), wire.path);
            url.set_path(&joined);
        }
        if !wire.query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(wire.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        let carried = self.carried(call)?;
        let mut req = self.http.request(wire.method, url).headers(carried.headers);
        if let Some((name, token)) = carried.query {
            req = req.query(&[(name.as_str(), token.expose())]);
        }
        let content_type = match json {
            Json::Rpc => "application/json",
            Json::Rest => "application/a2a+json",
        };
        req = req.header(
            "Accept",
            if call.is_streaming() {
                "text/event-stream"
            } else {
                "application/json, application/a2a+json"
            },
        );
        if let Some(body) = wire.body {
            req = req.header(CONTENT_TYPE, content_type).body(body.to_string());
        }
        if !call.is_streaming() {
            req = req.timeout(self.request_timeout);
        }
        Ok(req)
    }

    /// What a request carries on any binding (as gRPC metadata too, spec section 10.2): the extra
    /// headers, the version, the extensions and the credential; a credential the card wants in the
    /// query is handed back apart.
    fn carried(&self, call: &Call<'_>) -> Result<Carried> {
        // Read once: a refresh landing between the destination check and the send must not put
        // a credential on a request the check let through without one.
        let token = self.credential();
        let extra = self.extra_headers();
        self.check_destination(token.is_some() || extra.is_some())?;
        let mut headers = extra.cloned().unwrap_or_default();
        // MUST on every request (spec section 3.6.1); a missing header means 0.3 (section 3.6.2).
        headers.append("a2a-version", HeaderValue::from_static(self.endpoint.version.label()));
        let extensions = self.requested_extensions(call).join(", ");
        if !extensions.is_empty() {
            let value = HeaderValue::try_from(&extensions).map_err(|_| {
                Error::Input(format!(
                    "extension URIs \"{}\" are not a valid header value",
                    crate::text::one_line(&extensions)
                ))
            })?;
            if self.endpoint.version == ProtocolVersion::V0_3 {
                headers.append("x-a2a-extensions", value.clone());
            }
            headers.append("a2a-extensions", value);
        }
        let query = match token {
            Some(token) => self.place_credential(token, &mut headers)?,
            None => None,
        };
        Ok(Carried { headers, query })
    }

    /// Extensions to activate with `A2A-Extensions` (spec section 4.6): those the message names,
    /// and interactions/v1 on every request that can return a task, so servers attach the
    /// structured interaction. Only extensions the card declares: others are never requested.
    fn requested_extensions<'a>(&'a self, call: &Call<'a>) -> Vec<&'a str> {
        let mut uris: Vec<&str> = match call {
            Call::SendMessage(r) | Call::SendStreamingMessage(r) => {
                r.message.extensions.iter().map(String::as_str).collect()
            }
            _ => Vec::new(),
        };
        uris.push(crate::a2a::INTERACTIONS_EXTENSION);
        let mut seen = std::collections::HashSet::new();
        uris.retain(|uri| self.card.declares_extension(uri) && seen.insert(*uri));
        uris
    }

    /// A call as errors name it.
    fn what(&self, call: &Call<'_>) -> String {
        format!("{} on {}", call.name(), self.name)
    }

    pub(super) async fn send(&self, call: &Call<'_>, json: Json) -> Result<reqwest::Response> {
        let what = self.what(call);
        let mut resp = self
            .build(call, json, Method::POST)?
            .send()
            .await
            .map_err(|e| Error::transport(&what, e))?;
        if matches!(call, Call::SubscribeToTask(_))
            && json == Json::Rest
            && resp.status() == StatusCode::METHOD_NOT_ALLOWED
        {
            resp = self
                .build(call, json, Method::GET)?
                .send()
                .await
                .map_err(|e| Error::transport(&what, e))?;
        }
        if let Some(e) = redirected(&resp, &what) {
            return Err(e);
        }
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let challenge = resp
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    let scheme = v.split_whitespace().next().unwrap_or(v);
                    format!("{scheme} (from the server's WWW-Authenticate)")
                });
            return Err(self.unauthorized(status.as_u16(), challenge));
        }
        // Overloaded or rate limited, for every call and either binding: the caller waits as
        // long as the server asks (RFC 9110 section 10.2.3), whatever the body says.
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| crate::a2a::error::parse_retry_after(v, jiff::Timestamp::now()));
            let body = read_body(resp, call.name(), ERROR_BODY_LIMIT).await.unwrap_or_default();
            return Err(Error::Http {
                status: status.as_u16(),
                what: what.clone(),
                excerpt: crate::a2a::error::first_line(&body),
                retry_after,
            });
        }
        Ok(resp)
    }

    /// A gRPC call's metadata, from what every request carries, and how to read a refusal: a
    /// refused credential reads as it does over HTTP, in a stream too.
    fn grpc_request(&self, call: &Call<'_>, limit: usize) -> Result<grpc::Request> {
        let carried = self.carried(call)?;
        if carried.query.is_some() {
            return Err(Error::Input(format!(
                "{}'s card asks for the credential in the URL's query, which gRPC has no place for",
                crate::text::one_line(&self.name)
            )));
        }
        let refused = self.refused(None);
        Ok(grpc::Request {
            metadata: tonic::metadata::MetadataMap::from_headers(carried.headers),
            refusal: grpc::Refusal {
                what: self.what(call),
                limit,
                streaming: call.is_streaming(),
                unauthorized: Box::new(move |status| refused.at(status)),
            },
        })
    }

    pub(super) async fn unary<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T> {
        let json = match &self.transport {
            Transport::Grpc(link) => {
                let req = self.grpc_request(&call, BODY_LIMIT)?;
                return grpc::unary(link, &call, req, self.request_timeout).await;
            }
            Transport::Http(json) => *json,
        };
        let resp = self.send(&call, json).await?;
        let status = resp.status().as_u16();
        let body = read_body(resp, call.name(), BODY_LIMIT).await?;
        match json {
            Json::Rpc if !(200..300).contains(&status) => Err(jsonrpc_failure(status, call.name(), &body)),
            Json::Rpc => wire::jsonrpc::decode(call.name(), &body),
            Json::Rest => wire::rest::decode(call.name(), status, &body),
        }
    }

    pub(super) async fn stream(&self, call: Call<'_>) -> Result<EventStream> {
        let json = match &self.transport {
            Transport::Grpc(link) => {
                let req = self.grpc_request(&call, self.frame_limit)?;
                return Ok(Box::pin(grpc::stream(link, &call, req).await?));
            }
            Transport::Http(json) => *json,
        };
        let resp = self.send(&call, json).await?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if !is_sse {
            // An error raised before the stream starts is a plain JSON reply
            // (docs/protocol-notes.md, "Errors").
            let body = read_body(resp, call.name(), BODY_LIMIT).await?;
            let err = match json {
                Json::Rpc if !(200..300).contains(&status) => Some(jsonrpc_failure(status, call.name(), &body)),
                Json::Rpc => wire::jsonrpc::decode::<serde_json::Value>(call.name(), &body).err(),
                Json::Rest => Some(wire::rest::error_from_body(status, call.name(), &body)),
            };
            return Err(err.unwrap_or_else(|| Error::Http {
                status,
                what: format!("{} (expected an event stream)", call.name()),
                excerpt: crate::a2a::error::excerpt(&body),
                retry_after: None,
            }));
        }
        let decode = match json {
            Json::Rpc => wire::jsonrpc::decode_frame,
            Json::Rest => wire::rest::decode_frame,
        };
        // A frame that does not decode is reported and skipped; the stream goes on.
        let events =
            sse::frames(resp.bytes_stream(), self.frame_limit).map(move |frame| frame.and_then(|f| decode(&f)));
        Ok(Box::pin(events))
    }

    /// A call whose reply is empty (DeleteTaskPushNotificationConfig): over HTTP, the body is read
    /// only far enough to quote an error.
    pub(super) async fn unary_empty(&self, call: Call<'_>) -> Result<()> {
        let json = match &self.transport {
            // The reply is google.protobuf.Empty (spec section 10.4.10).
            Transport::Grpc(_) => return self.unary::<serde_json::Value>(call).await.map(drop),
            Transport::Http(json) => *json,
        };
        let resp = self.send(&call, json).await?;
        let status = resp.status().as_u16();
        let body = read_body(resp, call.name(), ERROR_BODY_LIMIT).await?;
        match (json, (200..300).contains(&status)) {
            (Json::Rpc, false) => Err(jsonrpc_failure(status, call.name(), &body)),
            (Json::Rpc, true) => wire::jsonrpc::decode_empty(call.name(), &body),
            (Json::Rest, false) => Err(wire::rest::error_from_body(status, call.name(), &body)),
            (Json::Rest, true) => Ok(()),
        }
    }
}

/// A JSON-RPC reply with a non-2xx status: the agent's error if the body is a JSON-RPC error,
/// otherwise the status and what a proxy or framework put in the body, never a decode error.
fn jsonrpc_failure(status: u16, what: &str, body: &[u8]) -> Error {
    match wire::jsonrpc::decode::<serde_json::Value>(what, body) {
        Err(e @ Error::Agent { .. }) => e,
        _ => Error::Http {
            status,
            what: what.to_string(),
            excerpt: crate::a2a::error::first_line(body),
            retry_after: None,
        },
    }
}
