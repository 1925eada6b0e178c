//! Record and replay (issue 13), through the real binary: the demo's agents and planner recorded
//! with `--json --record`, replayed headless to the same lines and the same final state of every
//! task; replayed in tmux to the same screen at the same recording time; broken recordings give
//! errors naming the place, not panics; no credential is ever recorded. And the screenshot's SVG,
//! from a TestBackend screen, read back with an XML parser; the replay's clock (`run::playback`)
//! on its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::demo_client::TOKEN as TOKEN_OF_DEMO;
use a2a_watch::a2a::{Binding, SendMessageConfiguration, StreamResponse, Task};
use a2a_watch::app::App;
use a2a_watch::app::keys::KeyMap;
use a2a_watch::demo::{self, DemoConfig};
use a2a_watch::event::{Event, Health};
use a2a_watch::record::{Recorder, Recording};
use a2a_watch::run::playback::Playback;
use a2a_watch::run::{Clock, shot};
use a2a_watch::store::Store;
use a2a_watch::theme::Theme;
use a2a_watch::ui::svg;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};

use crate::tui::{Scratch, Tmux, sh_quote};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-watch");
const TOKEN: &str = "deployer-token-never-recorded";
const HEADER_NAME: &str = "X-Probe-Never-Recorded";
const HEADER_VALUE: &str = "probe-value-never-recorded";

/// The demo's four agents and its planner, recorded for `seconds` by the real binary with
/// `--json --record` (the deployer's token from its env var, an extra header given too), then
/// interrupted as a person would. Returns the recording's path and what `--json` printed.
async fn record_demo(scratch: &Scratch, seconds: u64) -> (PathBuf, String) {
    let agents = demo::start(DemoConfig {
        base_port: 0,
        token: TOKEN.into(),
        step: Duration::from_millis(150),
    })
    .await
    .expect("the demo agents start");
    let context = uuid::Uuid::new_v4().to_string();
    let url = |name: &str| agents.url(name).to_string();
    let planner = demo::planner::Planner::connect(url, TOKEN, Duration::from_millis(200), context.clone())
        .await
        .expect("the planner connects");
    let file = scratch.0.join("demo.ndjson");
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["--json", "--record"]).arg(&file);
    for a in &agents.agents {
        cmd.arg("--agent").arg(format!("{}={}", a.name, a.url));
    }
    cmd.args([
        "--context",
        &context,
        "--header",
        &format!("{HEADER_NAME}: {HEADER_VALUE}"),
    ])
    .arg("--log-file")
    .arg(scratch.0.join("a2a-watch.log"))
    .env("A2A_TOKEN_DEPLOYER", TOKEN)
    .env_remove("A2A_TOKEN")
    .env("XDG_CONFIG_HOME", &scratch.0)
    .env("XDG_STATE_HOME", &scratch.0)
    .stdout(std::process::Stdio::piped())
    .kill_on_drop(true);
    let child = cmd.spawn().expect("the binary runs");
    let planning = tokio::spawn(planner.run());
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    // SAFETY: kill only sends a signal to the child we started.
    unsafe {
        libc::kill(child.id().expect("still running") as i32, libc::SIGINT);
    }
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("--json ends on Ctrl-C")
        .expect("the binary runs");
    assert!(out.status.success(), "exit {:?}", out.status);
    planning.abort();
    agents.shutdown().await;
    (file, String::from_utf8(out.stdout).expect("UTF-8"))
}

fn replay(args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .arg("replay")
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The last state and text each task's lines gave it.
fn final_states(ndjson: &str) -> BTreeMap<String, (String, String)> {
    let mut last = BTreeMap::new();
    for line in ndjson.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not NDJSON: {line}: {e}"));
        if let (Some(task), Some(state)) = (v["task"].as_str(), v["state"].as_str()) {
            last.insert(
                task.to_string(),
                (state.to_string(), v["text"].as_str().unwrap_or("").to_string()),
            );
        }
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_demo_replays_to_the_same_tasks_and_holds_no_credential() {
    let scratch = Scratch::new("record");
    let (file, live) = record_demo(&scratch, 8).await;
    let recorded = std::fs::read_to_string(&file).expect("the recording was written");

    for secret in [TOKEN, HEADER_NAME, HEADER_VALUE] {
        assert!(!recorded.contains(secret), "{secret:?} is in the recording");
    }
    let header: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(header["recording"], "a2a-watch");
    assert_eq!(header["format"], 1);
    let names: Vec<&str> = (header["agents"].as_array().unwrap().iter())
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["test-runner", "code-reviewer", "deployer", "assistant"]);

    // The recording's own lines carry the --json schema: a script reading --json reads it.
    let live_states = final_states(&live);
    assert!(live_states.len() >= 3, "the planner's tasks were seen:\n{live}");
    assert!(
        live_states
            .values()
            .any(|(s, _)| s == "AUTH_REQUIRED" || s == "COMPLETED"),
        "{live_states:?}"
    );
    let body: String = recorded.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(final_states(&body), live_states);

    let out = replay(&["--json", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let again = String::from_utf8(out.stdout).unwrap();
    assert_eq!(final_states(&again), live_states);
    assert_eq!(again, live, "replay --json prints the lines --json printed, in order");
}

/// The screen of `replay FILE --at TIME` (paused there) at a size, once it is drawn.
fn replayed_screen(file: &Path, at: &str, width: u16, height: u16) -> (Tmux, String) {
    // In the recording's directory: the screenshot key writes there.
    let script = format!(
        "cd {}; {} replay {} --at {at}; echo EXITED $?; exec sleep 60",
        sh_quote(&file.parent().unwrap().display().to_string()),
        sh_quote(BIN),
        sh_quote(&file.display().to_string())
    );
    let tmux = Tmux::start(&script, width, height, &[("TZ", "UTC")]);
    tmux.wait_for("the replay at its time", false, |s| {
        s.contains("replay ") && s.contains('⏸')
    });
    // The first frame is drawn whole, but give the terminal a moment to show all of it.
    std::thread::sleep(Duration::from_millis(300));
    let screen = tmux.capture(false);
    (tmux, screen)
}

/// The replay's clock as its banner shows it.
fn clock(ms: u64) -> String {
    format!("replay {:02}:{:02} /", ms / 60_000, ms / 1000 % 60)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replays_show_the_same_screen_at_the_same_recording_time() {
    let scratch = Scratch::new("replay-tui");
    let (file, _) = record_demo(&scratch, 6).await;
    let recording = Recording::read(&file).unwrap();
    let middle = recording.duration_ms() / 2;
    let at = format!("{middle}ms");
    // `]` goes to the next change; `[` back to before it, where the change before it left things.
    let arrivals: Vec<u64> = recording.entries().unwrap().map(|e| e.unwrap().ms).collect();
    let next = *arrivals
        .iter()
        .find(|&&ms| ms > middle)
        .expect("a change after the middle");
    let before = arrivals.iter().rev().find(|&&ms| ms < next).map_or(0, |&ms| ms);
    for (width, height) in [(80, 24), (160, 45)] {
        let (first, screen) = replayed_screen(&file, &at, width, height);
        let (_second, again) = replayed_screen(&file, &at, width, height);
        assert_eq!(screen, again, "two replays at {width}x{height}, {at} in");
        assert!(screen.contains(&clock(middle)), "{screen}");
        assert!(
            screen.contains("test-runner") && screen.contains("deployer"),
            "{screen}"
        );

        first.send_keys("]");
        first.wait_for("the next change", false, |s| {
            s.contains(&clock(next)) && s.contains('⏸')
        });
        first.send_keys("[");
        first.wait_for("back before it", false, |s| s.contains(&clock(before)));
        first.send_keys("Space");
        first.wait_for("playing", false, |s| s.contains("▶ x1"));
        first.send_keys("Space");
        first.wait_for("paused again", false, |s| s.contains('⏸'));
        // What would send is refused with a note.
        first.send_keys("x");
        first.wait_for("the note", false, |s| s.contains("nothing is sent"));
        // The screenshot key: an SVG of the screen in the current directory, its name flashed.
        first.send_keys("S");
        let flashed = first.wait_for("the screenshot's path", false, |s| s.contains("screenshot: a2a-watch-"));
        let name = flashed
            .split("screenshot: ")
            .nth(1)
            .unwrap()
            .split(".svg")
            .next()
            .unwrap();
        let shot = std::fs::read_to_string(scratch.0.join(format!("{name}.svg"))).expect("the screenshot file");
        roxmltree::Document::parse(&shot).expect("a well-formed SVG");
        assert!(
            shot.contains(&format!("width=\"{:.1}\"", f32::from(width) * 8.4)),
            "at the screen's size"
        );
        first.send_keys("q");
        first.wait_for("the replay to quit", false, |s| s.contains("EXITED 0"));
    }
}

/// The replay's clock, without a screen: paused, nothing comes; playing, each event comes when
/// due at the speed, and at the end it stops and says so once. It never sends, and its keys give
/// way to a box being typed in.
#[tokio::test]
async fn the_replay_clock_brings_events_when_due_and_stops_at_the_end() {
    let scratch = Scratch::new("replay-clock");
    let file = small_recording(&scratch);
    let recording = Recording::read(&file).unwrap();
    let started = recording.header.started;
    let mut app = App::new(recording.header.store(), KeyMap::default(), Theme::default());
    let mut paused = Playback::new(recording, false, 100.0).unwrap();
    assert!(paused.silent().is_some(), "a replay sends nothing");
    paused.seek(&mut app, 1000).unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(100), paused.burst())
            .await
            .is_err(),
        "paused: nothing comes"
    );
    assert_eq!(paused.banner().as_deref(), Some("replay 00:01 / 00:05 ⏸"));
    // The question popped up (the app's default): space is typed into its answer.
    let space = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(' '));
    assert!(!paused.on_key(&mut app, &space).unwrap());

    let begun = std::time::Instant::now();
    let mut playing = Playback::new(Recording::read(&file).unwrap(), true, 100.0).unwrap();
    let mut events = 0;
    while playing.take_note().is_none() {
        events += playing
            .burst()
            .await
            .unwrap()
            .expect("a recording never runs dry")
            .len();
    }
    assert_eq!(events, 3);
    // 5s of recording at 100x: 50ms at least.
    assert!(begun.elapsed() >= Duration::from_millis(50));
    assert_eq!(playing.now(), started + jiff::SignedDuration::from_secs(5));
    assert_eq!(playing.banner().as_deref(), Some("replay 00:05 / 00:05 ⏸"));
    assert_eq!(playing.take_note(), None, "said once");
}

fn small_recording(scratch: &Scratch) -> PathBuf {
    let path = scratch.0.join("small.ndjson");
    let agents = vec![(Some("ops".to_string()), "http://127.0.0.1:9".to_string())];
    let mut store = Store::new(agents.clone());
    let mut recorder = Recorder::create(&path, agents, false).unwrap();
    let task: Task = serde_json::from_value(json!({"id":"t1","contextId":"c",
        "status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m","role":"ROLE_AGENT",
        "parts":[{"text":"Which branch?"}]}}}))
    .unwrap();
    let done: StreamResponse = serde_json::from_value(json!({"statusUpdate":{"taskId":"t1","contextId":"c",
        "status":{"state":"TASK_STATE_COMPLETED"}}}))
    .unwrap();
    for ev in [
        Event::Health {
            agent: 0,
            health: Health::Streaming,
        },
        Event::Snapshot {
            agent: 0,
            task,
            seen: Timestamp::UNIX_EPOCH,
        },
        Event::Update {
            agent: 0,
            event: done,
            seen: Timestamp::UNIX_EPOCH,
        },
    ] {
        recorder.apply(&mut store, ev, None);
    }
    recorder.flush().unwrap();
    // The task completes five seconds in (recorded here, everything arrived at once).
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, last) = text.trim_end().rsplit_once('\n').unwrap();
    let at = last.find("\"ms\":").unwrap() + 5;
    let digits = last[at..].find(',').unwrap();
    let last = format!("{}5000{}", &last[..at], &last[at + digits..]);
    std::fs::write(&path, format!("{head}\n{last}\n")).unwrap();
    path
}

#[test]
fn cut_and_broken_recordings_give_errors_not_panics() {
    let scratch = Scratch::new("broken");
    let whole = std::fs::read(small_recording(&scratch)).unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = scratch.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    };
    let all = replay(&["--json", &write("whole.ndjson", &whole)]);
    let all_lines = String::from_utf8(all.stdout).unwrap();
    assert_eq!(all_lines.lines().count(), 3, "{all_lines}");

    // Killed mid-write: up to the last whole line, and a note.
    let cut = write("cut.ndjson", &whole[..whole.len() - 20]);
    let out = replay(&["--json", &cut]);
    assert!(out.status.success());
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        lines,
        all_lines.lines().take(2).map(|l| format!("{l}\n")).collect::<String>()
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("ends inside a line"));

    let text = String::from_utf8(whole.clone()).unwrap();
    let mut middle: Vec<&str> = text.lines().collect();
    middle.insert(2, "{\"ms\":1,\"rec\":{\"nonsense\":{}}}");
    let newer = text.replacen("\"format\":1", "\"format\":7", 1);
    for (name, bytes, expected) in [
        (
            "garbage.ndjson",
            b"\x00\xff garbage\n".to_vec(),
            ":1: not an a2a-watch recording",
        ),
        ("empty.ndjson", Vec::new(), ":1: not an a2a-watch recording"),
        (
            "middle.ndjson",
            (middle.join("\n") + "\n").into_bytes(),
            ":3: not a recorded event",
        ),
        ("newer.ndjson", newer.into_bytes(), ":1: recorded in format 7"),
    ] {
        let path = write(name, &bytes);
        for args in [vec!["--json", &path], vec![&path, "--snapshot", "/dev/null"]] {
            let out = replay(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
            assert!(stderr.contains(&format!("{path}{expected}")), "{name}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
}

#[test]
fn a_snapshot_is_the_screen_at_its_time_as_svg_and_html() {
    let scratch = Scratch::new("snapshot");
    let file = small_recording(&scratch);
    let svg_path = scratch.0.join("shot.svg");
    let out = replay(&[
        file.to_str().unwrap(),
        "--snapshot",
        svg_path.to_str().unwrap(),
        "--at",
        "4s",
        "--size",
        "100x20",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    assert_eq!(doc.root_element().attribute("width"), Some("840.0"));
    assert!(
        svg.contains("Which") && !svg.contains("COMPLETED"),
        "the question, 4s in:\n{svg}"
    );
    let html_path = scratch.0.join("shot.html");
    let out = replay(&[file.to_str().unwrap(), "--snapshot", html_path.to_str().unwrap()]);
    assert!(out.status.success());
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg") && !html.contains("<script"));
    assert!(html.contains("COMPLETED"), "the end by default");
}

/// The SVG of a TestBackend screen, read back: well-formed, every cell's character at its
/// cell, the theme's colours, pinned.
#[test]
fn the_svg_of_a_screen_holds_every_cell_in_the_theme_colours() {
    let mut store = Store::new([(Some("ops & <dev>".to_string()), "http://127.0.0.1:9".to_string())]);
    let seen: Timestamp = "2026-10-06T09:00:00Z".parse().unwrap();
    for (id, state, text) in [
        (
            "t-review",
            "TASK_STATE_INPUT_REQUIRED",
            "Which base branch? <main> & \"release\"",
        ),
        ("t-tests", "TASK_STATE_WORKING", "running 42 tests"),
        ("t-build", "TASK_STATE_FAILED", "exit 1 \u{1b}[2J"),
    ] {
        let task: Task = serde_json::from_value(json!({"id":id,"contextId":"c","status":{"state":state,
            "timestamp":"2026-10-06T09:00:00Z","message":{"messageId":id,"role":"ROLE_AGENT","parts":[{"text":text}]}}}))
        .unwrap();
        store.apply(Event::Snapshot { agent: 0, task, seen });
    }
    store.apply(Event::Health {
        agent: 0,
        health: Health::Streaming,
    });
    let theme = Theme::default();
    let mut app = App::new(store, KeyMap::default(), theme.clone());
    app.set_now("2026-10-06T09:01:30Z".parse().unwrap());
    app.set_tz(TimeZone::UTC);
    let buffer = shot::render(&mut app, 100, 24);
    let out = svg::svg(&buffer, &theme);

    let doc = roxmltree::Document::parse(&out).expect("well-formed XML");
    let mut grid = vec![vec![' '; 100]; 24];
    for text in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let row = ((text.attribute("y").unwrap().parse::<f32>().unwrap() - 14.0) / 18.0).round() as usize;
        let xs: Vec<f32> = (text.attribute("x").unwrap().split(' '))
            .map(|x| x.parse().unwrap())
            .collect();
        let chars: Vec<char> = text.text().unwrap().chars().collect();
        assert_eq!(xs.len(), chars.len(), "a place for every character: {text:?}");
        for (x, c) in xs.iter().zip(chars) {
            grid[row][(x / 8.4).round() as usize] = c;
        }
    }
    for y in 0..24u16 {
        let expected: String = (0..100u16)
            .map(|x| buffer[(x, y)].symbol().chars().next().unwrap_or(' '))
            .collect();
        let got: String = grid[usize::from(y)].iter().collect();
        assert_eq!(got, expected, "row {y}");
    }
    let fills: Vec<&str> = doc.descendants().filter_map(|n| n.attribute("fill")).collect();
    // The theme's yellow (interrupted, bold), cyan (active) and light red (failure).
    assert!(
        out.contains("fill=\"#e5e510\" font-weight=\"bold\">INPUT_REQUIRED"),
        "{out}"
    );
    for colour in ["#11a8cd", "#f14c4c", "#1e1e1e"] {
        assert!(fills.contains(&colour), "{colour} in {fills:?}");
    }
    insta::assert_snapshot!(out);
}

/// The dashboard records too (the hook where it applies events): what it showed replays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_records_what_it_shows() {
    let agents = crate::demo_client::start_demo().await;
    let runner = crate::scenarios::connect(agents.url("test-runner"), Binding::JsonRpc, None).await;
    let deployer = crate::scenarios::connect(agents.url("deployer"), Binding::JsonRpc, Some(TOKEN_OF_DEMO)).await;
    for (client, text) in [
        (&runner, "run the tests of refunds, they will fail"),
        (&deployer, "deploy build 2026.10.06-1 to staging"),
    ] {
        let mut req = crate::scenarios::message(text);
        req.configuration = Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        });
        client.send_message(&req).await.expect("the task starts");
    }
    let scratch = Scratch::new("tui-record");
    let file = scratch.0.join("tui.ndjson");
    let args = format!(
        "--agent test-runner={} --agent deployer={} --record {}",
        sh_quote(agents.url("test-runner")),
        sh_quote(agents.url("deployer")),
        sh_quote(&file.display().to_string())
    );
    let tmux = crate::tui::start(&args, &scratch, &[("A2A_TOKEN_DEPLOYER", TOKEN_OF_DEMO)]);
    let before = tmux.pane("#{alternate_on}");
    tmux.wait_for("the two states", false, |s| {
        s.contains("✖ FAILED") && s.contains("◆ AUTH_REQUIRED")
    });
    crate::tui::quit_and_check_the_terminal(&tmux, &before);
    drop(tmux);
    agents.shutdown().await;

    let recorded = std::fs::read_to_string(&file).expect("the recording");
    assert!(!recorded.contains(TOKEN_OF_DEMO), "the token is not recorded");
    let out = replay(&["--json", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let states: Vec<String> = final_states(&String::from_utf8(out.stdout).unwrap())
        .into_values()
        .map(|(state, _)| state)
        .collect();
    assert!(
        states.contains(&"FAILED".to_string()) && states.contains(&"AUTH_REQUIRED".to_string()),
        "{states:?}"
    );
}
