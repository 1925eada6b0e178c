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

// ---- replay in bounded memory ----

const BIN: &str = env!("CARGO_BIN_EXE_a2a-watch");

/// A recording of `events` status snapshots of one task, each with `text_bytes` of text, one
/// millisecond apart: its size grows with `events`, the store it replays to does not.
fn recording(path: &std::path::Path, events: usize, text_bytes: usize) {
    use std::io::Write;
    let header = json!({"recording": "a2a-watch", "format": 1, "version": "0", "started": "2026-10-06T09:00:00Z",
        "agents": [{"name": "ops", "url": "http://127.0.0.1:9"}]});
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(file, "{header}").unwrap();
    for n in 0..events {
        let text = format!("{n:08} {}", "x".repeat(text_bytes));
        let task = json!({"id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": text}]}}});
        let rec = json!({"snapshot": {"agent": 0, "task": task, "seen": "2026-10-06T09:00:00Z"}});
        writeln!(file, "{}", json!({"ms": n, "rec": rec})).unwrap();
    }
    file.flush().unwrap();
}

/// The peak resident memory of `replay ARGS`, in KiB, and its exit status, from the kernel's
/// account of that one child (wait4), stdout thrown away.
#[allow(clippy::zombie_processes)] // reaped by wait4, which std's Child cannot see
fn replay_peak_kib(args: &[&str]) -> (u64, i32) {
    let child = std::process::Command::new(BIN)
        .arg("replay")
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and wait4 fills it for the child we started.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (usage.ru_maxrss as u64, libc::WEXITSTATUS(status))
}

/// `replay` reads a recording line by line and holds only what it needs: a recording forty times
/// larger replays, with --json and to a snapshot, in about the same memory.
#[test]
fn a_large_recording_replays_in_bounded_memory() {
    let dir = scratch("replay-memory");
    let (small, large) = (dir.join("small.ndjson"), dir.join("large.ndjson"));
    recording(&small, 100, 4096);
    recording(&large, 4000, 16 * 1024);
    let large_bytes = std::fs::metadata(&large).unwrap().len();
    assert!(large_bytes > 60 << 20, "{large_bytes}");
    let svg = dir.join("end.svg");
    for args in [vec!["--json"], vec!["--snapshot", svg.to_str().unwrap()]] {
        let run = |file: &std::path::Path| {
            // A screenshot never replaces a file (README "Security"), so each run starts without one.
            let _ = std::fs::remove_file(&svg);
            let mut all = args.clone();
            all.push(file.to_str().unwrap());
            replay_peak_kib(&all)
        };
        let ((small_kib, small_exit), (large_kib, large_exit)) = (run(&small), run(&large));
        assert_eq!((small_exit, large_exit), (0, 0), "{args:?}");
        assert!(
            large_kib < small_kib + 20 * 1024,
            "{args:?}: {large_kib} KiB for {large_bytes} bytes, {small_kib} KiB for the small one"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A line over 16 MiB is refused by file and line number, before it is held whole.
#[test]
fn a_recording_line_over_16_mib_is_refused_by_number() {
    let dir = scratch("replay-long-line");
    let file = dir.join("long.ndjson");
    recording(&file, 2, 10);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(br#"{"ms":5,"rec":{"health":{"agent":0,"health":""#);
    bytes.extend(std::iter::repeat_n(b'x', 16 << 20));
    bytes.extend_from_slice(b"\"}}}\n");
    std::fs::write(&file, bytes).unwrap();
    let path = file.to_str().unwrap();
    for args in [vec!["--json", path], vec![path, "--snapshot", "/dev/null"]] {
        let out = std::process::Command::new(BIN)
            .arg("replay")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("{path}:4: a line longer than 16 MiB")), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
