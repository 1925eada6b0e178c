//! Credentials: where they come from and where the card says they go (spec sections 7.3, 7.4;
//! docs/protocol-notes.md, "Authorization"). A `Secret` never prints its value, so it cannot leak
//! through Debug or logs.

use std::fmt;

use super::card::{AgentCard, ApiKeyLocation, SecurityScheme};

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into().trim().to_string())
    }

    /// The value, for the one place that puts it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Secret::new)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Which setting gave a credential for one agent, so a refusal names the one to fix.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Given {
    /// `--token`.
    #[default]
    Flag,
    /// The agent's config entry: `token`.
    ConfigToken,
    /// The agent's config entry: `token_env`, naming this variable.
    ConfigEnv(String),
    /// The agent's config entry: `token_command`.
    ConfigCommand,
}

/// Where a credential came from, so messages can say which knob to turn, and so a credential
/// meant for one agent is told apart from one offered to every agent that asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `--token` for one agent, or the agent's config entry (`token`, `token_env`, `token_command`).
    Explicit(Given),
    /// `A2A_TOKEN_<NAME>`, NAME given by the user: meant for this agent.
    AgentEnv(String),
    /// `A2A_TOKEN`: for any agent whose card asks for a credential.
    SharedEnv,
    /// `--token` on a dashboard of several agents: for any agent whose card asks.
    SharedFlag,
}

impl TokenSource {
    /// The setting, in a 401 hint's words.
    pub fn describe(&self) -> String {
        match self {
            TokenSource::Explicit(Given::Flag) => "--token".into(),
            TokenSource::Explicit(Given::ConfigToken) => "token in the agent's config entry".into(),
            TokenSource::Explicit(Given::ConfigEnv(var)) => format!("{var} (token_env in the agent's config entry)"),
            TokenSource::Explicit(Given::ConfigCommand) => "token_command in the agent's config entry".into(),
            TokenSource::AgentEnv(var) => var.clone(),
            TokenSource::SharedEnv => "A2A_TOKEN".into(),
            TokenSource::SharedFlag => "--token, shared by the dashboard's agents".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Token {
    pub secret: Secret,
    pub source: TokenSource,
}

impl Token {
    /// A token meant for this agent may go on the card request, and to an agent whose card asks
    /// for nothing; a shared one only where the card asks.
    pub fn meant_for_this_agent(&self) -> bool {
        matches!(self.source, TokenSource::Explicit(_) | TokenSource::AgentEnv(_))
    }
}

/// `A2A_TOKEN_<NAME>`: the agent name upper-cased, anything not alphanumeric as `_`.
pub fn env_var_for(agent: &str) -> String {
    let name: String = agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("A2A_TOKEN_{name}")
}

/// The credential given for the agent, then `A2A_TOKEN_<NAME>`, then a `--token` shared by
/// several agents, then `A2A_TOKEN`: what is meant for this agent before what is shared. `name`
/// is the name the user gave (`--agent NAME=URL`, `--name`, the config's `name`), never the
/// card's: a server must not pick which of the user's credentials it receives.
pub fn find_token(given: Option<Token>, name: Option<&str>) -> Option<Token> {
    find_token_in(given, name, |var| std::env::var(var).ok())
}

/// A credential in an environment variable; a blank one is none.
pub fn env_secret(var: &str) -> Option<Secret> {
    non_blank(std::env::var(var).ok())
}

fn non_blank(value: Option<String>) -> Option<Secret> {
    value.filter(|v| !v.trim().is_empty()).map(Secret::new)
}

/// `find_token` over any environment.
fn find_token_in(given: Option<Token>, name: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<Token> {
    if given.as_ref().is_some_and(Token::meant_for_this_agent) {
        return given;
    }
    let from_env = |var: &str| non_blank(env(var));
    if let Some(var) = name.filter(|n| !n.is_empty()).map(env_var_for)
        && let Some(secret) = from_env(&var)
    {
        return Some(Token {
            secret,
            source: TokenSource::AgentEnv(var),
        });
    }
    given.or_else(|| {
        from_env("A2A_TOKEN").map(|secret| Token {
            secret,
            source: TokenSource::SharedEnv,
        })
    })
}

/// Where the credential goes on each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Bearer,
    Basic,
    Header(String),
    Query(String),
    Cookie(String),
}

impl Placement {
    /// How the credential was sent, in a 401 hint's words.
    pub fn describe(&self) -> String {
        match self {
            Placement::Bearer => "a Bearer token".into(),
            Placement::Basic => "HTTP Basic".into(),
            Placement::Header(name) => format!("an API key in header {name}"),
            Placement::Query(name) => format!("an API key in query parameter {name}"),
            Placement::Cookie(name) => format!("an API key in cookie {name}"),
        }
    }
}

/// The `Authorization: Basic` value. A secret with a `:` is a plain `user:password` and is
/// base64-encoded (RFC 7617); one without is taken as already encoded and sent as is.
pub fn basic_credentials(secret: &Secret) -> String {
    use base64::Engine as _;
    let value = secret.expose();
    if value.contains(':') {
        base64::engine::general_purpose::STANDARD.encode(value)
    } else {
        value.to_string()
    }
}

/// What the card asks for: the placement we can satisfy, and a description for error messages.
#[derive(Debug, Clone, Default)]
pub struct CardAuth {
    pub placement: Option<Placement>,
    /// Every alternative the card offers, for error messages.
    pub asks_for: Option<String>,
}

/// Reads `securityRequirements` (alternatives; every scheme of one alternative is needed) and picks
/// the first alternative that one token satisfies.
pub fn card_auth(card: &AgentCard) -> CardAuth {
    let mut placement = None;
    let mut described = Vec::new();
    for alternative in &card.requirements() {
        let schemes: Vec<(&String, Option<&SecurityScheme>)> = alternative
            .schemes
            .keys()
            .map(|name| (name, card.security_schemes.get(name)))
            .collect();
        let names: Vec<String> = schemes
            .iter()
            .map(|(name, scheme)| match scheme {
                Some(s) => format!("{name} ({})", s.describe()),
                None => name.to_string(),
            })
            .collect();
        described.push(names.join(" + "));
        if placement.is_none()
            && let [(_, Some(scheme))] = schemes.as_slice()
        {
            placement = placement_for(scheme);
        }
    }
    CardAuth {
        placement,
        asks_for: (!described.is_empty()).then(|| described.join(" or ")),
    }
}

fn placement_for(scheme: &SecurityScheme) -> Option<Placement> {
    match scheme {
        SecurityScheme::HttpAuth { scheme, .. } if scheme.eq_ignore_ascii_case("bearer") => Some(Placement::Bearer),
        SecurityScheme::HttpAuth { scheme, .. } if scheme.eq_ignore_ascii_case("basic") => Some(Placement::Basic),
        // OAuth 2 and OpenID Connect access tokens also travel as bearer tokens.
        SecurityScheme::OAuth2 { .. } | SecurityScheme::OpenIdConnect { .. } => Some(Placement::Bearer),
        SecurityScheme::ApiKey { location, name, .. } => Some(match location {
            ApiKeyLocation::Header => Placement::Header(name.clone()),
            ApiKeyLocation::Query => Placement::Query(name.clone()),
            ApiKeyLocation::Cookie => Placement::Cookie(name.clone()),
        }),
        _ => None,
    }
}

/// Is this a host where plain http cannot be read by anyone else: 127.0.0.0/8, ::1, `localhost`?
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        let t = Token {
            secret: s,
            source: TokenSource::Explicit(Given::Flag),
        };
        assert!(!format!("{t:?}").contains("hunter2"));
    }

    #[test]
    fn what_is_meant_for_the_agent_comes_before_what_is_shared() {
        let token = |secret: &str, source| Token {
            secret: Secret::new(secret),
            source,
        };
        let both = |var: &str| match var {
            "A2A_TOKEN_OPS" => Some("own".to_string()),
            "A2A_TOKEN" => Some("everyone".to_string()),
            _ => None,
        };
        let found = |given, env: &dyn Fn(&str) -> Option<String>| {
            find_token_in(given, Some("ops"), env).map(|t| (t.secret, t.source))
        };
        assert_eq!(
            found(Some(token("flag", TokenSource::Explicit(Given::Flag))), &both),
            Some((Secret::new("flag"), TokenSource::Explicit(Given::Flag))),
            "a token given for this agent wins"
        );
        assert_eq!(
            found(Some(token("shared", TokenSource::SharedFlag)), &both),
            Some((Secret::new("own"), TokenSource::AgentEnv("A2A_TOKEN_OPS".into()))),
            "the agent's own variable wins over a --token shared by several"
        );
        let shared_only = |var: &str| (var == "A2A_TOKEN").then(|| "everyone".to_string());
        assert_eq!(
            found(Some(token("shared", TokenSource::SharedFlag)), &shared_only),
            Some((Secret::new("shared"), TokenSource::SharedFlag)),
            "a shared --token before A2A_TOKEN"
        );
        assert_eq!(
            found(None, &shared_only),
            Some((Secret::new("everyone"), TokenSource::SharedEnv))
        );
    }

    #[test]
    fn env_var_names_follow_the_agent_name() {
        assert_eq!(env_var_for("code-reviewer"), "A2A_TOKEN_CODE_REVIEWER");
        assert_eq!(env_var_for("Trip Planner 2"), "A2A_TOKEN_TRIP_PLANNER_2");
    }

    #[test]
    fn bearer_and_api_key_requirements_are_placed() {
        let card: AgentCard = serde_json::from_value(json!({
            "securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}},
                               "key":{"apiKeySecurityScheme":{"location":"header","name":"X-Api-Key"}}},
            "securityRequirements":[{"schemes":{"bearer":{"list":[]}}}]}))
        .unwrap();
        let auth = card_auth(&card);
        assert_eq!(auth.placement, Some(Placement::Bearer));
        assert_eq!(auth.asks_for.as_deref(), Some("bearer (HTTP Bearer)"));

        let key_card: AgentCard = serde_json::from_value(json!({
            "securitySchemes":{"key":{"type":"apiKey","in":"query","name":"k"}},"security":[{"key":[]}]}))
        .unwrap();
        assert_eq!(card_auth(&key_card).placement, Some(Placement::Query("k".into())));
    }

    #[test]
    fn basic_schemes_get_basic_and_plain_user_passwords_are_encoded() {
        let card: AgentCard = serde_json::from_value(json!({
            "securitySchemes":{"basic":{"httpAuthSecurityScheme":{"scheme":"Basic"}}},
            "securityRequirements":[{"schemes":{"basic":{}}}]}))
        .unwrap();
        assert_eq!(card_auth(&card).placement, Some(Placement::Basic));
        assert_eq!(basic_credentials(&Secret::new("ci:pa:ss")), "Y2k6cGE6c3M=");
        assert_eq!(basic_credentials(&Secret::new("Y2k6cGFzcw==")), "Y2k6cGFzcw==");
    }

    #[test]
    fn every_alternative_is_described_and_the_first_we_can_send_is_used() {
        let card: AgentCard = serde_json::from_value(json!({
            "securitySchemes":{"m":{"mtlsSecurityScheme":{}},
                               "key":{"apiKeySecurityScheme":{"location":"cookie","name":"sid"}},
                               "bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},
            "securityRequirements":[{"schemes":{"m":{}}},{"schemes":{"key":{}}},{"schemes":{"bearer":{}}}]}))
        .unwrap();
        let auth = card_auth(&card);
        assert_eq!(auth.placement, Some(Placement::Cookie("sid".into())));
        assert_eq!(
            auth.asks_for.as_deref(),
            Some("m (mutual TLS) or key (API key (cookie sid)) or bearer (HTTP Bearer)")
        );
        assert_eq!(Placement::Cookie("sid".into()).describe(), "an API key in cookie sid");
    }

    #[test]
    fn loopback_is_127_8_ipv6_one_and_localhost() {
        for url in [
            "http://127.0.0.1:1",
            "http://127.9.9.9/",
            "http://[::1]:8/",
            "http://localhost/",
        ] {
            assert!(is_loopback(&url::Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "http://192.0.2.1/",
            "http://10.0.0.1/",
            "http://localhost.example/",
            "http://[::2]/",
        ] {
            assert!(!is_loopback(&url::Url::parse(url).unwrap()), "{url}");
        }
    }

    #[test]
    fn mtls_only_cards_ask_for_something_we_cannot_send() {
        let card: AgentCard = serde_json::from_value(json!({
            "securitySchemes":{"m":{"mtlsSecurityScheme":{}}},"securityRequirements":[{"schemes":{"m":{}}}]}))
        .unwrap();
        let auth = card_auth(&card);
        assert_eq!(auth.placement, None);
        assert_eq!(auth.asks_for.as_deref(), Some("m (mutual TLS)"));
    }
}
