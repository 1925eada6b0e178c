//! The client against the agent built with the official JS SDK (tests/interop/js).

use a2a_watch::a2a::{Binding, ProtocolVersion};

use crate::peers::{Peer, Sdk};
use crate::scenarios::*;

async fn lifecycle(url: &str, binding: Binding) {
    let client = connect(url, binding, None).await;
    assert_eq!(client.endpoint.version, ProtocolVersion::V1_0);
    test_run_completes(&client, "run tests").await;
    failing_run_fails(&client, "fail the build").await;
    question_is_answered(&client, "question: review this diff", "release/2026.10").await;
    approval_out_of_band(&client, "deploy 2026.10.06-1 to staging, approve first").await;
    cancel_and_subscribe(&client, "wait for me").await;
    unknown_tasks_are_not_found(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_over_jsonrpc() {
    let peer = Peer::start(Sdk::Js13, &[]);
    lifecycle(&peer.url, Binding::JsonRpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_over_http_json() {
    let peer = Peer::start(Sdk::Js13, &["--prefer", "rest"]);
    lifecycle(&peer.url, Binding::Rest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_wants_the_bearer_token() {
    let peer = Peer::start(Sdk::Js13, &["--token", "s3cret-js"]);
    for binding in [Binding::JsonRpc, Binding::Rest] {
        bearer_is_required(&peer.url, binding, "s3cret-js", "A2A_TOKEN_TEST_RUNNER").await;
    }
}
