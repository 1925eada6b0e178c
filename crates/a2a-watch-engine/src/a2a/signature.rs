//! Agent card signatures (A2A 1.0 §8.4). Each entry of a card's `signatures` is a JWS (RFC 7515)
//! whose payload is detached: the RFC 8785 canonical JSON of the card without `signatures`, with
//! default values removed (§8.4.1). The key comes from the keys the user pinned (config
//! `card_keys`, `--card-key`), which are then the only ones tried, or else from the protected
//! header's `jwk` or `jku`. Only a pinned key, or a key set on the card's own origin, says who
//! wrote the card: a `jwk` in the header is the card vouching for itself (README "Security").
//! Signers disagree on "default values" (docs/protocol-notes.md, "Signed cards"), so a signature
//! is checked against each form a signer may have covered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use url::Url;

use super::auth::is_loopback;
use super::card::AgentCard;
use super::client::{read_body, redirected, same_origin};
use super::shown::ShownUrl;

/// The largest JWK Set read from a `jku`; real ones hold a few keys.
const JWKS_LIMIT: usize = 64 * 1024;
/// Distinct `jku` key sets fetched per card, together, and how long all of them may take: a
/// card must not make us fetch many URLs or stall its connection.
const MAX_KEY_SETS: usize = 2;
const KEY_SETS_DEADLINE: Duration = Duration::from_secs(5);
/// The longest `kid` read; a key id is a short name.
const MAX_KID: usize = 256;
/// Signatures checked per card: key rotation needs two or three (§8.4.3); a card with hundreds
/// must not make us fetch hundreds of key sets.
const MAX_SIGNATURES: usize = 8;

/// What a signed card's signatures say. An unsigned card has none (`Option::None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CardSignature {
    /// A signature verifies with this key.
    Verified { kid: String, key: KeyOrigin },
    /// None does; why, for the first signature (for several, how many there were).
    Failed { why: String },
}

/// Where the key that verified came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyOrigin {
    /// The config's `card_keys` (or `--card-key`) for this agent.
    Pinned,
    /// The JWK Set at the header's `jku`, on the card's own origin (shown without query).
    Jku(String),
    /// The JWK Set at a `jku` on another origin than the card's, or named by a card file.
    ForeignJku(String),
    /// The header's own `jwk`.
    Header,
}

impl KeyOrigin {
    /// Does the key say who wrote the card? A pinned key does, and so does a key set served by
    /// the card's own origin (whoever can change one can change the other); a key the card
    /// carries or points elsewhere for is chosen by whoever wrote the card, so anyone who can
    /// change the card can re-sign it.
    pub fn trusted(&self) -> bool {
        matches!(self, KeyOrigin::Pinned | KeyOrigin::Jku(_))
    }
}

impl CardSignature {
    pub fn verified(&self) -> bool {
        matches!(self, CardSignature::Verified { .. })
    }

    /// Verified with a key that says who wrote the card (`KeyOrigin::trusted`): what
    /// `require_signed_card` asks for.
    pub fn trusted(&self) -> bool {
        matches!(self, CardSignature::Verified { key, .. } if key.trusted())
    }

    /// `✓ kid`, `✓ kid (why the key proves nothing)` or `✗ why`: the `--json` field
    /// `card_signature`.
    pub fn mark(&self) -> String {
        match self {
            CardSignature::Verified { kid, key } => match key {
                KeyOrigin::Pinned | KeyOrigin::Jku(_) => format!("✓ {kid}"),
                KeyOrigin::Header => format!("✓ {kid} (key from the card itself, not pinned)"),
                KeyOrigin::ForeignJku(_) => format!("✓ {kid} (key set from another origin, not pinned)"),
            },
            CardSignature::Failed { why } => format!("✗ {why}"),
        }
    }

    /// `signed ✓ kid` or `signed ✗ why`, as the agent's row shows it.
    pub fn label(&self) -> String {
        format!("signed {}", self.mark())
    }

    /// Where the key came from, for `card`; a key from the card's own header or `jku` proves the
    /// card is whole, not who wrote it.
    pub fn key_origin(&self) -> Option<String> {
        match self {
            CardSignature::Verified { key, .. } => Some(match key {
                KeyOrigin::Pinned => "a key pinned in card_keys".to_string(),
                KeyOrigin::Jku(url) => format!("the key set at {url} (jku)"),
                KeyOrigin::ForeignJku(url) => format!("the key set at {url} (jku, not the card's origin)"),
                KeyOrigin::Header => "the key in the signature's own header (jwk)".to_string(),
            }),
            CardSignature::Failed { .. } => None,
        }
    }
}

/// How an agent's card signature is checked (config `card_keys`, `require_signed_card`).
#[derive(Debug, Clone, Default)]
pub struct CardTrust {
    /// Keys the user pinned for this agent: when given, the only ones trusted; a `jwk` or `jku`
    /// in the signature's header is then ignored.
    pub pinned: Option<Arc<[Jwk]>>,
    /// Withhold every credential from the agent unless its card verifies.
    pub required: bool,
    /// Key sets fetched from `jku` URLs, and fetches that failed, kept for the run (reconnects
    /// fetch none again).
    fetched: Arc<Mutex<HashMap<Url, KeySet>>>,
}

type KeySet = Result<Arc<[Jwk]>, String>;
/// A `jku`'s keys, with what they say about the card, by the `jku` as written.
type JkuKeys = HashMap<String, Result<(Arc<[Jwk]>, KeyOrigin), String>>;

/// The protected header's parameters that matter here (RFC 7515 §4.1).
#[derive(Debug, Default, Deserialize)]
struct Protected {
    #[serde(default)]
    alg: String,
    kid: Option<String>,
    jku: Option<String>,
    jwk: Option<Value>,
    crit: Option<Value>,
}

/// One entry of `signatures` (A2A 1.0 §4.4.7).
#[derive(Debug, Deserialize)]
struct Entry {
    #[serde(default)]
    protected: String,
    #[serde(default)]
    signature: String,
}

/// Public keys from a JWK or a JWK Set (RFC 7517 §5); keys of a type we cannot read, and
/// shared secrets (`oct`), are skipped.
pub fn keys_from_json(v: &Value) -> Vec<Jwk> {
    let keys = match v.get("keys").and_then(Value::as_array) {
        Some(set) => set.clone(),
        None => vec![v.clone()],
    };
    keys.into_iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k).ok())
        .filter(|k| !matches!(k.algorithm, AlgorithmParameters::OctetKey(_)))
        .collect()
}

impl CardTrust {
    pub fn new(pinned: Option<Arc<[Jwk]>>, required: bool) -> CardTrust {
        CardTrust {
            pinned,
            required,
            fetched: Arc::default(),
        }
    }

    /// Checks a card's signatures; `None` when it has none. The card is the JSON as served:
    /// the signature covers its content, not what we decoded of it. `origin` is the URL it was
    /// read from; `None` for a card file.
    pub async fn check(&self, http: &reqwest::Client, card: &Value, origin: Option<&Url>) -> Option<CardSignature> {
        let entries = signature_entries(card)?;
        let jku_keys = match self.pinned {
            Some(_) => JkuKeys::new(),
            None => self.jku_keys(http, &entries, origin).await,
        };
        Some(verify(card, &entries, |header| match &self.pinned {
            Some(pinned) => Ok((pinned.to_vec(), KeyOrigin::Pinned)),
            None => header_keys(header, &jku_keys),
        }))
    }

    /// The key sets the headers' `jku`s name: only for a header that could verify at all (its
    /// alg, crit and kid are checked first), at most `MAX_KEY_SETS` distinct ones, fetched
    /// together under one deadline.
    async fn jku_keys(&self, http: &reqwest::Client, entries: &[Decoded], origin: Option<&Url>) -> JkuKeys {
        let mut wanted: Vec<&str> = Vec::new();
        for (header, _) in entries.iter().filter_map(|e| e.as_ref().ok()) {
            if let Some(jku) = header.jku.as_deref().filter(|_| header.jwk.is_none())
                && usable_alg(header).is_ok()
                && !wanted.contains(&jku)
                && wanted.len() < MAX_KEY_SETS
            {
                wanted.push(jku);
            }
        }
        let deadline = tokio::time::Instant::now() + KEY_SETS_DEADLINE;
        let fetches = wanted
            .into_iter()
            .map(|jku| async move { (jku.to_string(), self.jku_set(http, jku, origin, deadline).await) });
        futures::future::join_all(fetches).await.into_iter().collect()
    }

    /// The JWK Set at a `jku`: https only (plain http to loopback only for a card that came from
    /// loopback, as for credentials), no credential, no redirect to another origin (the shared
    /// client's rule), bounded in size and by `deadline`.
    async fn jku_set(
        &self,
        http: &reqwest::Client,
        jku: &str,
        origin: Option<&Url>,
        deadline: tokio::time::Instant,
    ) -> Result<(Arc<[Jwk]>, KeyOrigin), String> {
        let url = Url::parse(jku).map_err(|_| "its jku is not a URL".to_string())?;
        let shown = ShownUrl::of(&url);
        let card_on_loopback = origin.is_some_and(is_loopback);
        if url.scheme() == "http" && is_loopback(&url) && !card_on_loopback {
            return Err(format!(
                "its jku {shown} is plain http, and the card did not come from loopback"
            ));
        }
        if url.scheme() != "https" && !(url.scheme() == "http" && is_loopback(&url)) {
            return Err(format!("its jku {shown} is not https"));
        }
        let cached = self
            .fetched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&url)
            .cloned();
        let keys = match cached {
            Some(set) => set,
            None => {
                let fetched = tokio::time::timeout_at(deadline, fetch_key_set(http, &url, &shown))
                    .await
                    .unwrap_or_else(|_| {
                        Err(format!(
                            "jku: no key set from {shown} within {} s",
                            KEY_SETS_DEADLINE.as_secs()
                        ))
                    });
                self.fetched
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(url.clone(), fetched.clone());
                fetched
            }
        }?;
        let own_origin = origin.is_some_and(|o| same_origin(o, &url));
        let shown = ShownUrl::of_written(jku).to_string();
        Ok((
            keys,
            if own_origin {
                KeyOrigin::Jku(shown)
            } else {
                KeyOrigin::ForeignJku(shown)
            },
        ))
    }
}

async fn fetch_key_set(http: &reqwest::Client, url: &Url, shown: &ShownUrl) -> KeySet {
    let what = format!("fetching the key set at {shown}");
    let resp = http
        .get(url.clone())
        .header("Accept", "application/jwk-set+json, application/json")
        .send()
        .await
        .map_err(|e| format!("jku: {}", super::Error::transport(&what, e)))?;
    if let Some(e) = redirected(&resp, &what) {
        return Err(format!("jku: {e}"));
    }
    if !resp.status().is_success() {
        return Err(format!("jku: HTTP {} at {shown}", resp.status().as_u16()));
    }
    let body = read_body(resp, &format!("key set at {shown}"), JWKS_LIMIT)
        .await
        .map_err(|e| format!("jku: {e}"))?;
    let json: Value = serde_json::from_slice(&body).map_err(|_| format!("jku: {shown} is not a JWK Set"))?;
    Ok(keys_from_json(&json).into())
}

type Decoded = Result<(Protected, String), String>;

/// Each entry's protected header, decoded, with its signature; `None` for an unsigned card.
fn signature_entries(card: &Value) -> Option<Vec<Decoded>> {
    let list = card.get("signatures")?.as_array().filter(|l| !l.is_empty())?;
    Some(
        list.iter()
            .take(MAX_SIGNATURES)
            .map(|raw| {
                let entry: Entry =
                    serde_json::from_value(raw.clone()).map_err(|_| "a signature is not a JWS object".to_string())?;
                let header = URL_SAFE_NO_PAD
                    .decode(entry.protected.trim_end_matches('='))
                    .ok()
                    .and_then(|bytes| serde_json::from_slice::<Protected>(&bytes).ok())
                    .ok_or_else(|| "its protected header is not base64url JSON".to_string())?;
                Ok((header, format!("{}.{}", entry.protected, entry.signature)))
            })
            .collect(),
    )
}

/// The keys a header names when none are pinned: its `jwk`, or the set at its `jku`.
fn header_keys(header: &Protected, jku_keys: &JkuKeys) -> Result<(Vec<Jwk>, KeyOrigin), String> {
    if let Some(jwk) = &header.jwk {
        return Ok((keys_from_json(jwk), KeyOrigin::Header));
    }
    let jku = header
        .jku
        .as_ref()
        .ok_or_else(|| "no key: no card_keys pinned, no jwk or jku in its header".to_string())?;
    let (keys, origin) = jku_keys.get(jku).cloned().unwrap_or_else(|| {
        Err(format!(
            "its jku was not fetched (at most {MAX_KEY_SETS} key sets a card)"
        ))
    })?;
    Ok((keys.to_vec(), origin))
}

/// The verdict on a card's signature entries, with `keys` giving the candidate keys for a header.
fn verify(
    card: &Value,
    entries: &[Decoded],
    keys: impl Fn(&Protected) -> Result<(Vec<Jwk>, KeyOrigin), String>,
) -> CardSignature {
    let forms = signed_forms(card);
    let mut first_failure = None;
    for entry in entries {
        let verdict = entry
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|(header, jws)| verify_one(header, jws, &forms, &keys));
        match verdict {
            Ok(verified) => return verified,
            Err(why) => {
                first_failure.get_or_insert(why);
            }
        }
    }
    let why = first_failure.unwrap_or_default();
    CardSignature::Failed {
        why: match entries.len() {
            1 => why,
            n => format!("none of {n} signatures verifies (the first: {why})"),
        },
    }
}

/// The algorithm of a header whose signature can verify at all; checked before any key is
/// looked for, so a header that can never verify fetches nothing.
fn usable_alg(header: &Protected) -> Result<Algorithm, String> {
    // A critical extension we do not understand makes the JWS invalid (RFC 7515 §4.1.11).
    if header.crit.is_some() {
        return Err("its header has crit parameters we do not know".into());
    }
    if header.kid.as_ref().is_some_and(|kid| kid.chars().count() > MAX_KID) {
        return Err(format!("its kid is over {MAX_KID} characters"));
    }
    let alg: Algorithm = header
        .alg
        .parse()
        .map_err(|_| format!("alg {:?} is not one we verify", crate::text::one_line(&header.alg)))?;
    // A shared-secret algorithm would let anyone holding the "public" key sign.
    if alg.family() == AlgorithmFamily::Hmac {
        return Err(format!("alg {:?} is not a public-key algorithm", header.alg));
    }
    Ok(alg)
}

/// One signature: `jws` is `protected.signature`, the payload left out (RFC 7515 Appendix F).
fn verify_one(
    header: &Protected,
    jws: &str,
    forms: &[SignedForm],
    keys: &impl Fn(&Protected) -> Result<(Vec<Jwk>, KeyOrigin), String>,
) -> Result<CardSignature, String> {
    let alg = usable_alg(header)?;
    let (candidates, origin) = keys(header)?;
    let matching: Vec<&Jwk> = candidates
        .iter()
        .filter(|k| match (&header.kid, &k.common.key_id) {
            (Some(want), Some(have)) => want == have,
            _ => true,
        })
        .collect();
    if matching.is_empty() {
        let kid = header.kid.as_deref().unwrap_or("(none)");
        return Err(format!("no key with kid {:?}", crate::text::one_line(kid)));
    }
    let (protected, signature) = jws.split_once('.').unwrap_or((jws, ""));
    let mut covers_less = false;
    for key in matching {
        let Ok(decoding) = DecodingKey::from_jwk(key) else {
            continue;
        };
        // The served form first: another is tried only when it fails.
        for form in forms {
            let input = format!("{protected}.{}", form.encoded);
            if !jsonwebtoken::crypto::verify(signature, input.as_bytes(), &decoding, alg).unwrap_or(false) {
                continue;
            }
            if !form.reads_as_served {
                covers_less = true;
                continue;
            }
            let kid = header.kid.clone().or_else(|| key.common.key_id.clone());
            return Ok(CardSignature::Verified {
                kid: shown_kid(&kid.unwrap_or_else(|| "(no kid)".into())),
                key: origin,
            });
        }
    }
    Err(if covers_less {
        "fields outside the signature".into()
    } else {
        "the signature does not match the card".into()
    })
}

/// A kid as shown: one line, and short enough that what follows it on the agent's row (whether
/// the key is trusted) stays in view; a key in the card's own header may carry any kid.
fn shown_kid(kid: &str) -> String {
    const SHOWN: usize = 64;
    let line = crate::text::one_line(kid);
    match line.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// A canonical form a signer may have covered, base64url-encoded for the JWS signing input.
struct SignedForm {
    encoded: String,
    /// The card we use (decoded from the bytes as served) reads the same from this form. A form
    /// that drops more than defaults does not: what it dropped (an empty `securityRequirements`
    /// entry, an empty scheme) is not covered, yet would steer the credential (auth::card_auth).
    reads_as_served: bool,
}

/// The canonical forms a signer may have covered, distinct, the card as served first; then the
/// spec's form with default values removed (§8.4.1), and a2a-python's form, which also drops
/// empty strings, lists and objects that are REQUIRED (docs/protocol-notes.md, "Signed cards").
fn signed_forms(card: &Value) -> Vec<SignedForm> {
    let mut served = card.clone();
    if let Some(o) = served.as_object_mut() {
        o.remove("signatures");
    }
    let read = |form: &Value| serde_json::from_value::<AgentCard>(form.clone()).ok();
    let used = read(&served);
    let spec = without_defaults(&served, Shape::Card);
    let sdk = without_empties(&spec).unwrap_or(Value::Object(Map::new()));
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut out = Vec::new();
    for (i, form) in [served, spec, sdk].iter().enumerate() {
        if let Ok(bytes) = serde_json_canonicalizer::to_vec(form)
            && !seen.contains(&bytes)
        {
            out.push(SignedForm {
                encoded: URL_SAFE_NO_PAD.encode(&bytes),
                reads_as_served: i == 0 || (used.is_some() && read(form) == used),
            });
            seen.push(bytes);
        }
    }
    out
}

/// Which proto message an object of the card is, as far as default removal needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Card,
    Capabilities,
    Extension,
    Interface,
    Skill,
    Provider,
    Requirement,
    /// map<string, SecurityScheme>: every entry stays; each value is a oneof.
    Schemes,
    /// A oneof: the member set stays, even empty (`mtlsSecurityScheme: {}`).
    OneOf,
    /// map<string, StringList> or map<string, string>: every entry stays.
    Map,
    /// google.protobuf.Struct (`params`): kept as it is.
    Verbatim,
    Message,
}

impl Shape {
    /// Fields kept at their default value: REQUIRED ones and those with `optional` presence
    /// (A2A 1.0 §8.4.1 rule 1, from specification/a2a.proto).
    fn kept_at_default(self) -> &'static [&'static str] {
        match self {
            Shape::Card => &[
                "name",
                "description",
                "supportedInterfaces",
                "version",
                "capabilities",
                "defaultInputModes",
                "defaultOutputModes",
                "skills",
                "provider",
                "documentationUrl",
                "iconUrl",
            ],
            Shape::Capabilities => &["streaming", "pushNotifications", "extendedAgentCard"],
            Shape::Interface => &["url", "protocolBinding", "protocolVersion"],
            Shape::Skill => &["id", "name", "description", "tags"],
            Shape::Provider => &["url", "organization"],
            _ => &[],
        }
    }

    fn child(self, key: &str) -> Shape {
        match (self, key) {
            (Shape::Card, "capabilities") => Shape::Capabilities,
            (Shape::Card, "supportedInterfaces") => Shape::Interface,
            (Shape::Card, "skills") => Shape::Skill,
            (Shape::Card, "provider") => Shape::Provider,
            (Shape::Card, "securitySchemes") => Shape::Schemes,
            (Shape::Card | Shape::Skill, "securityRequirements") => Shape::Requirement,
            (Shape::Capabilities, "extensions") => Shape::Extension,
            (Shape::Extension, "params") => Shape::Verbatim,
            (Shape::Requirement, "schemes") | (_, "scopes") => Shape::Map,
            (Shape::Schemes, _) => Shape::OneOf,
            (Shape::Verbatim, _) => Shape::Verbatim,
            _ => Shape::Message,
        }
    }
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The card with default values removed as proto3 JSON does, keeping what §8.4.1 keeps.
fn without_defaults(v: &Value, shape: Shape) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(|i| without_defaults(i, shape)).collect()),
        Value::Object(members) if shape != Shape::Verbatim => {
            let keeps_all = matches!(shape, Shape::Schemes | Shape::OneOf | Shape::Map);
            let member_shape = |k: &str| match shape {
                // A map's values and a oneof's member are messages of their own.
                Shape::Map | Shape::OneOf => Shape::Message,
                _ => shape.child(k),
            };
            let kept = members
                .iter()
                .map(|(k, val)| (k, without_defaults(val, member_shape(k))))
                .filter(|(k, val)| keeps_all || shape.kept_at_default().contains(&k.as_str()) || !is_default(val))
                .map(|(k, val)| (k.clone(), val))
                .collect();
            Value::Object(kept)
        }
        other => other.clone(),
    }
}

/// a2a-python's `_clean_empty`: empty strings, lists and objects removed, recursively.
fn without_empties(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let kept: Vec<Value> = items.iter().filter_map(without_empties).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(members) => {
            let kept: Map<String, Value> = members
                .iter()
                .filter_map(|(k, val)| Some((k.clone(), without_empties(val)?)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
    use jsonwebtoken::EncodingKey;
    use serde_json::json;

    /// A P-256 key: its JWK (public) and a signer of compact-JWS signing input.
    fn es256_key(kid: &str) -> (Value, EncodingKey) {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let point = pair.public_key().as_ref();
        let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])});
        (jwk, EncodingKey::from_ec_der(pair.to_pkcs8v1().unwrap().as_ref()))
    }

    fn ed25519_key(kid: &str) -> (Value, EncodingKey) {
        let pair = Ed25519KeyPair::generate().unwrap();
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(pair.public_key().as_ref())});
        (jwk, EncodingKey::from_ed_der(pair.to_pkcs8().unwrap().as_ref()))
    }

    /// Signs `payload` (canonical bytes) with a protected header, as a detached JWS entry.
    fn entry(header: &Value, payload: &[u8], key: &EncodingKey, alg: Algorithm) -> Value {
        let protected = URL_SAFE_NO_PAD.encode(serde_json::to_vec(header).unwrap());
        let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), key, alg).unwrap();
        json!({"protected": protected, "signature": signature})
    }

    fn signed(card: &Value, header: &Value, key: &EncodingKey, alg: Algorithm) -> Value {
        let payload = serde_json_canonicalizer::to_vec(card).unwrap();
        let mut out = card.clone();
        out["signatures"] = json!([entry(header, &payload, key, alg)]);
        out
    }

    fn pinned(keys: &[&Value]) -> impl Fn(&Protected) -> Result<(Vec<Jwk>, KeyOrigin), String> {
        let keys: Vec<Jwk> = keys.iter().flat_map(|k| keys_from_json(k)).collect();
        move |_| Ok((keys.clone(), KeyOrigin::Pinned))
    }

    fn check(card: &Value, keys: impl Fn(&Protected) -> Result<(Vec<Jwk>, KeyOrigin), String>) -> CardSignature {
        verify(card, &signature_entries(card).unwrap(), keys)
    }

    fn card() -> Value {
        json!({"name": "Trips", "description": "Plans trips", "version": "1.0.0",
            "supportedInterfaces": [{"url": "https://trips.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "plan", "name": "Plan", "description": "é ✓", "tags": []}]})
    }

    #[test]
    fn the_spec_example_canonicalizes_as_section_8_4_1_shows() {
        let fragment = json!({"name": "Example Agent", "description": "",
            "capabilities": {"streaming": false, "pushNotifications": false, "extensions": []}, "skills": []});
        let spec = without_defaults(&fragment, Shape::Card);
        assert_eq!(
            serde_json_canonicalizer::to_string(&spec).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
    }

    #[test]
    fn default_removal_keeps_map_entries_oneof_members_and_struct_params() {
        let c = json!({"securitySchemes": {"m": {"mtlsSecurityScheme": {}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
            "capabilities": {"extensions": [{"uri": "u", "required": false, "params": {"a": ""}}]},
            "documentationUrl": ""});
        assert_eq!(
            without_defaults(&c, Shape::Card),
            json!({"securitySchemes": {"m": {"mtlsSecurityScheme": {}}},
                "securityRequirements": [{"schemes": {"bearer": {}}}],
                "capabilities": {"extensions": [{"uri": "u", "params": {"a": ""}}]},
                "documentationUrl": ""})
        );
    }

    #[test]
    fn es256_and_eddsa_verify_and_name_the_kid() {
        let (ec, ec_key) = es256_key("ec-1");
        let c = signed(
            &card(),
            &json!({"alg": "ES256", "typ": "JOSE", "kid": "ec-1"}),
            &ec_key,
            Algorithm::ES256,
        );
        assert_eq!(check(&c, pinned(&[&ec])).mark(), "✓ ec-1");
        let (ed, ed_key) = ed25519_key("ed-1");
        let c = signed(
            &card(),
            &json!({"alg": "EdDSA", "kid": "ed-1"}),
            &ed_key,
            Algorithm::EdDSA,
        );
        assert_eq!(check(&c, pinned(&[&ec, &ed])).label(), "signed ✓ ed-1");
    }

    #[test]
    fn a_tampered_card_or_a_foreign_key_fails() {
        let (ec, key) = es256_key("k");
        let good = signed(&card(), &json!({"alg": "ES256", "kid": "k"}), &key, Algorithm::ES256);
        let mut tampered = good.clone();
        tampered["supportedInterfaces"][0]["url"] = json!("https://evil.example/a2a");
        assert_eq!(
            check(&tampered, pinned(&[&ec])),
            CardSignature::Failed {
                why: "the signature does not match the card".into()
            }
        );
        let (other, _) = es256_key("k");
        assert!(!check(&good, pinned(&[&other])).verified(), "the key pinned is another");
        let (unnamed, _) = es256_key("not-k");
        assert_eq!(check(&good, pinned(&[&unnamed])).mark(), "✗ no key with kid \"k\"");
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter_but_a_default_value_added_does_not_break_it() {
        let (ec, key) = es256_key("k");
        let good = signed(&card(), &json!({"alg": "ES256", "kid": "k"}), &key, Algorithm::ES256);
        let text = serde_json::to_string_pretty(&good).unwrap();
        let reordered: Value = serde_json::from_str(&text).unwrap();
        assert!(check(&reordered, pinned(&[&ec])).verified());
        // Signed in the spec's form; served with defaults written out.
        let mut served = good.clone();
        served["capabilities"]["extensions"] = json!([]);
        served["iconUrl"] = json!("https://trips.example/icon.png");
        assert!(
            !check(&served, pinned(&[&ec])).verified(),
            "a field with a value is covered"
        );
        served.as_object_mut().unwrap().remove("iconUrl");
        assert!(
            check(&served, pinned(&[&ec])).verified(),
            "an empty list is a default value"
        );
    }

    #[test]
    fn hmac_none_and_crit_are_refused() {
        let secret = json!({"kty": "oct", "k": URL_SAFE_NO_PAD.encode(b"anyone can sign with this")});
        let payload = serde_json_canonicalizer::to_vec(&card()).unwrap();
        let hs = entry(
            &json!({"alg": "HS256", "jwk": secret}),
            &payload,
            &EncodingKey::from_secret(b"anyone can sign with this").unwrap(),
            Algorithm::HS256,
        );
        let mut c = card();
        c["signatures"] = json!([hs]);
        let header_keys = |h: &Protected| header_keys(h, &JkuKeys::new());
        assert_eq!(
            check(&c, header_keys).mark(),
            "✗ alg \"HS256\" is not a public-key algorithm"
        );
        c["signatures"] = json!([{"protected": URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#), "signature": ""}]);
        assert_eq!(check(&c, header_keys).mark(), "✗ alg \"none\" is not one we verify");
        let (ec, key) = es256_key("k");
        let crit = signed(
            &card(),
            &json!({"alg": "ES256", "kid": "k", "crit": ["exp"]}),
            &key,
            Algorithm::ES256,
        );
        assert!(!check(&crit, pinned(&[&ec])).verified());
    }

    #[test]
    fn a_jwk_in_the_header_verifies_and_a_missing_jku_fetch_says_so() {
        let (ec, key) = es256_key("k");
        let c = signed(
            &card(),
            &json!({"alg": "ES256", "kid": "k", "jwk": ec}),
            &key,
            Algorithm::ES256,
        );
        let verdict = check(&c, |h: &Protected| header_keys(h, &JkuKeys::new()));
        assert_eq!(
            verdict,
            CardSignature::Verified {
                kid: "k".into(),
                key: KeyOrigin::Header
            }
        );
        let c = signed(&card(), &json!({"alg": "ES256", "kid": "k"}), &key, Algorithm::ES256);
        let verdict = check(&c, |h: &Protected| header_keys(h, &JkuKeys::new()));
        assert_eq!(
            verdict.mark(),
            "✗ no key: no card_keys pinned, no jwk or jku in its header"
        );
    }

    #[test]
    fn one_good_signature_among_several_is_enough() {
        let (ec, key) = es256_key("new");
        let good = signed(&card(), &json!({"alg": "ES256", "kid": "new"}), &key, Algorithm::ES256);
        let mut c = good.clone();
        c["signatures"] = json!([{"protected": "!!", "signature": "x"}, good["signatures"][0]]);
        assert_eq!(check(&c, pinned(&[&ec])).mark(), "✓ new");
        c["signatures"] = json!([{"protected": "!!", "signature": "x"}, {"protected": "!!", "signature": "y"}]);
        assert_eq!(
            check(&c, pinned(&[&ec])).mark(),
            "✗ none of 2 signatures verifies (the first: its protected header is not base64url JSON)"
        );
    }

    #[test]
    fn only_the_first_signatures_are_checked() {
        let mut c = card();
        c["signatures"] = Value::Array(vec![json!({"protected": "!!", "signature": "x"}); 500]);
        assert_eq!(signature_entries(&c).unwrap().len(), MAX_SIGNATURES);
    }

    #[test]
    fn an_unsigned_card_has_no_verdict() {
        assert!(signature_entries(&card()).is_none());
        let mut c = card();
        c["signatures"] = json!([]);
        assert!(signature_entries(&c).is_none());
    }
}
