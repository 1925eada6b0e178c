//! The gRPC binding (issue 14) against the agents of tests/interop served over gRPC by the
//! official SDKs (tests/interop/GRPC.md): every interop scenario, the bearer token, both forms of
//! the interface URL, and the descriptor set the binding reads (proto/README.md).

use std::process::Command;

use a2a_watch::a2a::{Binding, ProtocolVersion};

use crate::peers::{Peer, Sdk};
use crate::scenarios::*;
use crate::sdk_js::JS_1_3;
use crate::sdk_python::PY_1_3;

/// @a2a-js/sdk over gRPC: a refused SubscribeToTask sends its response headers first, so the
/// refusal is the stream's one item (a2a-python refuses with a trailers-only response, before any
/// stream; the client cannot tell the two apart without waiting for an item, spec section 10.7).
const JS_1_3_GRPC: Quirks = Quirks {
    refusals_in_stream: true,
    ..JS_1_3
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1_3_over_grpc() {
    let peer = Peer::start(Sdk::Python13, &["--grpc", "--prefer", "grpc"]);
    interop_lifecycle(&peer.url, Binding::Grpc, &PY_1_3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_1_3_over_grpc() {
    let peer = Peer::start(Sdk::Js13, &["--grpc", "--prefer", "grpc"]);
    interop_lifecycle(&peer.url, Binding::Grpc, &JS_1_3_GRPC).await;
}

/// The token goes as `authorization` metadata; without it UNAUTHENTICATED reads as the 401 it is
/// over HTTP, naming the scheme and never the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_sdks_want_the_bearer_token_over_grpc() {
    let python = Peer::start(Sdk::Python13, &["--grpc", "--prefer", "grpc", "--token", "s3cret-py"]);
    let js = Peer::start(Sdk::Js13, &["--grpc", "--prefer", "grpc", "--token", "s3cret-js"]);
    let env_var = "A2A_TOKEN_TEST_RUNNER";
    // The cards come over plain http and name gRPC on another port: saved to a file, they are
    // the user's choice, and the credential follows them (README, "Security").
    let (python_card, js_card) = (card_file(&python.url).await, card_file(&js.url).await);
    let (python_card, js_card) = (python_card.to_str().unwrap(), js_card.to_str().unwrap());
    tokio::join!(
        bearer_is_required(python_card, Binding::Grpc, "s3cret-py", env_var),
        bearer_is_required(js_card, Binding::Grpc, "s3cret-js", env_var),
        binary_sends_and_follows(python_card, Binding::Grpc, Some("s3cret-py")),
        binary_sends_and_follows(js_card, Binding::Grpc, Some("s3cret-js")),
    );
}

/// The card of the agent at `url`, saved to a file of its own.
pub(crate) async fn card_file(url: &str) -> std::path::PathBuf {
    let card = crate::relay::served_card(url).await;
    let file = std::env::temp_dir().join(format!("a2a-watch-grpc-card-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&file, card).unwrap();
    file
}

/// A card fetched over plain http names a gRPC interface on another port of its host. Loopback
/// or not, nothing vouches for that port (any local user can bind a free one), so the credential
/// is withheld, and the binary's error and the dashboard's row say why; the same card saved to a
/// file, which the user chose, gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_does_not_follow_grpc_to_another_port_from_a_card_over_plain_http() {
    let peer = Peer::start(Sdk::Python13, &["--grpc", "--prefer", "grpc", "--token", "s3cret-port"]);
    let env = [("A2A_TOKEN_RUNNER", "s3cret-port")];
    let withheld = "credential withheld: gRPC interface on another port";
    let out = crate::cli::run(&["--name", "runner", "send", &peer.url, "run tests"], &env).await;
    let err = crate::cli::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(withheld) && !err.contains("s3cret"), "{err}");

    let mut spec = a2a_watch::watch::AgentSpec::new(peer.url.clone());
    spec.name = Some("runner".into());
    spec.client.token = Some(a2a_watch::a2a::auth::Secret::new("s3cret-port"));
    let mut dashboard = crate::security::Watched::start(vec![spec]);
    dashboard
        .until("the refusal on the row", |s| {
            s.agents[0].health.detail().is_some_and(|d| d.contains(withheld))
        })
        .await;
    dashboard.engine.shutdown().await;

    let card = card_file(&peer.url).await;
    let out = crate::cli::run(
        &[
            "--name",
            "runner",
            "send",
            card.to_str().unwrap(),
            "run tests",
            "--follow",
        ],
        &env,
    )
    .await;
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    assert_eq!(crate::cli::lines(&out).last().unwrap()["state"], "COMPLETED");
    let _ = std::fs::remove_file(&card);
}

/// A server that serves its card (HTTP/1.1) and gRPC (HTTP/2) on the one port the user names,
/// as some SDKs do: the credential goes to that port. Every gRPC call is answered NOT_FOUND, after
/// its `authorization` metadata is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_follows_grpc_on_the_port_the_user_named() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let card = serde_json::json!({
        "name": "one-port", "description": "", "version": "1",
        "supportedInterfaces": [{"url": format!("127.0.0.1:{port}"), "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]
    });
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let kept = seen.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || async move { axum::Json(card) }),
        )
        .fallback(move |headers: axum::http::HeaderMap| async move {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none");
            kept.lock().unwrap().push(auth.to_string());
            [
                ("content-type", "application/grpc"),
                ("grpc-status", "5"),
                ("grpc-message", "no such task"),
            ]
        });
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .accept_http1(true)
            .serve_with_incoming(app, incoming),
    );
    let url = format!("http://127.0.0.1:{port}");
    let out = crate::cli::run(
        &["--name", "runner", "get", &url, "t-1"],
        &[("A2A_TOKEN_RUNNER", "s3cret-one")],
    )
    .await;
    let err = crate::cli::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("withheld"), "{err}");
    assert_eq!(*seen.lock().unwrap(), ["Bearer s3cret-one"], "{err}");
}

/// A card whose only interface is gRPC, written `http://host:port` (older cards) rather than
/// `host:port`: the client picks it without being told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_only_card_with_a_scheme_in_its_url() {
    let python = Peer::start(Sdk::Python13, &["--grpc", "--grpc-only", "--grpc-url-form", "http"]);
    let js = Peer::start(Sdk::Js13, &["--grpc", "--grpc-only", "--grpc-url-form", "http"]);
    for peer in [&python, &js] {
        let client = connect_with(&peer.url, None, None).await;
        assert_eq!(
            (client.endpoint.binding, client.endpoint.version),
            (Binding::Grpc, ProtocolVersion::V1_0)
        );
        assert_eq!(client.card.interfaces().len(), 1, "gRPC only");
        test_run_completes(&client, "run tests").await;
    }
}

/// proto/a2a.desc is what scripts/gen-proto.sh makes from the vendored protos today, with the
/// protoc .ci/run installs (grpcio-tools in the interop venv).
#[test]
fn grpc_descriptor_is_what_the_vendored_protos_compile_to() {
    crate::peers::ensure_installed(Sdk::Python13);
    let root = env!("CARGO_MANIFEST_DIR");
    let out = tempfile_path("a2a.desc");
    let status = Command::new("bash")
        .arg(format!("{root}/scripts/gen-proto.sh"))
        .arg(&out)
        .env("PYTHON", format!("{root}/tests/interop/.venv-py13/bin/python"))
        .status()
        .expect("scripts/gen-proto.sh runs");
    assert!(status.success(), "scripts/gen-proto.sh failed");
    let fresh = std::fs::read(&out).unwrap();
    let committed = std::fs::read(format!("{root}/proto/a2a.desc")).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(
        fresh == committed,
        "proto/a2a.desc is stale: run scripts/gen-proto.sh and commit it"
    );
}

/// TLS through rustls: the agent serves gRPC over TLS with a certificate of its own for localhost,
/// its card says `https://localhost:PORT`. Trusted (SSL_CERT_FILE, which the system's roots are
/// read from), the run goes through with the token; untrusted, nothing is sent and the error says
/// why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_over_tls_with_the_systems_roots() {
    let dir = std::env::temp_dir().join(format!("a2a-watch-grpc-tls-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap();
    let peer = Peer::start(
        Sdk::Python13,
        &["--grpc", "--grpc-only", "--grpc-tls", dir_arg, "--token", "s3cret-tls"],
    );
    // The card comes over plain http and names gRPC on another port: the user vouches for it by
    // saving it to a file, and the token goes there (over TLS).
    let card_url = card_file(&peer.url).await.to_str().unwrap().to_string();
    let cert = dir.join("cert.pem");
    let trusted = [
        ("SSL_CERT_FILE", cert.to_str().unwrap()),
        ("A2A_TOKEN_RUNNER", "s3cret-tls"),
    ];
    let send = [
        "--agent",
        "x",
        "--name",
        "runner",
        "send",
        &card_url,
        "run tests",
        "--follow",
    ];
    let out = crate::cli::run(&send[2..], &trusted).await;
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    let lines = crate::cli::lines(&out);
    assert_eq!(lines.last().unwrap()["state"], "COMPLETED", "{lines:?}");
    let card = crate::cli::run(&["card", &card_url, "--json"], &trusted).await;
    let card = String::from_utf8_lossy(&card.stdout);
    assert!(card.contains("https://localhost:"), "{card}");

    let untrusted = [("A2A_TOKEN_RUNNER", "s3cret-tls"), ("SSL_CERT_FILE", "/dev/null")];
    let out = crate::cli::run(&send[2..], &untrusted).await;
    let err = crate::cli::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.to_lowercase().contains("certificate") && !err.contains("s3cret"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("a2a-watch-{}-{name}", std::process::id()))
}

/// The dashboard's engine over gRPC, through the real binary: it lists the agent's tasks, follows
/// each over a SubscribeToTask stream until it ends, and its agent line says `1.0 gRPC`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_follows_tasks_over_grpc() {
    let peer = Peer::start(Sdk::Python13, &["--grpc", "--prefer", "grpc"]);
    let client = connect(&peer.url, Binding::Grpc, None).await;
    let slow = send_non_blocking(&client, "run tests slow").await;
    let quick = send_non_blocking(&client, "run tests").await;
    let out = crate::cli::run(&["--agent", &peer.url, "--json", "--until", "all-terminal"], &[]).await;
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    let lines = crate::cli::lines(&out);
    assert!(
        lines.iter().any(|l| l["protocol"] == "1.0 gRPC"),
        "the agent's line names the binding: {lines:?}"
    );
    for task in [&slow.id, &quick.id] {
        let last = lines
            .iter()
            .rev()
            .find(|l| l["task"] == task.as_str())
            .expect("the task is printed");
        assert_eq!(last["state"], "COMPLETED", "{last}");
    }
}

/// A gRPC interface nobody listens on: the call says which call on which agent could not connect
/// and why, and is a failure worth retrying (the dashboard shows the agent unreachable, then
/// reconnecting), never a state of the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_interface_that_is_down_is_unreachable_and_says_why() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = closed.local_addr().unwrap();
    drop(closed);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = serde_json::json!({
        "name": "gone", "description": "", "version": "1",
        "supportedInterfaces": [{"url": dead.to_string(), "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    });
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || async move { axum::Json(card) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = connect(&url, Binding::Grpc, None).await;
    let err = client.get_task("t-1", None).await.unwrap_err();
    assert!(err.is_retryable(), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("GetTask on gone") && msg.contains("refused"), "{msg}");
    let out = crate::cli::run(&["get", &url, "t-1"], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        crate::cli::stderr(&out).contains("refused"),
        "{}",
        crate::cli::stderr(&out)
    );
}

/// A gRPC server that takes the connection and never answers: the call ends at the request
/// timeout as `Unreachable`, worth a retry, rather than waiting for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_nobody_answers_ends_at_the_timeout() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            held.push(conn);
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = serde_json::json!({
        "name": "silent", "description": "", "version": "1",
        "supportedInterfaces": [{"url": silent_addr.to_string(), "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    });
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || async move { axum::Json(card) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let opts = a2a_watch::a2a::ClientOptions {
        request_timeout: std::time::Duration::from_secs(1),
        ..Default::default()
    };
    let client = a2a_watch::a2a::Client::connect(&url, opts).await.unwrap();
    let err = client.get_task("t-1", None).await.unwrap_err();
    assert!(
        matches!(err, a2a_watch::a2a::Error::Unreachable { .. }) && err.is_retryable(),
        "{err}"
    );
    assert!(err.to_string().contains("no reply within 1s"), "{err}");
}
