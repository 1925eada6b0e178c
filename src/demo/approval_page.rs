//! The deployer's approval link (`/approve/<task id>`), outside A2A and unauthenticated like the
//! example it plays (docs/protocol-notes.md, "Authorization"; spec §7.6.1). In a browser, GET
//! shows what is to be approved with an Approve button, and the button's POST approves and says
//! so. A script's POST (one that does not ask for HTML) keeps its JSON answer.
//!
//! A GET never approves. A request whose `Origin` is another site's is refused, so a page
//! elsewhere cannot approve through the operator's browser (scripts send no `Origin` and are not
//! affected), and so is one whose `Host` is not this agent's address, so a page whose name was
//! rebound to it (DNS rebinding) cannot either: the local servers' one rule (`local_server`).
//! The page is self-contained (no script, no external asset) and every value in it is task text,
//! which is hostile: sanitized, then escaped.

use std::sync::Arc;

use axum::Json;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::header::{ACCEPT, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::service::Agent;
use crate::a2a::{Message, Role, Task};
use crate::local_server::{self, ConnectedTo};

/// Inline style only; forms post back here only; no framing (a click cannot be borrowed).
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

const APPROVE_BUTTON: &str = "<form method=\"post\"><button type=\"submit\">Approve</button></form>";

const STYLE: &str = "body{font-family:sans-serif;max-width:40em;margin:2em auto;padding:0 1em}\
dt{font-weight:bold;margin-top:.6em}dd{margin-left:0;overflow-wrap:anywhere}\
button{font-size:1.1em;padding:.4em 1.4em}";

pub async fn show(State(agent): State<Arc<Agent>>, Path(task_id): Path<String>) -> Response {
    let name = &agent.card.name;
    match agent.approval(&task_id) {
        Err(_) => unknown(&task_id),
        Ok((task, true)) => task_page(
            StatusCode::OK,
            "Approve this request?",
            "The agent waits for an operator's approval before it goes on.",
            name,
            &task,
            &format!("{}{APPROVE_BUTTON}", where_it_stands(&task)),
        ),
        Ok((task, false)) => task_page(
            StatusCode::OK,
            "Nothing to approve",
            "This task is not waiting for an approval at this link.",
            name,
            &task,
            &where_it_stands(&task),
        ),
    }
}

pub async fn approve(State(agent): State<Arc<Agent>>, Path(task_id): Path<String>, headers: HeaderMap) -> Response {
    let approved = agent.approve(&task_id);
    if !wants_html(&headers) {
        return if approved {
            Json(json!({"taskId": task_id, "approved": true})).into_response()
        } else {
            let body = json!({"error": format!("no task {task_id} waits for approval")});
            (StatusCode::NOT_FOUND, Json(body)).into_response()
        };
    }
    let name = &agent.card.name;
    match agent.approval(&task_id) {
        Err(_) => unknown(&task_id),
        // Its state is not shown: the resumed turn may not have taken its first step yet.
        Ok((task, _)) if approved => task_page(
            StatusCode::OK,
            "Approved",
            "The agent goes on with this task.",
            name,
            &task,
            "",
        ),
        // Approved already, or waiting for something else: this approval changes nothing.
        Ok((task, _)) => task_page(
            StatusCode::CONFLICT,
            "Not approved",
            "This task is no longer waiting for an approval at this link.",
            name,
            &task,
            &where_it_stands(&task),
        ),
    }
}

fn unknown(task_id: &str) -> Response {
    let body = format!("<h1>No such task</h1><p>This agent has no task {}.</p>", html(task_id));
    page(StatusCode::NOT_FOUND, "No such task", &body)
}

/// A page about one task: what the operator approves (the agent, the task, the request that
/// opened it), then `more`.
fn task_page(status: StatusCode, heading: &str, note: &str, agent: &str, task: &Task, more: &str) -> Response {
    let request = task
        .history
        .iter()
        .find(|m| m.role == Role::User)
        .map(Message::text)
        .unwrap_or_default();
    let body = format!(
        "<h1>{heading}</h1><p>{note}</p><dl><dt>Agent</dt><dd>{}</dd><dt>Task</dt><dd><code>{}</code></dd>\
         <dt>Request</dt><dd>{}</dd></dl>{more}",
        html(agent),
        html(&task.id),
        html(&request),
    );
    page(status, heading, &body)
}

/// The task's state and what the agent says now.
fn where_it_stands(task: &Task) -> String {
    format!(
        "<dl><dt>State</dt><dd>{}</dd><dt>The agent says</dt><dd>{}</dd></dl>",
        html(task.status.state.short_name()),
        html(&task.status.text()),
    )
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let document = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>{STYLE}</style></head><body>{body}</body></html>"
    );
    let headers = [
        (CONTENT_TYPE, "text/html; charset=utf-8"),
        (CONTENT_SECURITY_POLICY, POLICY),
        (CACHE_CONTROL, "no-store"),
    ];
    (status, headers, document).into_response()
}

/// Agent text for HTML: controls and bidi overrides removed, then escaped.
fn html(text: &str) -> String {
    let mut out = String::new();
    crate::text::escape_xml(&crate::text::sanitize(text), &mut out);
    out
}

/// A browser's form submission asks for HTML; scripts (curl, reqwest, the TUI) do not.
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// Before either page: a request from another site's page, or for another name than this
/// agent's address, is refused (403).
pub async fn same_site(
    ConnectInfo(ConnectedTo(local)): ConnectInfo<ConnectedTo>,
    request: Request,
    next: Next,
) -> Response {
    let Some(foreign) = local_server::foreign(request.headers(), local) else {
        return next.run(request).await;
    };
    let body = format!(
        "<h1>Refused</h1><p>An approval must come from this agent's own approval page: {}.</p>",
        foreign.reason()
    );
    page(StatusCode::FORBIDDEN, "Refused", &body)
}
