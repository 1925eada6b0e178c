//! One error type for everything the client can meet (spec sections 9.5, 11.6;
//! docs/protocol-notes.md, "Errors"). Agent errors are classified by JSON-RPC code or REST
//! ErrorInfo reason, never by message.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use super::auth::TokenSource;

/// The A2A error kinds (spec section 5.4) and the JSON-RPC standard ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    TaskNotFound,
    TaskNotCancelable,
    PushNotificationNotSupported,
    UnsupportedOperation,
    ContentTypeNotSupported,
    InvalidAgentResponse,
    ExtendedAgentCardNotConfigured,
    ExtensionSupportRequired,
    VersionNotSupported,
    JsonParse,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    Internal,
    /// A code or reason we do not know (server-defined, spec section 9.5).
    Other,
}

const KINDS: [(ErrorKind, i64, &str, &str); 14] = [
    (ErrorKind::TaskNotFound, -32001, "TASK_NOT_FOUND", "TaskNotFoundError"),
    (
        ErrorKind::TaskNotCancelable,
        -32002,
        "TASK_NOT_CANCELABLE",
        "TaskNotCancelableError",
    ),
    (
        ErrorKind::PushNotificationNotSupported,
        -32003,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "PushNotificationNotSupportedError",
    ),
    (
        ErrorKind::UnsupportedOperation,
        -32004,
        "UNSUPPORTED_OPERATION",
        "UnsupportedOperationError",
    ),
    (
        ErrorKind::ContentTypeNotSupported,
        -32005,
        "CONTENT_TYPE_NOT_SUPPORTED",
        "ContentTypeNotSupportedError",
    ),
    (
        ErrorKind::InvalidAgentResponse,
        -32006,
        "INVALID_AGENT_RESPONSE",
        "InvalidAgentResponseError",
    ),
    (
        ErrorKind::ExtendedAgentCardNotConfigured,
        -32007,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        "ExtendedAgentCardNotConfiguredError",
    ),
    (
        ErrorKind::ExtensionSupportRequired,
        -32008,
        "EXTENSION_SUPPORT_REQUIRED",
        "ExtensionSupportRequiredError",
    ),
    (
        ErrorKind::VersionNotSupported,
        -32009,
        "VERSION_NOT_SUPPORTED",
        "VersionNotSupportedError",
    ),
    (ErrorKind::JsonParse, -32700, "PARSE_ERROR", "JSONParseError"),
    (
        ErrorKind::InvalidRequest,
        -32600,
        "INVALID_REQUEST",
        "InvalidRequestError",
    ),
    (
        ErrorKind::MethodNotFound,
        -32601,
        "METHOD_NOT_FOUND",
        "MethodNotFoundError",
    ),
    (ErrorKind::InvalidParams, -32602, "INVALID_PARAMS", "InvalidParamsError"),
    (ErrorKind::Internal, -32603, "INTERNAL_ERROR", "InternalError"),
];

impl ErrorKind {
    pub fn from_code(code: i64) -> ErrorKind {
        KINDS.iter().find(|k| k.1 == code).map_or(ErrorKind::Other, |k| k.0)
    }

    pub fn from_reason(reason: &str) -> ErrorKind {
        KINDS.iter().find(|k| k.2 == reason).map_or(ErrorKind::Other, |k| k.0)
    }

    fn entry(self) -> Option<&'static (ErrorKind, i64, &'static str, &'static str)> {
        KINDS.iter().find(|k| k.0 == self)
    }

    pub fn code(self) -> i64 {
        self.entry().map_or(-32000, |k| k.1)
    }

    /// The ErrorInfo reason (spec section 11.6).
    pub fn reason(self) -> &'static str {
        self.entry().map_or("UNKNOWN", |k| k.2)
    }

    pub fn name(self) -> &'static str {
        self.entry().map_or("AgentError", |k| k.3)
    }

    /// REST status for this kind (the v1.0.1 mapping, spec section 11.6; docs/protocol-notes.md,
    /// "Errors").
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::TaskNotFound | ErrorKind::MethodNotFound => 404,
            ErrorKind::InvalidAgentResponse | ErrorKind::Internal | ErrorKind::Other => 500,
            _ => 400,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The agent answered with an A2A or JSON-RPC error.
    #[error("{kind} ({code}): {message}")]
    Agent {
        kind: ErrorKind,
        code: i64,
        message: String,
    },

    /// HTTP 401/403. Says what the card asks for, how the credential was sent and from which
    /// setting, and what would help: `env_var` is `A2A_TOKEN_<NAME>` for the name the user gave,
    /// `None` when the user gave none (the card's name never selects a credential).
    #[error("{}", unauthorized_message(*status, agent, asks_for.as_deref(), env_var.as_deref(), sent_as.as_deref(), sent_from.as_deref(), *shared_applies))]
    Unauthorized {
        status: u16,
        agent: String,
        asks_for: Option<String>,
        env_var: Option<String>,
        /// How the refused credential was sent (`a Bearer token`, `HTTP Basic`, ...); `None` if none was.
        sent_as: Option<String>,
        /// The setting the refused credential came from; `None` if none was sent.
        sent_from: Option<Box<TokenSource>>,
        /// Would a shared token (`A2A_TOKEN`, a dashboard-wide `--token`) go on this request? Not
        /// on the card request, nor where the card asks for nothing we can send.
        shared_applies: bool,
    },

    /// A redirect to another origin: not followed, so no credential goes there.
    #[error("{what} was redirected to {to}, another origin; not followed, so no credential goes there")]
    Redirected { what: String, to: String },

    /// A request refused before it was sent, because a credential would go where it must not.
    #[error("{agent}: nothing sent: {reason}")]
    Withheld { agent: String, reason: String },

    /// Connect, TLS, timeout, reset. The URL is stripped from the source so query keys cannot leak.
    #[error("{what}: {}", transport_cause(source))]
    Transport { what: String, source: reqwest::Error },

    /// A non-success HTTP status without an A2A error body; 429 and 503 always land here, with
    /// the server's `Retry-After` (RFC 9110 section 10.2.3) when it sent one.
    #[error("HTTP {status} from {what}: {excerpt}{}", retry_note(*retry_after))]
    Http {
        status: u16,
        what: String,
        excerpt: String,
        retry_after: Option<Duration>,
    },

    #[error("the {what} reply is over {limit} bytes; refused")]
    BodyTooLarge { what: String, limit: usize },

    #[error("cannot decode {what}: {source}; received: {excerpt}")]
    Decode {
        what: String,
        excerpt: String,
        source: serde_json::Error,
    },

    /// A gRPC call that did not reach the agent or was cut off (UNAVAILABLE, DEADLINE_EXCEEDED,
    /// CANCELLED without an A2A reason): what `Transport` is for the HTTP bindings.
    #[error("{what}: {cause}")]
    Unreachable { what: String, cause: String },

    #[error("a stream frame over {limit} bytes was refused")]
    FrameTooLarge { limit: usize },

    #[error("stream broke: {0}")]
    Stream(String),

    /// A streamed send the agent did not take: its stream opened with an error, with a frame
    /// that does not decode, or ended with no event. A refusal is a failure, never a success.
    #[error("{agent}: the message was not taken: {cause}")]
    Refused { agent: String, cause: String },

    #[error(
        "the card offers no interface we speak (offered: {offered}); we speak JSONRPC 1.0/0.3, HTTP+JSON 1.0 and GRPC 1.0"
    )]
    NoInterface { offered: String },

    #[error("{operation} does not exist in A2A {version}")]
    NotInVersion {
        operation: &'static str,
        version: &'static str,
    },

    #[error("no agent card found; tried {tried}: {last}")]
    CardNotFound { tried: String, last: String },

    /// A card file that cannot be read.
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },

    /// What the caller gave the client (a URL, a header, a credential) cannot be used; nothing
    /// was sent.
    #[error("{0}")]
    Input(String),
}

impl Error {
    /// What kind of failure this is, in a few values (OpenTelemetry's `error.type`, issue 22):
    /// the A2A error's name (spec section 5.4), the HTTP status, or a word; never a message.
    pub fn error_type(&self) -> String {
        let word = match self {
            Error::Agent { kind, .. } => kind.name(),
            Error::Unauthorized { status, .. } | Error::Http { status, .. } => return status.to_string(),
            Error::Transport { source, .. } if source.is_timeout() => "timeout",
            Error::Transport { .. } | Error::Unreachable { .. } => "unreachable",
            Error::Redirected { .. } => "redirected",
            Error::Withheld { .. } => "withheld",
            Error::BodyTooLarge { .. } | Error::FrameTooLarge { .. } => "too_large",
            Error::Decode { .. } => "decode",
            Error::Stream(_) => "stream",
            Error::Refused { .. } => "refused",
            Error::NoInterface { .. } | Error::NotInVersion { .. } => "unsupported",
            Error::CardNotFound { .. } => "card_not_found",
            Error::Io { .. } => "io",
            Error::Input(_) => "input",
        };
        word.to_string()
    }
}

/// A 401/403 in words, with advice that can work: a setting that would be read, on a request
/// that would carry it.
fn unauthorized_message(
    status: u16,
    agent: &str,
    asks_for: Option<&str>,
    env_var: Option<&str>,
    sent_as: Option<&str>,
    sent_from: Option<&TokenSource>,
    shared_applies: bool,
) -> String {
    let what = if status == 403 { "forbidden" } else { "unauthorized" };
    let asks = asks_for.map(|a| format!(" the card asks for {a};")).unwrap_or_default();
    let sent = match (sent_as, sent_from) {
        (Some(how), Some(from)) => format!(
            " the credential sent ({how}) was refused; it came from {};",
            from.describe()
        ),
        (Some(how), None) => format!(" the credential sent ({how}) was refused;"),
        (None, _) => " no credential was sent;".to_string(),
    };
    // A token for this agent alone: read whatever the card asks, the card request included.
    let own = match env_var {
        Some(var) => format!("set {var}"),
        None => "name the agent (--agent NAME=URL, --name NAME, or name in the config) and set \
                 A2A_TOKEN_<NAME>"
            .to_string(),
    };
    let knob = match sent_from {
        // Given for this agent, it is used instead of any variable: only fixing it helps.
        Some(explicit @ TokenSource::Explicit(_)) => format!(
            "fix {} (while it is given, no A2A_TOKEN variable is read)",
            explicit.describe()
        ),
        Some(TokenSource::AgentEnv(var)) => format!("put a token that works in {var}"),
        Some(shared @ (TokenSource::SharedEnv | TokenSource::SharedFlag)) => {
            format!(
                "{} is offered to every agent that asks; give this one its own: {own}",
                shared.describe()
            )
        }
        None if shared_applies => format!("{own}, or set A2A_TOKEN"),
        None => own,
    };
    format!("{agent}: HTTP {status} {what}:{asks}{sent} {knob}")
}

fn retry_note(retry_after: Option<Duration>) -> String {
    retry_after.map_or_else(String::new, |d| format!(" (retry after {} s)", d.as_secs()))
}

/// The longest `Retry-After` taken as given: a hostile or broken server cannot park a watcher.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(3600);

/// A `Retry-After` value: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3), capped.
pub fn parse_retry_after(value: &str, now: jiff::Timestamp) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => {
            let at = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
            Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.min(RETRY_AFTER_MAX))
}

fn transport_cause(e: &reqwest::Error) -> String {
    // reqwest's Display is generic ("error sending request"); the useful part is the innermost cause.
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let inner = cause.to_string();
    if inner == e.to_string() {
        kind.to_string()
    } else {
        format!("{kind} ({inner})")
    }
}

impl Error {
    pub fn transport(what: impl Into<String>, source: reqwest::Error) -> Error {
        Error::Transport {
            what: what.into(),
            source: source.without_url(),
        }
    }

    pub fn decode(what: impl Into<String>, body: &[u8], source: serde_json::Error) -> Error {
        Error::Decode {
            what: what.into(),
            excerpt: excerpt(body),
            source,
        }
    }

    /// The A2A kind, when the agent said one.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Error::Agent { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    pub fn is_kind(&self, kind: ErrorKind) -> bool {
        self.kind() == Some(kind)
    }

    /// How long the server asked us to wait before trying again (429/503 with `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Could trying again later help? (Unreachable, timeouts, 5xx; not auth, not usage.)
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Transport { .. } | Error::Unreachable { .. } | Error::Stream(_) => true,
            Error::Http { status, .. } => *status >= 500 || *status == 429,
            Error::Agent { kind, .. } => matches!(kind, ErrorKind::Internal | ErrorKind::Other),
            _ => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The first ~200 characters of a body, control characters made visible, for error messages.
pub fn excerpt(body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(body);
    let mut out: String = text
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let total = text.chars().count();
    if total > MAX {
        out.push_str(&format!("… ({} bytes)", body.len()));
    }
    if out.trim().is_empty() {
        "(empty body)".into()
    } else {
        out
    }
}

/// The first non-blank line of a body, sanitised and short: what a proxy's error page says.
pub fn first_line(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line = text.lines().map(crate::text::one_line).find(|l| !l.is_empty());
    match line {
        Some(l) if l.chars().count() > 200 => format!("{}…", l.chars().take(200).collect::<String>()),
        Some(l) => l,
        None => "(empty body)".into(),
    }
}

/// A JSON-RPC error object, or the `error` of a REST google.rpc.Status body.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct WireError {
    #[serde(default)]
    pub code: Option<Value>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub data: Option<Value>,
    #[serde(default)]
    pub details: Option<Value>,
    #[serde(default)]
    pub status: Option<Value>,
}

impl WireError {
    fn reason(&self) -> Option<String> {
        let details = self.details.as_ref().or(self.data.as_ref())?;
        let list = details.as_array().cloned().unwrap_or_else(|| vec![details.clone()]);
        list.iter()
            .find_map(|d| d.get("reason").and_then(Value::as_str).map(str::to_string))
    }

    /// JSON-RPC: classify by `code` (spec section 9.5).
    pub fn into_jsonrpc_error(self) -> Error {
        let code = self.code.as_ref().and_then(Value::as_f64).map_or(-32603, |c| c as i64);
        let kind = match ErrorKind::from_code(code) {
            ErrorKind::Other => self.reason().map_or(ErrorKind::Other, |r| ErrorKind::from_reason(&r)),
            kind => kind,
        };
        Error::Agent {
            kind,
            code,
            message: self.message.unwrap_or_default(),
        }
    }

    /// REST: classify by ErrorInfo `reason` (spec section 11.6), since many kinds share HTTP 400.
    pub fn into_rest_error(self, http_status: u16) -> Error {
        let kind = match self.reason() {
            Some(reason) => ErrorKind::from_reason(&reason),
            // a2a-js 0.3 REST sends JSON-RPC style codes.
            None => self
                .code
                .as_ref()
                .and_then(Value::as_i64)
                .map_or(ErrorKind::Other, ErrorKind::from_code),
        };
        let code = if kind == ErrorKind::Other {
            i64::from(http_status)
        } else {
            kind.code()
        };
        let message = self
            .message
            .or_else(|| self.status.as_ref().and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        Error::Agent { kind, code, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::auth::Given;
    use serde_json::json;

    #[test]
    fn an_error_type_is_a_name_a_status_or_a_word_never_the_message() {
        let agent = Error::Agent {
            kind: ErrorKind::TaskNotCancelable,
            code: -32002,
            message: "secret plans".into(),
        };
        assert_eq!(agent.error_type(), "TaskNotCancelableError");
        let unknown = Error::Agent {
            kind: ErrorKind::Other,
            code: -31000,
            message: "secret plans".into(),
        };
        assert_eq!(unknown.error_type(), "AgentError");
        let http = Error::Http {
            status: 503,
            what: "SendMessage".into(),
            excerpt: "secret plans".into(),
            retry_after: None,
        };
        assert_eq!(http.error_type(), "503");
        let refused = Error::Refused {
            agent: "a".into(),
            cause: "secret plans".into(),
        };
        assert_eq!(refused.error_type(), "refused");
        assert_eq!(Error::Stream("secret plans".into()).error_type(), "stream");
    }

    #[test]
    fn jsonrpc_errors_classify_by_code_then_reason() {
        let e: WireError =
            serde_json::from_value(json!({"code":-32001,"message":"gone","data":[{"reason":"TASK_NOT_FOUND"}]}))
                .unwrap();
        assert!(e.into_jsonrpc_error().is_kind(ErrorKind::TaskNotFound));
        let f: WireError = serde_json::from_value(
            json!({"code":-32050,"message":"custom","data":[{"reason":"UNSUPPORTED_OPERATION"}]}),
        )
        .unwrap();
        assert!(f.into_jsonrpc_error().is_kind(ErrorKind::UnsupportedOperation));
        let g: WireError = serde_json::from_value(json!({"code":-32004.0,"message":"x"})).unwrap();
        assert!(
            g.into_jsonrpc_error().is_kind(ErrorKind::UnsupportedOperation),
            "float codes"
        );
    }

    #[test]
    fn rest_errors_classify_by_reason_not_status() {
        let e: WireError = serde_json::from_value(json!({"code":400,"status":"FAILED_PRECONDITION","message":"done",
            "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}))
        .unwrap();
        let err = e.into_rest_error(400);
        assert!(err.is_kind(ErrorKind::UnsupportedOperation));
        assert_eq!(err.to_string(), "UnsupportedOperationError (-32004): done");
    }

    #[test]
    fn unauthorized_names_the_scheme_and_the_env_var() {
        let e = Error::Unauthorized {
            status: 401,
            agent: "deployer".into(),
            asks_for: Some("bearer (HTTP Bearer)".into()),
            env_var: Some("A2A_TOKEN_DEPLOYER".into()),
            sent_as: None,
            sent_from: None,
            shared_applies: true,
        };
        let msg = e.to_string();
        assert!(
            msg.contains("HTTP Bearer") && msg.contains("A2A_TOKEN_DEPLOYER"),
            "{msg}"
        );
    }

    #[test]
    fn unauthorized_without_a_user_given_name_suggests_naming_the_agent() {
        let e = Error::Unauthorized {
            status: 401,
            agent: "deployer".into(),
            asks_for: Some("key (API key (header X-Key))".into()),
            env_var: None,
            sent_as: Some("an API key in header X-Key".into()),
            sent_from: Some(Box::new(TokenSource::SharedEnv)),
            shared_applies: true,
        };
        let msg = e.to_string();
        assert!(!msg.contains("A2A_TOKEN_DEPLOYER"), "{msg}");
        assert!(
            msg.contains("--agent NAME=URL")
                && msg.contains("--name")
                && msg.contains("(an API key in header X-Key) was refused"),
            "{msg}"
        );
    }

    fn refusal(env_var: Option<&str>, sent_from: Option<TokenSource>, shared_applies: bool) -> String {
        Error::Unauthorized {
            status: 401,
            agent: "ops".into(),
            asks_for: Some("bearer (HTTP Bearer)".into()),
            env_var: env_var.map(str::to_string),
            sent_as: sent_from.as_ref().map(|_| "a Bearer token".to_string()),
            sent_from: sent_from.map(Box::new),
            shared_applies,
        }
        .to_string()
    }

    #[test]
    fn a_request_that_never_carries_a_shared_token_does_not_suggest_one() {
        // The card request, or a card that asks for nothing we can send.
        let msg = refusal(Some("A2A_TOKEN_OPS"), None, false);
        assert!(
            msg.contains("set A2A_TOKEN_OPS") && !msg.contains("A2A_TOKEN)") && !msg.contains("or set A2A_TOKEN"),
            "{msg}"
        );
        let unnamed = refusal(None, None, false);
        assert!(
            unnamed.contains("A2A_TOKEN_<NAME>") && !unnamed.contains("or set A2A_TOKEN"),
            "{unnamed}"
        );
        let asks = refusal(Some("A2A_TOKEN_OPS"), None, true);
        assert!(asks.contains("set A2A_TOKEN_OPS, or set A2A_TOKEN"), "{asks}");
    }

    #[test]
    fn a_refused_explicit_credential_is_named_and_no_variable_is_suggested() {
        for (given, named) in [
            (Given::Flag, "--token"),
            (Given::ConfigToken, "token in the agent's config entry"),
            (Given::ConfigEnv("OPS_KEY".into()), "OPS_KEY (token_env"),
            (Given::ConfigCommand, "token_command in the agent's config entry"),
        ] {
            let msg = refusal(Some("A2A_TOKEN_OPS"), Some(TokenSource::Explicit(given)), true);
            assert!(
                msg.contains(&format!("fix {named}")) && msg.contains(&format!("came from {named}")),
                "{msg}"
            );
            assert!(
                !msg.contains("set A2A_TOKEN"),
                "setting a variable would change nothing: {msg}"
            );
        }
    }

    #[test]
    fn a_refused_variable_or_shared_token_says_which() {
        let own = refusal(
            Some("A2A_TOKEN_OPS"),
            Some(TokenSource::AgentEnv("A2A_TOKEN_OPS".into())),
            true,
        );
        assert!(
            own.contains("came from A2A_TOKEN_OPS;") && own.contains("put a token that works in A2A_TOKEN_OPS"),
            "{own}"
        );
        let shared = refusal(Some("A2A_TOKEN_OPS"), Some(TokenSource::SharedEnv), true);
        assert!(
            shared.contains("came from A2A_TOKEN;") && shared.contains("give this one its own: set A2A_TOKEN_OPS"),
            "{shared}"
        );
        let flag = refusal(None, Some(TokenSource::SharedFlag), true);
        assert!(
            flag.contains("--token, shared by the dashboard's agents") && flag.contains("--agent NAME=URL"),
            "{flag}"
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates_capped() {
        let now: jiff::Timestamp = "2015-10-21T07:28:00Z".parse().unwrap();
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO),
            "a date past is now"
        );
        assert_eq!(parse_retry_after("99999999", now), Some(RETRY_AFTER_MAX));
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn first_lines_are_sanitised() {
        assert_eq!(
            first_line(b"\n  <h1>Bad \x1b[31mGateway</h1>\nmore"),
            "<h1>Bad Gateway</h1>"
        );
        assert_eq!(first_line(b""), "(empty body)");
    }

    #[test]
    fn excerpts_are_short_and_printable() {
        let long = "x".repeat(1000);
        let ex = excerpt(long.as_bytes());
        assert!(ex.len() < 260 && ex.ends_with("(1000 bytes)"), "{ex}");
        assert_eq!(excerpt(b"a\x1b[2Jb"), "a [2Jb");
    }
}
