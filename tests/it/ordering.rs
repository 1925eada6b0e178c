//! What the store must not take, and stalls re-checked (issue 20), against small agents on
//! loopback (the fake agents of `recovery`) and the real push receiver and binary: a status
//! stamped in the year 2999 does not freeze a task, an unstamped push does not move a waiting
//! task back, a quiet stream is asked with GetTask within 2x `quiet_after` even when the
//! listing lags, and a fleet of quiet streams keeps to the agent's `check_rate`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_watch::a2a::TaskState;
use a2a_watch::watch::WatchOptions;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::push::watch_pushed;
use crate::recovery::{Call, fake, frame, listing, not_found, opts, result, spec, sse, task, watch};
use crate::tui::json_until_all_terminal;

/// A task that keeps its WORKING row in the listing (an index that updates late: same row, same
/// timestamp), whose stream stays open and silent, and which GetTask says has COMPLETED.
fn lagging_listing(call: &Call) -> crate::recovery::Out {
    let mut stale = task("t1", "TASK_STATE_WORKING", "thinking");
    stale["status"]["timestamp"] = json!("2026-01-05T10:00:00Z");
    match call.method.as_str() {
        "ListTasks" => listing(call, vec![stale]),
        "GetTask" => {
            let mut done = task("t1", "TASK_STATE_COMPLETED", "done");
            done["status"]["timestamp"] = json!("2026-01-05T10:01:00Z");
            result(call, done)
        }
        "SubscribeToTask" => sse(vec![frame(call, json!({"task": stale}))], Duration::ZERO, true),
        _ => not_found(call),
    }
}

/// Through the binary, configured with `quiet_after = 0.5`: the task is seen COMPLETED within
/// 2x that of its stream going quiet, whatever the listing says. (Before, a task the listing
/// followed was asked about with GetTask only at 8x `quiet_after`: 7.5 s here.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_stream_is_re_checked_by_get_task_while_the_listing_lags() {
    let (url, fake) = fake(true, lagging_listing).await;
    let config = format!("quiet_after = 0.5\n\n[[agent]]\nname = \"lagging\"\nurl = \"{url}\"\n");
    let started = Instant::now();
    let lines = json_until_all_terminal(&config, &[]).await;
    let took = started.elapsed();
    let completed = lines.iter().any(|l| l["task"] == "t1" && l["state"] == "COMPLETED");
    assert!(completed, "t1 was printed COMPLETED");
    assert!(fake.count("GetTask") >= 1, "GetTask asked");
    assert_eq!(fake.count("SubscribeToTask"), 1);
    // Card, listing, subscription, 0.5 s of quiet, one GetTask: well under the old 7.5 s.
    assert!(took < Duration::from_secs(4), "COMPLETED after {took:?}");
}

/// Twenty quiet streams, `quiet_after` 100 ms, `check_rate` 5: their GetTasks come in groups of
/// at most 5 a second (a group's slots at one instant, so they share the wake-ups), not twenty at
/// once every 100 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_streams_are_re_checked_within_the_agents_check_rate() {
    let ids: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
    let (url, fake) = fake(true, |call| {
        let id = call.params["id"].as_str().unwrap_or_default().to_string();
        match call.method.as_str() {
            "ListTasks" => listing(call, vec![]),
            "GetTask" => result(call, task(&id, "TASK_STATE_WORKING", "thinking")),
            "SubscribeToTask" => sse(
                vec![frame(
                    call,
                    json!({"task": task(&id, "TASK_STATE_WORKING", "thinking")}),
                )],
                Duration::ZERO,
                true,
            ),
            _ => not_found(call),
        }
    })
    .await;
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut w = watch(
        spec(&url, &ids),
        WatchOptions {
            quiet_after: Duration::from_millis(100),
            check_rate: 5.0,
            ..opts()
        },
    );
    w.until("every stream quiet", |s| {
        s.tasks().filter(|t| t.quiet_since.is_some()).count() == 20
    })
    .await;
    w.drain(Duration::from_secs(2)).await;
    let times = fake.times("GetTask");
    assert!(times.len() >= 5, "{} GetTasks in over 2 s", times.len());
    // Groups of 5 a second: a span of s seconds touches at most ceil(s) + 1 of them.
    let span = *times.last().unwrap() - times[0];
    let groups = span.as_secs_f64().ceil() as usize + 1;
    assert!(times.len() <= 5 * groups, "{} GetTasks in {span:?} at 5/s", times.len());
    // A window of one second holds slots of two groups at most: the end of one, the next.
    let most_in_a_second = times
        .iter()
        .map(|t| {
            times
                .iter()
                .filter(|u| **u >= *t && **u - *t < Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap();
    assert!(
        most_in_a_second <= 10,
        "{most_in_a_second} GetTasks within one second at 5/s"
    );
    let together = times
        .windows(2)
        .filter(|w| w[1] - w[0] < Duration::from_millis(50))
        .count();
    assert!(together >= 2, "checks due together come together: {times:?}");
    assert_eq!(fake.count("SubscribeToTask"), 20, "every stream was kept");
    w.engine.shutdown().await;
}

/// An agent that pushes (no streaming) with one waiting task; the token it was given is kept
/// so the test can deliver as the agent would.
async fn pushing_agent() -> (String, Arc<Mutex<Option<String>>>) {
    let token = Arc::new(Mutex::new(None));
    let kept = token.clone();
    let (url, fake) = fake(false, move |call| match call.method.as_str() {
        "ListTasks" => listing(call, vec![]),
        "GetTask" => {
            let mut waiting = task("t1", "TASK_STATE_INPUT_REQUIRED", "Which repository?");
            waiting["status"]["timestamp"] = json!("2026-01-05T10:00:00Z");
            result(call, waiting)
        }
        "CreateTaskPushNotificationConfig" => {
            *kept.lock().unwrap() = call.params["token"].as_str().map(String::from);
            result(call, call.params.clone())
        }
        "DeleteTaskPushNotificationConfig" => result(call, json!({})),
        _ => not_found(call),
    })
    .await;
    fake.card.lock().unwrap()["capabilities"]["pushNotifications"] = json!(true);
    (url, token)
}

async fn deliver(url: &str, token: &str, body: Value) {
    let status = reqwest::Client::new()
        .post(url)
        .header("X-A2A-Notification-Token", token)
        .json(&body)
        .send()
        .await
        .expect("the receiver answers")
        .status();
    assert_eq!(status, 200, "{body}");
}

fn pushed_status(state: &str, text: &str, timestamp: Option<&str>) -> Value {
    let mut status = task("t1", state, text)["status"].clone();
    if let Some(at) = timestamp {
        status["timestamp"] = json!(at);
    }
    json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx", "status": status}})
}

/// Deliveries through the real push receiver: an unstamped WORKING does not move the waiting
/// task back; one stamped in the year 2999 is taken (ordered by its arrival), and the real
/// COMPLETED after it is not discarded as older.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_statuses_cannot_move_a_task_back_or_freeze_it() {
    let (url, token) = pushing_agent().await;
    let (mut w, push) = watch_pushed(&url, &["t1"]).await;
    w.until("t1 waiting", |s| {
        s.tasks().any(|t| t.state() == &TaskState::InputRequired)
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let token = loop {
        if let Some(token) = token.lock().unwrap().clone() {
            break token;
        }
        assert!(Instant::now() < deadline, "the push config was registered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let at = push.url_for(0);
    deliver(&at, &token, pushed_status("TASK_STATE_WORKING", "resumed?", None)).await;
    // Stamped, so placed: the marker says the unstamped one before it was applied (or not).
    let marker = pushed_status("TASK_STATE_INPUT_REQUIRED", "marker", Some("2026-01-05T10:00:01Z"));
    deliver(&at, &token, marker).await;
    w.until("the marker", |s| s.tasks().any(|t| t.status.text() == "marker"))
        .await;
    let t = w.task("t1").unwrap();
    assert!(
        t.timeline.iter().all(|e| e.state != TaskState::Working),
        "an unstamped push moved the task back: {:?}",
        t.timeline
    );

    deliver(
        &at,
        &token,
        pushed_status("TASK_STATE_WORKING", "from the future", Some("2999-01-01T00:00:00Z")),
    )
    .await;
    w.until("the 2999 status", |s| {
        s.tasks().any(|t| t.status.text() == "from the future")
    })
    .await;
    // A real stamp after it is not older than it.
    let now = || jiff::Timestamp::now().to_string();
    deliver(&at, &token, pushed_status("TASK_STATE_WORKING", "step 2", Some(&now()))).await;
    w.until("the status after the 2999 one", |s| {
        s.tasks().any(|t| t.status.text() == "step 2")
    })
    .await;
    deliver(&at, &token, pushed_status("TASK_STATE_COMPLETED", "done", Some(&now()))).await;
    w.until("COMPLETED after the 2999 status", |s| {
        s.tasks().any(|t| t.state() == &TaskState::Completed)
    })
    .await;
    let t = w.task("t1").unwrap();
    assert_eq!(t.status.text(), "done");
    assert!(
        t.state_since.as_second() < 32_000_000_000,
        "ordered by arrival: {}",
        t.state_since
    );
    w.engine.shutdown().await;
}

/// A subscription whose events carry A2A 1.1's `generation`: 1, 2, 2 again and 0 (ignored: a
/// repeat, "not implemented"), then 5. Through the binary: the gap is counted on the agent's
/// `--json` line, and one GetTask (the quiet check is half a minute away) finds the task ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_in_event_generations_is_counted_and_fetched_once() {
    let generation = |mut event: Value, generation: Value| {
        let body = event.as_object_mut().unwrap().values_mut().next().unwrap();
        body["generation"] = generation;
        event
    };
    let status = |text: &str| {
        json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx",
        "status": task("t1", "TASK_STATE_WORKING", text)["status"]}})
    };
    let (url, fake) = fake(true, move |call| match call.method.as_str() {
        "ListTasks" => listing(call, vec![]),
        "GetTask" => {
            let mut fetched = task("t1", "TASK_STATE_COMPLETED", "fetched");
            fetched["generation"] = json!("6");
            result(call, fetched)
        }
        "SubscribeToTask" => {
            let events = [
                generation(json!({"task": task("t1", "TASK_STATE_WORKING", "")}), json!(1)),
                generation(status("two"), json!("2")),
                generation(status("two again"), json!(2)),
                generation(status("unnumbered"), json!(0)),
                generation(status("five"), json!(5)),
            ];
            let frames = events.into_iter().map(|e| frame(call, e)).collect();
            sse(frames, Duration::from_millis(20), true)
        }
        _ => not_found(call),
    })
    .await;
    let config = format!("[[agent]]\nname = \"numbered\"\nurl = \"{url}\"\ntasks = [\"t1\"]\n");
    let lines = json_until_all_terminal(&config, &[]).await;
    let counted: Vec<&Value> = lines.iter().filter_map(|l| l.get("missed_events")).collect();
    assert_eq!(counted, [&json!(1)], "one gap, counted once: {lines:?}");
    assert!(lines.iter().any(|l| l["task"] == "t1" && l["state"] == "COMPLETED"));
    assert_eq!(fake.count("GetTask"), 1, "one GetTask for one gap");
}
