//! Data and file parts reach the official Python SDK agents (1.0 and 0.3) as we meant them: the
//! SDK keeps the message it parsed in the task's history, and GetTask gives it back. (The 1.x
//! SDK keeps data as a protobuf Struct, whose numbers are doubles: 900 comes back as 900.0, so the
//! data here holds none.)

use base64::Engine;
use serde_json::{Value, json};

use crate::cli::{lines, run, stderr};
use crate::peers::{Peer, Sdk};

async fn parts_reach(sdk: Sdk) {
    let peer = Peer::start(sdk, &[]);
    let dir = std::env::temp_dir().join(format!("a2a-watch-sdk-parts-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plot.png");
    let bytes = [0x89, b'P', b'N', b'G', 0, 255];
    std::fs::write(&file, bytes).unwrap();
    let sent = run(
        &[
            "send",
            &peer.url,
            "run tests",
            "--data",
            r#"{"branch": "main", "dry": true}"#,
            "--file",
            file.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert!(sent.status.success(), "{sdk:?}: {}", stderr(&sent));
    let task = lines(&sent)[0]["task"].as_str().unwrap().to_string();
    let got = run(&["get", &peer.url, &task, "--history", "10", "--json"], &[]).await;
    assert!(got.status.success(), "{sdk:?}: {}", stderr(&got));
    let task: Value = serde_json::from_slice(&got.stdout).unwrap();
    let asked = task["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "ROLE_USER")
        .unwrap_or_else(|| panic!("{sdk:?}: no user message in {task}"));
    assert_eq!(
        asked["parts"],
        json!([
            {"text": "run tests"},
            {"data": {"branch": "main", "dry": true}},
            {"raw": base64::engine::general_purpose::STANDARD.encode(bytes), "mediaType": "image/png", "filename": "plot.png"}
        ]),
        "{sdk:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_1_x_reads_data_and_file_parts() {
    parts_reach(Sdk::Python13).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_0_3_reads_data_and_file_parts() {
    parts_reach(Sdk::Python03).await;
}
