//! The smaller items of the second trust pass (issue 20), through the real binary: saved
//! artifacts never take a Windows device name or an invisible character, and a part that does
//! not decode costs only itself; a recording replays line by line in bounded memory.

use serde_json::{Value, json};

use crate::cli::{run, stderr};
use crate::conventions::{b64, method, rpc_result, scratch, tree};
use crate::security::{Agent, card};

// ---- artifacts as files ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_artifacts_take_no_device_name_nor_invisible_character_and_a_bad_part_costs_only_itself() {
    let task = json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [
        {"artifactId": "a1", "name": "CON", "parts": [{"text": "console"}]},
        {"artifactId": "a2", "name": "files", "parts": [
            {"raw": b64(b"not base64? this is"), "filename": "nul.txt"},
            {"raw": "@@@ not base64 @@@", "filename": "broken.bin"},
            {"raw": b64(b"%PDF"), "filename": "pay\u{200b}roll\u{2028}.pdf"}]},
        {"artifactId": "a3", "name": "Lpt1 .log", "parts": [{"data": {"ok": true}}]}
    ]});
    let agent = Agent::start(card("a", json!({})), move |seen| {
        (method(seen) == "GetTask").then(|| rpc_result(seen, task.clone()))
    })
    .await;
    let dir = scratch("artifacts-smaller");
    let dir_arg = dir.to_str().unwrap();
    let out = run(&["get", &agent.url, "t-1", "--save-artifacts", dir_arg, "--json"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let written: Vec<String> = (report["files"].as_array().unwrap().iter())
        .map(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .strip_prefix(&format!("{dir_arg}/"))
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(written, ["_.txt", "_-2.txt", "pay_roll_.pdf", "_.log.json"]);
    assert_eq!(
        report["skipped"],
        json!([{"artifact": "files", "part": 2, "reason": "its bytes are not valid base64"}])
    );
    assert_eq!(std::fs::read(dir.join("_.txt")).unwrap(), b"console");
    assert_eq!(std::fs::read(dir.join("_-2.txt")).unwrap(), b"not base64? this is");
    assert_eq!(std::fs::read(dir.join("pay_roll_.pdf")).unwrap(), b"%PDF");
    assert_eq!(tree(&dir), ["_-2.txt", "_.log.json", "_.txt", "pay_roll_.pdf"]);

    let said = run(&["get", &agent.url, "t-1", "--save-artifacts", dir_arg, "--force"], &[]).await;
    assert!(said.status.success(), "{}", stderr(&said));
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(
        said.contains("skipped part 2 of artifact files: its bytes are not valid base64"),
        "{said}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
