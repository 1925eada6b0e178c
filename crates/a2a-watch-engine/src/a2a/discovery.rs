//! Finding an agent card from whatever a user pastes: a base URL, a URL with a path prefix, the
//! card URL itself, or a local JSON file (spec sections 8.2, 14.3).

use std::path::Path;

use reqwest::StatusCode;
use url::Url;

use super::auth::{Placement, Token, env_var_for};
use super::card::AgentCard;
use super::error::{Error, Result, excerpt};
use super::shown::ShownUrl;
use super::signature::{CardSignature, CardTrust};

pub const WELL_KNOWN: &str = ".well-known/agent-card.json";
/// 0.2.x agents published the card here.
pub const LEGACY_WELL_KNOWN: &str = ".well-known/agent.json";
/// The largest card read; real cards are a few kilobytes.
pub const CARD_LIMIT: usize = 1024 * 1024;

/// Where a card came from: relative interface URLs resolve against it.
#[derive(Debug, Clone)]
pub struct Discovered {
    pub card: AgentCard,
    pub source: String,
    /// Base for relative URLs; `None` for a local file.
    pub base: Option<Url>,
    /// What the card's signatures say (A2A 1.0 §8.4); `None` for an unsigned card.
    pub signature: Option<CardSignature>,
}

/// Parses what a user typed as a URL, adding `http://` to a bare `host:port`. A user name or
/// password in it is refused: HTTP clients turn it into `Authorization: Basic` on every request,
/// where none of the checks on credentials (origin, plain http) would see it.
pub fn parse_url(input: &str) -> Result<Url> {
    let trimmed = input.trim();
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_string()
    } else {
        format!("http://{trimmed}")
    };
    // The text goes into the message cut as a URL would be: a key may ride in its query, or a
    // password before an `@` (README "Security").
    let url = Url::parse(&with_scheme).map_err(|e| {
        Error::Input(format!(
            "\"{}\" is neither a card file nor a URL: {e}",
            ShownUrl::of_unparsed(input)
        ))
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::Input(format!(
            "{} has a user name or password in it; nothing sent: give the credential with --token \
             (sent as HTTP Basic where the card asks for it, user:password), --header, or the config",
            ShownUrl::of(&url)
        )));
    }
    Ok(url)
}

/// The URLs to try, in order: the card URL itself, or the well-known paths under the given
/// prefix and then at the host root.
pub fn candidates(url: &Url) -> Vec<Url> {
    if url.path().ends_with(".json") {
        return vec![url.clone()];
    }
    let mut prefix = url.clone();
    prefix.set_query(None);
    prefix.set_fragment(None);
    if !prefix.path().ends_with('/') {
        let path = format!("{}/", prefix.path());
        prefix.set_path(&path);
    }
    let root = prefix.join("/").ok();
    let mut out = Vec::new();
    for file in [WELL_KNOWN, LEGACY_WELL_KNOWN] {
        for base in [Some(&prefix), root.as_ref()].into_iter().flatten() {
            if let Ok(u) = base.join(file)
                && !out.contains(&u)
            {
                out.push(u);
            }
        }
    }
    out
}

/// Is what the user typed a local card file rather than a URL?
pub fn is_card_file(input: &str) -> bool {
    !input.contains("://") && Path::new(input).is_file()
}

/// Fetches and decodes the card. A token meant for this agent goes on the card request too, as a
/// bearer token; the shared one does not. Redirects to another origin are not followed.
/// `user_name` is the name the user gave the agent, if any. A signed card is checked with `trust`.
pub async fn discover(
    http: &reqwest::Client,
    input: &str,
    token: Option<&Token>,
    user_name: Option<&str>,
    trust: &CardTrust,
) -> Result<Discovered> {
    if is_card_file(input) {
        return read_card_file(http, input, trust).await;
    }
    let url = parse_url(input)?;
    let tries = candidates(&url);
    let mut last = String::from("nothing tried");
    for candidate in &tries {
        // Send the version header here too: a2a-js picks the card shape by it
        // (docs/protocol-notes.md, "Versions and cards").
        let mut req = http
            .get(candidate.clone())
            .header("A2A-Version", "1.0")
            .header("Accept", "application/json")
            .timeout(std::time::Duration::from_secs(15));
        let sent = token.filter(|t| t.meant_for_this_agent());
        if let Some(t) = sent {
            req = req.bearer_auth(t.secret.expose());
        }
        let fetching = format!("fetching the card from {}", ShownUrl::of(candidate));
        let resp = req.send().await.map_err(|e| Error::transport(&fetching, e))?;
        if let Some(e) = super::client::redirected(&resp, &fetching) {
            return Err(e);
        }
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(Error::Unauthorized {
                status: status.as_u16(),
                agent: user_name.map_or_else(|| ShownUrl::of(&url).to_string(), str::to_string),
                asks_for: None,
                env_var: user_name.map(env_var_for),
                sent_as: sent.map(|_| Placement::Bearer.describe()),
                sent_from: sent.map(|t| Box::new(t.source.clone())),
                // The card request carries no shared token, whatever the card would ask.
                shared_applies: false,
            });
        }
        let shown = ShownUrl::of(candidate).to_string();
        let bytes = super::client::read_body(resp, &format!("card at {shown}"), CARD_LIMIT).await?;
        if !status.is_success() {
            last = format!("HTTP {} at {shown}", status.as_u16());
            continue;
        }
        match serde_json::from_slice::<AgentCard>(&bytes) {
            // A catch-all web server may answer any path with a page: keep looking.
            Ok(card) if !card.name.is_empty() || !card.interfaces().is_empty() => {
                return Ok(Discovered {
                    signature: signature_of(http, &card, &bytes, Some(candidate), trust).await,
                    card,
                    source: shown,
                    base: Some(candidate.clone()),
                });
            }
            Ok(_) => last = format!("{shown} is JSON but not an agent card"),
            Err(e) => last = format!("{shown} is not an agent card ({e}): {}", excerpt(&bytes)),
        }
    }
    let tried: Vec<String> = tries.iter().map(|u| ShownUrl::of(u).to_string()).collect();
    Err(Error::CardNotFound {
        tried: tried.join(", "),
        last,
    })
}

/// A card the user saved to a file: it names its interfaces itself, with no base URL.
async fn read_card_file(http: &reqwest::Client, input: &str, trust: &CardTrust) -> Result<Discovered> {
    let bytes = std::fs::read(Path::new(input)).map_err(|source| Error::Io {
        path: input.to_string(),
        source,
    })?;
    let card: AgentCard =
        serde_json::from_slice(&bytes).map_err(|e| Error::decode(format!("card file {input}"), &bytes, e))?;
    Ok(Discovered {
        signature: signature_of(http, &card, &bytes, None, trust).await,
        card,
        source: input.to_string(),
        base: None,
    })
}

/// A signed card's verdict, from the bytes as served: the signature covers their content, not
/// what we decode of it. Only a signed card is read twice. `origin` is where it was read from
/// (`None` for a file): a key set there says who wrote it.
async fn signature_of(
    http: &reqwest::Client,
    card: &AgentCard,
    bytes: &[u8],
    origin: Option<&Url>,
    trust: &CardTrust,
) -> Option<CardSignature> {
    if card.signatures.is_empty() {
        return None;
    }
    let served: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    trust.check(http, &served, origin).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(u: &str) -> Vec<String> {
        candidates(&parse_url(u).unwrap()).iter().map(Url::to_string).collect()
    }

    #[test]
    fn base_urls_try_well_known_then_legacy() {
        assert_eq!(
            strs("localhost:41241"),
            vec![
                "http://localhost:41241/.well-known/agent-card.json",
                "http://localhost:41241/.well-known/agent.json"
            ]
        );
    }

    #[test]
    fn prefixed_urls_try_under_the_prefix_first() {
        assert_eq!(
            strs("https://h/agents/trips"),
            vec![
                "https://h/agents/trips/.well-known/agent-card.json",
                "https://h/.well-known/agent-card.json",
                "https://h/agents/trips/.well-known/agent.json",
                "https://h/.well-known/agent.json"
            ]
        );
    }

    #[test]
    fn a_refused_url_is_named_without_its_password_or_query() {
        let user_info = "user name or password";
        let unparsed = "neither a card file nor a URL";
        for (input, why) in [
            ("http://u:s3cret@h:8/", user_info),
            ("https://s3cret@h/card.json", user_info),
            ("u:s3cret@127.0.0.1:9", user_info),
            ("https://h:70000/a2a?key=s3cret", unparsed),
            ("https://u:s3cret@[bad/", unparsed),
            ("https://user:s3/cret@h/a2a", unparsed),
        ] {
            let err = parse_url(input).unwrap_err().to_string();
            assert!(err.contains(why) && !err.contains("s3"), "{err}");
        }
        assert_eq!(
            ShownUrl::of_input("https://h/c.json?key=s3cret#x").as_str(),
            "https://h/c.json"
        );
    }

    #[test]
    fn a_card_url_is_used_as_is() {
        assert_eq!(strs("https://h/cards/x.json"), vec!["https://h/cards/x.json"]);
    }
}
