//! The client against the agent built with the official JS SDK (tests/interop/js): @a2a-js/sdk
//! 1.3.0 on both bindings, with a token, and with the 0.3 adapter on.

use a2a_watch::a2a::{AgentCard, Binding, ErrorKind, ProtocolVersion};

use crate::peers::{Peer, Sdk};
use crate::scenarios::*;

/// @a2a-js/sdk 1.3.0 (docs/protocol-notes.md, "SDK quirks: a2a-js"; tests/golden/README.md).
pub const JS_1_3: Quirks = Quirks {
    // Every turn starts with a `task` event: the reply stream opens with the snapshot, still
    // INPUT_REQUIRED.
    reply_snapshot: true,
    // CancelTask on a CANCELED task returns the task (a2a-python: -32002).
    recancel: None,
    // An executor exception becomes a FAILED status "Agent execution error: …".
    crash: CrashEnd::FailedStatus,
    // A stream left open at AUTH_REQUIRED ends with -32004 "Stream ordering violation" when an
    // in-band message starts the next turn.
    in_band: InBand::NewTurn(Some(ErrorKind::UnsupportedOperation)),
    ..Quirks::SPEC
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_over_jsonrpc() {
    let peer = Peer::start(Sdk::Js13, &[]);
    interop_lifecycle(&peer.url, Binding::JsonRpc, &JS_1_3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_over_http_json() {
    let peer = Peer::start(Sdk::Js13, &["--prefer", "rest"]);
    interop_lifecycle(&peer.url, Binding::Rest, &JS_1_3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_wants_the_bearer_token() {
    let peer = Peer::start(Sdk::Js13, &["--token", "s3cret-js"]);
    token_is_required(&peer.url, "s3cret-js").await;
}

/// `--v03-compat`: the card depends on `A2A-Version` (a 0.3 card without it); the client asks
/// for 1.0 and picks the 1.0 interface.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_with_the_0_3_adapter_still_speaks_1_0() {
    let peer = Peer::start(Sdk::Js13, &["--v03-compat"]);
    let card_url = format!("{}/.well-known/agent-card.json", peer.url);
    let bare: AgentCard = reqwest::get(&card_url).await.unwrap().json().await.unwrap();
    assert_eq!(
        bare.protocol_version.as_deref(),
        Some("0.3"),
        "no A2A-Version: the 0.3 card"
    );
    let client = connect_with(&peer.url, None, None).await;
    assert_eq!(client.card.protocol_version, None, "the 1.0 card, no merged 0.3 fields");
    assert_eq!(
        (client.endpoint.binding, client.endpoint.version),
        (Binding::JsonRpc, ProtocolVersion::V1_0)
    );
    test_run_completes(&client, "run tests").await;
}
