//! Signed agent cards (A2A 1.0 §8.4): cards signed by the official Python SDK's signer
//! (`a2a.utils.signing.create_agent_card_signer`, a2a-sdk 1.3.0 in tests/interop/.venv-py13) verify
//! on ES256, RS256, PS256 and EdDSA, with pinned keys or a `jku`; a tampered one does not, and
//! `require_signed_card` then withholds every credential, the card request's token included.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use a2a_watch::a2a::signature::{CardSignature, CardTrust, KeyOrigin, keys_from_json};
use a2a_watch::a2a::{Client, ClientOptions};
use a2a_watch::config::Config;
use a2a_watch::event::Health;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::cli::{run, spawn, stderr};
use crate::security::{Agent, Watched, bearer, card, nothing_holds};

/// Signs a card with the SDK's own signer and a fresh key, and prints the card as the SDK serves
/// it (MessageToDict) with the public JWK.
const SIGN: &str = r#"
import json, sys
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer

alg, kid, jku = sys.argv[1], sys.argv[2], sys.argv[3]
if alg == 'ES256':
    key = ec.generate_private_key(ec.SECP256R1()); jwk = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
elif alg == 'EdDSA':
    key = ed25519.Ed25519PrivateKey.generate(); jwk = OKPAlgorithm.to_jwk(key.public_key(), as_dict=True)
else:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
jwk['kid'] = kid
header = {'alg': alg, 'typ': 'JOSE', 'kid': kid}
if jku:
    header['jku'] = jku
card = create_agent_card_signer(key, header)(ParseDict(json.load(sys.stdin), AgentCard()))
print(json.dumps({'card': MessageToDict(card), 'jwk': jwk}))
"#;

/// `card` signed by a2a-python with a new `alg` key named `kid`: the card as served, and the key.
pub(crate) fn sdk_signed(card: &Value, alg: &str, kid: &str, jku: &str) -> (Value, Value) {
    use std::io::Write;
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/.venv-py13/bin/python");
    let mut child = std::process::Command::new(&python)
        .args(["-c", SIGN, alg, kid, jku])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} (run tests/interop/python/setup.sh): {e}", python.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(card.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the SDK's signer failed");
    let signed: Value = serde_json::from_slice(&out.stdout).unwrap();
    (signed["card"].clone(), signed["jwk"].clone())
}

pub(crate) fn pinned(jwk: &Value) -> CardTrust {
    CardTrust::new(Some(keys_from_json(jwk).into()), false)
}

pub(crate) async fn verdict(url: &str, trust: CardTrust) -> Option<CardSignature> {
    let opts = ClientOptions {
        card_trust: trust,
        ..ClientOptions::default()
    };
    Client::connect(url, opts).await.expect("connects").card_signature
}

/// A card that asks for a bearer token. Its requirement names a scope: an empty scope list is
/// `{}`, which the SDK's signer leaves out of what it signs, so such a card does not verify
/// (docs/protocol-notes.md, "Signed cards"; signed_trust.rs).
pub(crate) fn trips() -> Value {
    let mut trips = card("trips", bearer());
    trips["securityRequirements"] = json!([{"schemes": {"s": {"list": ["trips"]}}}]);
    // Canonical JSON writes non-ASCII as UTF-8, unescaped (RFC 8785 §3.2.2.2).
    trips["skills"] = json!([{"id": "plan", "name": "Plan a trip", "description": "Zürich → Kyoto, 🚆", "tags": []}]);
    trips
}

/// The card with one word changed after signing; nothing else about it is wrong, so only the
/// signature can tell.
fn tampered(card: &Value) -> Value {
    let mut card = card.clone();
    card["description"] = json!("e");
    card
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_signed_by_the_python_sdk_verify_on_four_algorithms_and_fail_when_tampered() {
    for alg in ["ES256", "RS256", "PS256", "EdDSA"] {
        let kid = format!("{alg}-key");
        let (signed, jwk) = sdk_signed(&trips(), alg, &kid, "");
        let agent = Agent::start(signed.clone(), |_| None).await;
        assert_eq!(
            verdict(&agent.url, pinned(&jwk)).await,
            Some(CardSignature::Verified {
                kid: kid.clone(),
                key: KeyOrigin::Pinned
            }),
            "{alg}"
        );
        let forged = Agent::start(tampered(&signed), |_| None).await;
        assert_eq!(
            verdict(&forged.url, pinned(&jwk)).await,
            Some(CardSignature::Failed {
                why: "the signature does not match the card".into()
            }),
            "{alg}"
        );
    }
    let unsigned = Agent::start(trips(), |_| None).await;
    assert_eq!(verdict(&unsigned.url, CardTrust::default()).await, None);
}

/// The key set at the header's `jku` is fetched once, with no credential on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jku_key_set_is_fetched_without_the_token_and_once_per_run() {
    // The card names the agent's own URL, so it is signed once the agent listens.
    let served = Arc::new(std::sync::Mutex::new((Value::Null, Value::Null)));
    let state = served.clone();
    let agent = Agent::start(Value::Null, move |seen| {
        let (card, keys) = state.lock().unwrap().clone();
        match seen.path.as_str() {
            "/keys.json" => Some(axum::Json(keys).into_response()),
            _ if seen.is_card() => Some(axum::Json(card).into_response()),
            _ => None,
        }
    })
    .await;
    let (signed, jwk) = sdk_signed(&trips(), "ES256", "k1", &format!("{}/keys.json", agent.url));
    *served.lock().unwrap() = (signed, json!({"keys": [jwk]}));
    let trust = CardTrust::default();
    let opts = ClientOptions {
        token: Some(a2a_watch::a2a::auth::Secret::new("tok-s3cret")),
        card_trust: trust.clone(),
        ..ClientOptions::default()
    };
    for _ in 0..2 {
        let client = Client::connect(&agent.url, opts.clone()).await.unwrap();
        assert_eq!(
            client.card_signature,
            Some(CardSignature::Verified {
                kid: "k1".into(),
                key: KeyOrigin::Jku(format!("{}/keys.json", agent.url)),
            })
        );
    }
    let fetches: Vec<_> = agent.seen().into_iter().filter(|s| s.path == "/keys.json").collect();
    assert_eq!(fetches.len(), 1, "cached for the run");
    nothing_holds(&fetches, "tok-s3cret");
    let out = run(&["card", &agent.url], &[]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let said = format!("signed ✓ k1 (key: the key set at {}/keys.json (jku))", agent.url);
    assert!(text.lines().any(|l| l == said), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jku_over_plain_http_off_loopback_is_not_fetched() {
    let (signed, _) = sdk_signed(&trips(), "ES256", "k1", "http://192.0.2.1:9/keys.json");
    let agent = Agent::start(signed, |_| None).await;
    assert_eq!(
        verdict(&agent.url, CardTrust::default()).await,
        Some(CardSignature::Failed {
            why: "its jku http://192.0.2.1:9/keys.json is not https".into()
        })
    );
}

/// A `jku` that redirects to another origin is not followed, and a key set over 64 KiB is not read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jku_is_not_followed_off_its_origin_nor_read_past_its_bound() {
    let elsewhere = Agent::start(Value::Null, |_| None).await;
    let moved_to = format!("{}/keys.json", elsewhere.url);
    let card = Arc::new(std::sync::Mutex::new(Value::Null));
    let state = card.clone();
    let agent = Agent::start(Value::Null, move |seen| match seen.path.as_str() {
        "/moved.json" => Some((axum::http::StatusCode::FOUND, [("location", moved_to.clone())]).into_response()),
        "/big.json" => Some(axum::Json(json!({"keys": [], "pad": "x".repeat(70 * 1024)})).into_response()),
        _ if seen.is_card() => Some(axum::Json(state.lock().unwrap().clone()).into_response()),
        _ => None,
    })
    .await;
    for (path, why) in [("moved.json", "was redirected to"), ("big.json", "is over 65536 bytes")] {
        let (signed, _) = sdk_signed(&trips(), "ES256", "k1", &format!("{}/{path}", agent.url));
        *card.lock().unwrap() = signed;
        let verdict = verdict(&agent.url, CardTrust::default()).await;
        let Some(CardSignature::Failed { why: said }) = &verdict else {
            panic!("{path}: {verdict:?}")
        };
        assert!(said.starts_with("jku: ") && said.contains(why), "{path}: {said}");
    }
    assert!(elsewhere.seen().is_empty(), "the redirect was not followed");
}

/// `card` says what the signature says, plain and `--json`; pinned keys come from the config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_shows_signed_and_why_not() {
    let (signed, jwk) = sdk_signed(&trips(), "ES256", "trips-2026", "");
    let good = Agent::start(signed.clone(), |_| None).await;
    let forged = Agent::start(tampered(&signed), |_| None).await;
    // The header carries no key: with none pinned, nothing can verify it.
    let out = run(&["card", &good.url], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("signed ✗ no key: no card_keys pinned, no jwk or jku in its header"),
        "{text}"
    );
    let dir = tempdir();
    std::fs::write(dir.join("trips.jwks.json"), json!({"keys": [jwk]}).to_string()).unwrap();
    let config = Config::parse(
        &format!(
            "[[agent]]\nname = \"trips\"\nurl = \"{}\"\ncard_keys = [\"trips.jwks.json\"]\n",
            good.url
        ),
        &dir.join("config.toml"),
    )
    .unwrap();
    let options = config.agent[0].spec().client;
    let client = Client::connect(&good.url, options.clone()).await.unwrap();
    assert_eq!(
        client.card_signature.map(|s| s.label()).as_deref(),
        Some("signed ✓ trips-2026")
    );
    let client = Client::connect(&forged.url, options).await.unwrap();
    assert_eq!(
        client.card_signature.map(|s| s.label()).as_deref(),
        Some("signed ✗ the signature does not match the card")
    );
    let out = run(&["card", &forged.url, "--json"], &[]).await;
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(shown["card_signature"].as_str().unwrap().starts_with("✗ "), "{shown}");
    let unsigned = Agent::start(trips(), |_| None).await;
    let out = run(&["card", &unsigned.url, "--json"], &[]).await;
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(shown.get("card_signature").is_none(), "nothing for an unsigned card");
}

/// With `require_signed_card`, a card that does not verify gets no credential at all, not even
/// on the card request, and the row says why; one that verifies gets the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_signed_card_withholds_every_credential_from_a_card_that_does_not_verify() {
    let (signed, jwk) = sdk_signed(&trips(), "EdDSA", "ed", "");
    let forged = Agent::start(tampered(&signed), |_| None).await;
    let good = Agent::start(signed, |_| None).await;
    let dir = tempdir();
    std::fs::write(dir.join("key.json"), jwk.to_string()).unwrap();
    let text = format!(
        "require_signed_card = true\n\
         [[agent]]\nname = \"forged\"\nurl = \"{}\"\ntoken = \"tok-s3cret\"\ncard_keys = [\"key.json\"]\n\
         [[agent]]\nname = \"good\"\nurl = \"{}\"\ntoken = \"tok-good\"\ncard_keys = [\"key.json\"]\n",
        forged.url, good.url
    );
    let config = Config::parse(&text, &dir.join("config.toml")).unwrap();
    let mut watched = Watched::start(config.agent.iter().map(|a| a.spec()).collect());
    watched
        .until("the forged agent withheld and the good one streaming", |s| {
            matches!(&s.agents[0].health, Health::Unauthorized { message } if message.contains("require_signed_card"))
                && s.agents[1].info.is_some()
        })
        .await;
    let Health::Unauthorized { message } = &watched.store.agents[0].health else {
        unreachable!()
    };
    assert!(
        message.contains("its card's signature does not verify (the signature does not match the card)"),
        "{message}"
    );
    assert!(!forged.seen().is_empty());
    nothing_holds(&forged.seen(), "tok-s3cret");
    let info = watched.store.agents[1].info.clone().unwrap();
    assert_eq!(info.card_signature.map(|s| s.mark()).as_deref(), Some("✓ ed"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !good
        .calls()
        .iter()
        .any(|s| s.header("authorization") == Some("Bearer tok-good"))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the verified agent never got its token"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `--json` agent line carries `card_signature`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_agent_lines_carry_the_card_signature() {
    let (signed, jwk) = sdk_signed(&trips(), "ES256", "k-json", "");
    let agent = Agent::start(signed, |_| None).await;
    let dir = tempdir();
    let config = dir.join("config.toml");
    let key = jwk.as_object().unwrap();
    let inline: Vec<String> = key.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nname = \"trips\"\nurl = \"{}\"\ncard_keys = [{{ {} }}]\n",
            agent.url,
            inline.join(", ")
        ),
    )
    .unwrap();
    let mut child = spawn(&["--config", config.to_str().unwrap(), "--json"], &[]);
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = out.next_line().await.unwrap() {
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("health").is_some() && v.get("protocol").is_some() {
                return v;
            }
        }
        panic!("no agent line");
    })
    .await
    .expect("an agent line in time");
    assert_eq!(line["card_signature"], "✓ k-json", "{line}");
    child.kill().await.unwrap();
}

/// A fresh folder under the target dir for a config and its key files.
pub(crate) fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-watch-signed-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `card_keys` reads files beside the config and inline tables; the top-level
/// `require_signed_card` holds for every agent that does not say otherwise.
#[test]
fn card_keys_and_require_signed_card_come_from_the_config() {
    let path = Path::new("tests/configs/valid/signed_cards.toml");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    let config = Config::parse(&text, &Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    let trips = config.agent[0].spec().client.card_trust;
    let kids: Vec<_> = trips
        .pinned
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|k| k.common.key_id.clone().unwrap_or_default())
        .collect();
    assert_eq!(kids, ["trips-ec", "trips-ed"]);
    assert!(trips.required);
    let local = config.agent[1].spec().client.card_trust;
    assert!(local.pinned.is_none() && !local.required);
}

/// The push receiver's token is a credential too: with `require_signed_card`, a card that does
/// not verify gets no push config, and the refusal says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_signed_card_withholds_the_push_token() {
    let (signed, jwk) = sdk_signed(&trips(), "ES256", "k", "");
    let forged = Agent::start(tampered(&signed), |_| None).await;
    let trust = CardTrust::new(Some(keys_from_json(&jwk).into()), true);
    let opts = ClientOptions {
        card_trust: trust,
        ..ClientOptions::default()
    };
    // No token or header: the connection itself carries nothing to withhold.
    let client = Client::connect(&forged.url, opts).await.expect("connects");
    let config = a2a_watch::a2a::PushConfig {
        task_id: "t-1".into(),
        id: "watch".into(),
        url: "http://127.0.0.1:7777/push/0".into(),
        token: a2a_watch::a2a::auth::Secret::new("push-s3cret"),
        tenant: None,
    };
    let refused = client.create_push_config(&config).await.expect_err("withheld");
    assert!(refused.to_string().contains("require_signed_card"), "{refused}");
    nothing_holds(&forged.seen(), "push-s3cret");
}
