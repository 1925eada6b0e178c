//! The client against agents built with the official Python SDK (tests/interop/python*): 1.3.0
//! on both bindings, with a token, and with the 0.3 adapter on; 0.3.26 over 0.3 JSON-RPC.

use a2a_watch::a2a::{Binding, ErrorKind, ProtocolVersion};

use crate::peers::{Peer, Sdk};
use crate::scenarios::*;

/// a2a-sdk 1.3.0 reads the spec as our demo agents do, and runs one request per task at a time.
pub const PY_1_3: Quirks = Quirks {
    in_band: InBand::Queued,
    ..Quirks::SPEC
};

/// a2a-sdk 0.3.26 (tests/golden/README.md).
const PY_0_3: Quirks = Quirks {
    version: ProtocolVersion::V0_3,
    // tasks/resubscribe starts with whatever the agent emits next, not a Task snapshot.
    subscribe_snapshot: false,
    // It answers tasks/resubscribe with 200 text/event-stream even to refuse: one error frame.
    refusals_in_stream: true,
    // A terminal task is -32602 "Task … is in terminal state: completed" (1.x: -32004).
    terminal_subscribe: ErrorKind::InvalidParams,
    // Once the turn that asked stopped, the task has no event queue to tap: TaskNotFound.
    interrupted_subscribe: Some(ErrorKind::TaskNotFound),
    // tasks/cancel puts CANCELED on its own tap of the queue: resubscribed streams just end.
    cancel_reaches_subscribers: false,
    // A tasks/resubscribe stream runs its own TaskManager over the same store: every chunk
    // appended while it is open is stored twice (GetTask shows the log with repeats).
    subscribers_store_chunks_again: true,
    // An executor exception breaks the connection; the task stays `working`.
    crash: CrashEnd::BrokenConnection,
    ..Quirks::SPEC
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1_3_over_jsonrpc() {
    let peer = Peer::start(Sdk::Python13, &[]);
    interop_lifecycle(&peer.url, Binding::JsonRpc, &PY_1_3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1_3_over_http_json() {
    let peer = Peer::start(Sdk::Python13, &["--prefer", "rest"]);
    interop_lifecycle(&peer.url, Binding::Rest, &PY_1_3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1_3_wants_the_bearer_token() {
    let peer = Peer::start(Sdk::Python13, &["--token", "s3cret-py"]);
    token_is_required(&peer.url, "s3cret-py").await;
}

/// `--v03-compat`: the SDK merges 0.3 top-level fields (`url`, `protocolVersion: "0.3"`,
/// `preferredTransport`) into the 1.0 card; the client must still pick the 1.0 interface.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1_3_hybrid_card_picks_the_1_0_interface() {
    let peer = Peer::start(Sdk::Python13, &["--v03-compat"]);
    let client = connect_with(&peer.url, None, None).await;
    assert_eq!(client.card.protocol_version.as_deref(), Some("0.3"), "a hybrid card");
    assert_eq!(
        (client.endpoint.binding, client.endpoint.version),
        (Binding::JsonRpc, ProtocolVersion::V1_0)
    );
    let rest = connect(&peer.url, Binding::Rest, None).await;
    assert_eq!(rest.endpoint.version, ProtocolVersion::V1_0);
    tokio::join!(
        test_run_completes(&client, "run tests"),
        test_run_completes(&rest, "run tests"),
        version_header_is_sent(&client),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_0_3_over_jsonrpc() {
    let peer = Peer::start(Sdk::Python03, &[]);
    // The legacy well-known path (0.2.x) serves the same 0.3 card.
    let legacy = connect_with(&format!("{}/.well-known/agent.json", peer.url), None, None).await;
    assert_eq!(legacy.card.protocol_version.as_deref(), Some("0.3.0"));
    assert!(legacy.card.supported_interfaces.is_empty(), "a pure 0.3 card");
    assert_eq!(legacy.endpoint.url.as_str(), format!("{}/", peer.url));
    tokio::join!(
        interop_lifecycle(&peer.url, Binding::JsonRpc, &PY_0_3),
        unknown_tasks_are_not_found(&legacy, &PY_0_3),
    );
}
