//! Which credential goes to an agent and where on the request the card asks for it (a bearer or
//! basic `Authorization`, a named header, a cookie, the query), and what a refusal of it says.
//! A shared token or shared headers go only to an agent whose card asks for a credential.

use std::sync::PoisonError;

use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, HeaderName, HeaderValue};

use super::Client;
use crate::a2a::auth::{self, Placement, Secret, Token, TokenSource};
use crate::a2a::error::{Error, Result};

/// The credential given for the agent, as a token.
pub(super) fn given_token(secret: Option<Secret>, source: TokenSource) -> Option<Token> {
    secret.map(|secret| Token { secret, source })
}

/// `Error::Unauthorized` but for its status: kept by a gRPC stream, whose refusal may come late.
pub(super) struct Refused {
    agent: String,
    asks_for: Option<String>,
    env_var: Option<String>,
    sent_as: Option<String>,
    sent_from: Option<TokenSource>,
    shared_applies: bool,
}

impl Refused {
    pub(super) fn at(&self, status: u16) -> Error {
        Error::Unauthorized {
            status,
            agent: self.agent.clone(),
            asks_for: self.asks_for.clone(),
            env_var: self.env_var.clone(),
            sent_as: self.sent_as.clone(),
            sent_from: self.sent_from.clone().map(Box::new),
            shared_applies: self.shared_applies,
        }
    }
}

impl Client {
    /// The env var that would hold this agent's token: only for a name the user gave.
    pub fn token_env_var(&self) -> Option<String> {
        self.user_name.as_deref().map(auth::env_var_for)
    }

    /// Looks the token up again (after a 401): `given` is the agent's freshly resolved credential
    /// (its `token_command` run again, its `token_env` re-read); without one, the environment is
    /// read again. Every watcher sharing this client uses the new token from its next request.
    pub fn refresh_token(&self, given: Option<Secret>) {
        let token = auth::find_token(given_token(given, self.given_source.clone()), self.user_name.as_deref());
        *self.token.write().unwrap_or_else(PoisonError::into_inner) = token;
    }

    /// The credential to send: any token where the card asks for one; where it does not, only a
    /// token given for this agent (a shared `A2A_TOKEN` or `--token` is not handed to agents that
    /// never asked).
    pub(super) fn credential(&self) -> Option<Secret> {
        self.sent_token().map(|t| t.secret)
    }

    /// The token that goes on requests, with where it came from.
    pub(super) fn sent_token(&self) -> Option<Token> {
        let token = self.token.read().unwrap_or_else(PoisonError::into_inner).clone()?;
        (self.auth.placement.is_some() || token.meant_for_this_agent()).then_some(token)
    }

    /// The extra headers, if they go to this agent: always when given for it; when shared among
    /// several agents, only where the card asks for a credential, like a shared token.
    pub(super) fn extra_headers(&self) -> Option<&HeaderMap> {
        let sent = !self.headers.is_empty() && (!self.headers_shared || self.auth.placement.is_some());
        sent.then_some(&self.headers)
    }

    /// Where the card asks the credential to go; a bearer token where it asks for nothing we know.
    pub(super) fn placement(&self) -> Placement {
        self.auth.placement.clone().unwrap_or(Placement::Bearer)
    }

    /// Puts the credential where the card's security scheme asks for it (`placement`): on
    /// `headers`, or handed back when the card wants it in the query.
    pub(super) fn place_credential(&self, token: Secret, headers: &mut HeaderMap) -> Result<Option<(String, Secret)>> {
        let secret = |v: String| {
            let mut value = HeaderValue::try_from(v)
                .map_err(|_| Error::Input(format!("the credential for {} is not a valid header value", self.name)))?;
            value.set_sensitive(true);
            Ok::<_, Error>(value)
        };
        let header = match self.placement() {
            Placement::Bearer => (AUTHORIZATION, secret(format!("Bearer {}", token.expose()))?),
            Placement::Basic => (
                AUTHORIZATION,
                secret(format!("Basic {}", auth::basic_credentials(&token)))?,
            ),
            Placement::Header(name) => {
                let name = HeaderName::try_from(name.as_str()).map_err(|_| {
                    Error::Input(format!(
                        "the card's header name \"{}\" is not valid",
                        crate::text::one_line(&name)
                    ))
                })?;
                (name, secret(token.expose().to_string())?)
            }
            Placement::Cookie(name) => (COOKIE, secret(format!("{name}={}", token.expose()))?),
            Placement::Query(name) => return Ok(Some((name, token))),
        };
        headers.append(header.0, header.1);
        Ok(None)
    }

    /// A refused credential: what the card asks for, how ours was sent, and from which setting.
    pub(super) fn unauthorized(&self, status: u16, challenge: Option<String>) -> Error {
        self.refused(challenge).at(status)
    }

    /// What a refusal of our credential says, before its status is known.
    pub(super) fn refused(&self, challenge: Option<String>) -> Refused {
        let sent = self.sent_token();
        Refused {
            agent: self.name.clone(),
            asks_for: self.auth.asks_for.clone().or(challenge),
            env_var: self.token_env_var(),
            sent_as: sent.as_ref().map(|_| self.placement().describe()),
            sent_from: sent.map(|t| t.source),
            shared_applies: self.auth.placement.is_some(),
        }
    }
}
