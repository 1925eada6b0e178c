//! Real peers for the tests: agents built with the official SDKs (tests/interop), started on
//! free loopback ports and stopped when dropped. Each is told to exit when its stdin closes, so
//! even a test binary that is killed leaves no agent behind.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sdk {
    /// a2a-sdk 1.3.0 (Python), JSON-RPC and HTTP+JSON.
    Python13,
    /// The newest a2a-sdk 0.3.x (Python), JSON-RPC.
    Python03,
    /// @a2a-js/sdk 1.3.0 on express (Node >= 20), JSON-RPC and HTTP+JSON.
    Js13,
}

impl Sdk {
    fn setup_script(self) -> PathBuf {
        interop_dir().join(match self {
            Sdk::Python13 => "python/setup.sh",
            Sdk::Python03 => "python03/setup.sh",
            Sdk::Js13 => "js/setup.sh",
        })
    }

    fn command(self) -> Command {
        let (program, agent) = match self {
            Sdk::Python13 => (interop_dir().join(".venv-py13/bin/python"), "python/agent.py"),
            Sdk::Python03 => (interop_dir().join(".venv-py03/bin/python"), "python03/agent.py"),
            Sdk::Js13 => (PathBuf::from("node"), "js/agent.mjs"),
        };
        let mut cmd = Command::new(program);
        cmd.arg(interop_dir().join(agent));
        cmd
    }
}

/// Runs the SDK's setup script once per test process (idempotent and quick once installed).
/// A registry that cannot be reached fails the tests loudly instead of skipping them.
pub fn ensure_installed(sdk: Sdk) {
    static DONE: OnceLock<Mutex<Vec<Sdk>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(Vec::new()));
    let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
    if done.contains(&sdk) {
        return;
    }
    let script = sdk.setup_script();
    let out = Command::new("bash").arg(&script).output().expect("bash runs");
    assert!(
        out.status.success(),
        "{} failed (is the registry, PyPI or npm, reachable?):\n{}\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    done.push(sdk);
}

pub struct Peer {
    child: Child,
    pub url: String,
}

impl Peer {
    pub fn start(sdk: Sdk, args: &[&str]) -> Peer {
        ensure_installed(sdk);
        let mut child = sdk
            .command()
            .args(["--port", "0", "--exit-with-parent", "--log-level", "error"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the peer starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("READY ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let url = loop {
            if let Ok(url) = rx.recv_timeout(Duration::from_millis(100)) {
                break url;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{sdk:?} peer exited before it was ready: {status}");
            }
            assert!(Instant::now() < deadline, "{sdk:?} peer not ready within 60 s");
        };
        Peer { child, url }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
