//! End to end: the real binary in a real terminal (tmux), as a person runs it. The dashboard
//! shows the demo's states in their colours, and quitting gives the terminal back as it was.
//! Also the headless twin: `--json --until all-terminal` ends by itself.
//!
//! tmux is required: CI installs it (`.ci/run`). Without it these tests fail, saying so.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_watch::a2a::Binding;
use a2a_watch::a2a::{SendMessageConfiguration, StreamResponse};
use a2a_watch::demo::{self, DemoConfig};
use serde_json::Value;

use crate::demo_client::{TOKEN, start_demo};
use crate::scenarios::{connect, message};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-watch");
/// Time for the screen to show what it should: generous, since a loaded CI machine is slow, and
/// spent only when something is wrong.
const DEADLINE: Duration = Duration::from_secs(10);

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A name no other test (or test run) uses.
fn unique(what: &str) -> String {
    format!(
        "a2a-watch-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A scratch directory for config, state and logs, removed with the guard.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new(what: &str) -> Scratch {
        let dir = std::env::temp_dir().join(unique(what));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary with `--json --until all-terminal`, `config` as its config file and `args`, its
/// state and log in a scratch directory: the NDJSON lines it printed once it ended by itself
/// (in 30 s at most), successfully.
pub(crate) async fn json_until_all_terminal(config: &str, args: &[&str]) -> Vec<Value> {
    let scratch = Scratch::new("json");
    let config_path = scratch.0.join("config.toml");
    std::fs::write(&config_path, config).unwrap();
    let run = tokio::process::Command::new(BIN)
        .args(["--json", "--until", "all-terminal"])
        .args(args)
        .arg("--config")
        .arg(&config_path)
        .arg("--log-file")
        .arg(scratch.0.join("a2a-watch.log"))
        .env_remove("A2A_TOKEN")
        .env("XDG_STATE_HOME", &scratch.0)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("--until all-terminal ends by itself")
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not NDJSON: {l}: {e}")))
        .collect()
}

/// One tmux server of our own (its own socket, no user config) with one detached session of a
/// fixed size; killed, with everything in it, when dropped.
pub(crate) struct Tmux {
    socket: String,
    session: String,
}

fn tmux_ok(args: &[&str]) -> Output {
    let out = Command::new("tmux").args(args).output().unwrap_or_else(|e| {
        panic!(
            "cannot run tmux ({e}): the end-to-end tests need tmux installed (CI installs it in .ci/run; \
             locally: apt-get install tmux)"
        )
    });
    assert!(
        out.status.success(),
        "tmux {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Tmux {
    /// Starts `script` (run by sh) in a `width`x`height` terminal, with `env` set.
    pub(crate) fn start(script: &str, width: u16, height: u16, env: &[(&str, &str)]) -> Tmux {
        let tmux = Tmux {
            socket: unique("sock"),
            session: unique("tui"),
        };
        let (w, h) = (width.to_string(), height.to_string());
        let mut args = vec![
            "-L",
            &tmux.socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            &tmux.session,
            "-x",
            &w,
            "-y",
            &h,
        ];
        let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for e in &env {
            args.extend(["-e", e]);
        }
        args.extend(["sh", "-c", script]);
        tmux_ok(&args);
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        let mut all = vec!["-L", &self.socket];
        all.extend(args);
        String::from_utf8_lossy(&tmux_ok(&all).stdout).into_owned()
    }

    /// The screen as text; with `colours`, with the escape codes of its colours and attributes.
    pub(crate) fn capture(&self, colours: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", &self.session];
        if colours {
            args.push("-e");
        }
        self.run(&args)
    }

    pub(crate) fn send_keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", &self.session, keys]);
    }

    /// A tmux format about the pane, e.g. `#{alternate_on}`.
    pub(crate) fn pane(&self, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", &self.session, format])
            .trim()
            .to_string()
    }

    /// Polls the screen until `done` says yes, or fails with the last screen after the deadline.
    pub(crate) fn wait_for(&self, what: &str, colours: bool, mut done: impl FnMut(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture(colours);
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; the screen:\n{}",
                self.capture(false)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
    }
}

/// Enter in the answer box titled `title`; if it came within the guard after the box opened
/// (Enter that soon does not send, it may have been typed for something else), once more.
pub(crate) fn send_answer(tmux: &Tmux, title: &str) {
    tmux.send_keys("Enter");
    let screen = tmux.wait_for("the answer sent, or the guard's note", false, |screen| {
        screen.contains("press ⏎ again") || !screen.contains(title)
    });
    if screen.contains("press ⏎ again") {
        // Past the guard (half a second from the box opening), as a person would be.
        std::thread::sleep(Duration::from_millis(600));
        tmux.send_keys("Enter");
    }
}

/// Quotes a string for sh.
pub(crate) fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What the escape sequences (SGR) directly in front of the first `text` on a
/// `capture-pane -e` screen set: bold, and the foreground as a 256-colour index.
fn style_before(screen: &str, text: &str) -> Option<(bool, Option<u16>)> {
    let at = screen.find(text)?;
    let mut start = at;
    while let Some(esc) = screen[..start].rfind("\u{1b}[") {
        let params = screen[esc + 2..start].strip_suffix('m');
        if !params.is_some_and(|p| p.chars().all(|c| c.is_ascii_digit() || c == ';')) {
            break;
        }
        start = esc;
    }
    let mut codes = screen[start..at]
        .split("\u{1b}[")
        .filter_map(|s| s.strip_suffix('m'))
        .flat_map(|p| p.split(';'))
        .map(|c| c.parse::<u16>().unwrap_or(0));
    let (mut bold, mut fg) = (false, None);
    while let Some(code) = codes.next() {
        match code {
            0 => (bold, fg) = (false, None),
            1 => bold = true,
            22 => bold = false,
            30..=37 => fg = Some(code - 30),
            90..=97 => fg = Some(code - 90 + 8),
            39 => fg = None,
            38 | 48 => {
                let colour = match codes.next() {
                    Some(5) => codes.next(),
                    Some(2) => codes.by_ref().take(3).last().and(None),
                    _ => None,
                };
                if code == 38 {
                    fg = colour;
                }
            }
            _ => {}
        }
    }
    Some((bold, fg))
}

/// A script for sh that runs the binary with `args`, then says how it ended and in what mode
/// it left the terminal, and stays (so the pane can be read) until the guard kills it.
fn script(args: &str, log: &Scratch) -> String {
    format!(
        "unset NO_COLOR; {} {args} --log-file {}; \
         echo EXITED $?; \
         printf 'STTY %s\\n' \"$(stty -a | tr ' ;' '\\n\\n' | grep -x -e -icanon -e icanon -e -echo -e echo | tr '\\n' ' ')\"; \
         exec sleep 60",
        sh_quote(BIN),
        sh_quote(&log.0.join("a2a-watch.log").display().to_string()),
    )
}

/// Keeps the config and state lookups away from the user's own files.
fn env_for(scratch: &Scratch) -> Vec<(&'static str, String)> {
    let dir = scratch.0.display().to_string();
    ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"]
        .into_iter()
        .map(|k| (k, dir.clone()))
        .collect()
}

/// Starts `args` in a 120x32 terminal.
pub(crate) fn start(args: &str, scratch: &Scratch, extra: &[(&str, &str)]) -> Tmux {
    start_sized(args, scratch, extra, 120, 32)
}

/// Starts `args` in a `width`x`height` terminal.
pub(crate) fn start_sized(args: &str, scratch: &Scratch, extra: &[(&str, &str)], width: u16, height: u16) -> Tmux {
    let env = env_for(scratch);
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend(extra);
    Tmux::start(&script(args, scratch), width, height, &all)
}

/// `q` quits, and the terminal is as it was: canonical mode with echo, the main screen, the
/// mouse not reported, the cursor shown, and the dashboard gone.
pub(crate) fn quit_and_check_the_terminal(tmux: &Tmux, alternate_before: &str) {
    // A question may have opened its answer box by itself, where `q` is text: Esc first
    // closes it ("later"); should another question pop up in between, go again.
    end_and_check_the_terminal(tmux, alternate_before, |tmux| {
        tmux.send_keys("Escape");
        tmux.send_keys("q");
    });
}

/// `end` ends the dashboard (tried again every 2 s while it runs), and the terminal is as it
/// was, as after `q`.
fn end_and_check_the_terminal(tmux: &Tmux, alternate_before: &str, end: impl Fn(&Tmux)) {
    assert_eq!(
        tmux.pane("#{alternate_on}"),
        "1",
        "the dashboard is on the alternate screen"
    );
    let start = Instant::now();
    let after = loop {
        end(tmux);
        let pressed = Instant::now();
        let screen = loop {
            let screen = tmux.capture(false);
            if screen.contains("STTY") || pressed.elapsed() > Duration::from_secs(2) {
                break screen;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if screen.contains("STTY") {
            break screen;
        }
        assert!(start.elapsed() < DEADLINE, "it did not end; the screen:\n{screen}");
    };
    assert!(after.contains("EXITED 0"), "exit status 0:\n{after}");
    let stty = after.lines().find(|l| l.starts_with("STTY")).unwrap_or_default();
    let modes: Vec<&str> = stty.split_whitespace().skip(1).collect();
    assert!(
        modes.contains(&"icanon") && modes.contains(&"echo"),
        "the terminal is back in canonical mode with echo (not raw): {stty:?}"
    );
    assert_eq!(
        tmux.pane("#{alternate_on}"),
        alternate_before,
        "back on the main screen"
    );
    assert_eq!(tmux.pane("#{mouse_any_flag}"), "0", "mouse reporting is off again");
    assert_eq!(tmux.pane("#{cursor_flag}"), "1", "the cursor is shown again");
    assert!(
        !after.contains("a2a-watch  "),
        "the dashboard is gone from the screen:\n{after}"
    );
}

/// The dashboard on demo agents run here, with one task of each kind started by the test:
/// the states show in the theme's colours, and quitting gives the terminal back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_colours_states_and_quitting_restores_the_terminal() {
    let agents = start_demo().await;
    let req = |text: &str| {
        let mut req = message(text);
        req.configuration = Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        });
        req
    };
    let runner = connect(agents.url("test-runner"), Binding::JsonRpc, None).await;
    let reviewer = connect(agents.url("code-reviewer"), Binding::Rest, None).await;
    let deployer = connect(agents.url("deployer"), Binding::JsonRpc, Some(TOKEN)).await;
    for (client, text) in [
        (&runner, "run the tests of payments-api"),
        (&runner, "run the tests of refunds, they will fail"),
        (&reviewer, "review this diff of payments-api"),
        (&deployer, "deploy build 2026.10.06-1 to staging"),
    ] {
        client.send_message(&req(text)).await.expect("the task starts");
    }
    let scratch = Scratch::new("tui");
    let args = ["test-runner", "code-reviewer", "deployer"]
        .map(|n| format!("--agent {n}={}", sh_quote(agents.url(n))))
        .join(" ");
    let tmux = start(&args, &scratch, &[("A2A_TOKEN_DEPLOYER", TOKEN)]);
    let before = tmux.pane("#{alternate_on}");

    let wanted = ["◆ INPUT_REQUIRED", "◆ AUTH_REQUIRED", "✔ COMPLETED", "✖ FAILED"];
    let screen = tmux.wait_for("the four states", false, |screen| {
        wanted.iter().all(|w| screen.contains(w))
    });
    for agent in ["test-runner", "code-reviewer", "deployer"] {
        assert!(screen.contains(agent), "{agent} is on screen:\n{screen}");
    }
    // The dark theme's colours: green, light red, and yellow drawn bold for what waits on you.
    const GREEN: u16 = 2;
    const YELLOW: u16 = 3;
    const LIGHT_RED: u16 = 9;
    let coloured = tmux.capture(true);
    assert_eq!(
        style_before(&coloured, "✔ COMPLETED"),
        Some((false, Some(GREEN))),
        "{coloured}"
    );
    assert_eq!(
        style_before(&coloured, "✖ FAILED"),
        Some((false, Some(LIGHT_RED))),
        "{coloured}"
    );
    for waiting in ["◆ INPUT_REQUIRED", "◆ AUTH_REQUIRED"] {
        assert_eq!(
            style_before(&coloured, waiting),
            Some((true, Some(YELLOW))),
            "{waiting}: {coloured}"
        );
    }
    quit_and_check_the_terminal(&tmux, &before);
    drop(tmux);
    agents.shutdown().await;
}

/// `a2a-watch demo`, the newcomer's one command: agents, planner and dashboard come up, the
/// planner's work shows, and quitting stops it all and restores the terminal.
#[test]
fn the_demo_comes_up_and_quits_cleanly() {
    let scratch = Scratch::new("demo");
    let tmux = start("demo --base-port 0 --delay 0.1", &scratch, &[]);
    let before = tmux.pane("#{alternate_on}");
    // What was seen counts: a question may be answered, or covered by its box, between looks.
    let wanted = ["INPUT_REQUIRED", "AUTH_REQUIRED", "COMPLETED", "streaming"];
    let mut seen = [false; 4];
    tmux.wait_for("the demo's states", false, |screen| {
        for (i, w) in wanted.iter().enumerate() {
            seen[i] |= screen.contains(w);
        }
        seen.iter().all(|s| *s)
            && ["test-runner", "code-reviewer", "deployer", "assistant"]
                .iter()
                .all(|a| screen.contains(a))
    });
    quit_and_check_the_terminal(&tmux, &before);
}

/// SIGTERM, SIGHUP or SIGINT (`kill`, a closed terminal, systemd) ends the dashboard as `q`
/// does: exit 0 and the terminal restored, not killed in raw mode on the alternate screen.
#[test]
fn a_signal_ends_the_dashboard_and_restores_the_terminal() {
    for signal in ["TERM", "HUP", "INT"] {
        let scratch = Scratch::new("signal");
        let tmux = start("demo --base-port 0 --delay 0.1", &scratch, &[]);
        let before = tmux.pane("#{alternate_on}");
        tmux.wait_for("the demo", false, |screen| screen.contains("streaming"));
        let shell = tmux.pane("#{pane_pid}");
        end_and_check_the_terminal(&tmux, &before, |_| {
            // The dashboard is the only child of the pane's shell while it runs.
            let _ = std::process::Command::new("pkill")
                .args([&format!("-{signal}"), "-P", &shell, "-x", "a2a-watch"])
                .status();
        });
    }
}

/// `--json --until all-terminal` against agents whose every task ends: it prints the tasks'
/// states as they change and stops by itself, with exit code 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_until_all_terminal_ends_by_itself() {
    let agents = demo::start(DemoConfig {
        base_port: 0,
        token: "unused".into(),
        step: Duration::from_millis(150),
    })
    .await
    .expect("the demo agents start");
    let url = agents.url("test-runner").to_string();
    let client = connect(&url, Binding::JsonRpc, None).await;
    let mut ids = Vec::new();
    for text in [
        "run the tests of payments-api",
        "run the tests of refunds, they will fail",
        // The slow one (ten times the pace: over ten seconds) is still working when the
        // binary, started after it, first lists the tasks, however long that start takes
        // within reason; the others may have ended by then.
        "run the slow tests of ledger",
    ] {
        let mut req = message(text);
        req.configuration = Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        });
        match client.send_message(&req).await.expect("the task starts") {
            StreamResponse::Task(t) => ids.push(t.id),
            other => panic!("expected a task, got {other:?}"),
        }
    }
    let lines = json_until_all_terminal("", &["--agent", &url]).await;
    for id in &ids {
        let states: Vec<&str> = lines
            .iter()
            .filter(|l| l["task"] == id.as_str())
            .filter_map(|l| l["state"].as_str())
            .collect();
        let last = states.last().copied();
        assert!(
            matches!(last, Some("COMPLETED" | "FAILED")),
            "task {id} ends terminal: {states:?}\n{lines:?}"
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l["task"] == ids[2].as_str() && l["class"] == "active"),
        "the slow run was watched while it worked:\n{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["health"] == "streaming" || l["health"] == "polling"),
        "an agent health line:\n{lines:?}"
    );
    agents.shutdown().await;
}

/// A question answered in the real binary: its box pops up, the answer typed with send-keys
/// goes to the agent, and the review completes with the branch typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_typed_into_the_box_completes_the_task() {
    let agents = start_demo().await;
    let reviewer = connect(agents.url("code-reviewer"), Binding::Rest, None).await;
    let mut req = message("review this diff of payments-api");
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    reviewer.send_message(&req).await.expect("the review starts");
    let scratch = Scratch::new("answer");
    let tmux = start(
        &format!("--agent {}", sh_quote(agents.url("code-reviewer"))),
        &scratch,
        &[],
    );
    let before = tmux.pane("#{alternate_on}");
    tmux.wait_for("the question's box", false, |screen| {
        screen.contains("code-reviewer asks") && screen.contains("Which base branch")
    });
    tmux.send_keys("release/2026.10");
    send_answer(&tmux, "code-reviewer asks");
    let screen = tmux.wait_for("the completed review", false, |screen| {
        screen.contains("✔ COMPLETED") && screen.contains("review against release/2026.10")
    });
    assert!(
        !screen.contains("code-reviewer asks"),
        "the box closed once the answer landed:\n{screen}"
    );
    quit_and_check_the_terminal(&tmux, &before);
    drop(tmux);
    agents.shutdown().await;
}
