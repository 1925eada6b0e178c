//! Credentials: where they come from and where the card says they go (spec section 7.3;
//! fourth seed). A `Secret` never prints its value, so it cannot leak through Debug or logs.

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

/// Where a credential came from, so messages can say which knob to turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `--token` or a config value given for this agent.
    Explicit,
    /// `A2A_TOKEN_<NAME>`: meant for this agent.
    AgentEnv(String),
    /// `A2A_TOKEN`: meant for any agent whose card asks.
    SharedEnv,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub secret: Secret,
    pub source: TokenSource,
}

impl Token {
    /// A token meant for this agent may go on the card request; the shared one only where asked.
    pub fn meant_for_this_agent(&self) -> bool {
        self.source != TokenSource::SharedEnv
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

/// `--token`, then `A2A_TOKEN_<NAME>` for each name the agent goes by, then `A2A_TOKEN`.
pub fn find_token(explicit: Option<&Secret>, names: &[&str]) -> Option<Token> {
    if let Some(s) = explicit {
        return Some(Token {
            secret: s.clone(),
            source: TokenSource::Explicit,
        });
    }
    for name in names.iter().filter(|n| !n.is_empty()) {
        let var = env_var_for(name);
        if let Some(v) = std::env::var(&var).ok().filter(|v| !v.trim().is_empty()) {
            return Some(Token {
                secret: Secret::new(v),
                source: TokenSource::AgentEnv(var),
            });
        }
    }
    std::env::var("A2A_TOKEN")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| Token {
            secret: Secret::new(v),
            source: TokenSource::SharedEnv,
        })
}

/// Where the credential goes on each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Bearer,
    Header(String),
    Query(String),
    Cookie(String),
}

/// What the card asks for: the placement we can satisfy, and a description for error messages.
#[derive(Debug, Clone, Default)]
pub struct CardAuth {
    pub placement: Option<Placement>,
    pub asks_for: Option<String>,
}

/// Reads `securityRequirements` (alternatives; every scheme of one alternative is needed) and picks
/// the first alternative that one bearer token or API key satisfies.
pub fn card_auth(card: &AgentCard) -> CardAuth {
    let requirements = card.requirements();
    let mut described = Vec::new();
    for alternative in &requirements {
        let schemes: Vec<(&String, Option<&SecurityScheme>)> = alternative
            .schemes
            .keys()
            .map(|name| (name, card.security_schemes.get(name)))
            .collect();
        for (name, scheme) in &schemes {
            described.push(match scheme {
                Some(s) => format!("{name} ({})", s.describe()),
                None => name.to_string(),
            });
        }
        if let [(_, Some(scheme))] = schemes.as_slice() {
            let placement = match scheme {
                SecurityScheme::HttpAuth { scheme, .. } if scheme.eq_ignore_ascii_case("bearer") => {
                    Some(Placement::Bearer)
                }
                // OAuth 2 and OpenID Connect access tokens also travel as bearer tokens.
                SecurityScheme::OAuth2 { .. } | SecurityScheme::OpenIdConnect { .. } => Some(Placement::Bearer),
                SecurityScheme::ApiKey { location, name, .. } => Some(match location {
                    ApiKeyLocation::Header => Placement::Header(name.clone()),
                    ApiKeyLocation::Query => Placement::Query(name.clone()),
                    ApiKeyLocation::Cookie => Placement::Cookie(name.clone()),
                }),
                _ => None,
            };
            if placement.is_some() {
                return CardAuth {
                    placement,
                    asks_for: described.first().cloned(),
                };
            }
        }
    }
    CardAuth {
        placement: None,
        asks_for: (!described.is_empty()).then(|| described.join(" or ")),
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
            source: TokenSource::Explicit,
        };
        assert!(!format!("{t:?}").contains("hunter2"));
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
    fn mtls_only_cards_ask_for_something_we_cannot_send() {
        let card: AgentCard = serde_json::from_value(json!({
            "securitySchemes":{"m":{"mtlsSecurityScheme":{}}},"securityRequirements":[{"schemes":{"m":{}}}]}))
        .unwrap();
        let auth = card_auth(&card);
        assert_eq!(auth.placement, None);
        assert_eq!(auth.asks_for.as_deref(), Some("m (mutual TLS)"));
    }
}
