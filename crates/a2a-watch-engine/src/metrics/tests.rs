use jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::a2a::{Binding, ProtocolVersion};
use crate::event::{AgentInfo, Event};

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn status(agent: AgentId, id: &str, state: &str, at: i64) -> Event {
    let status = json!({"state": state, "timestamp": ts(at).to_string()});
    Event::Update {
        agent,
        event: serde_json::from_value(json!({"statusUpdate": {"taskId": id, "contextId": "ctx", "status": status}}))
            .unwrap(),
        seen: ts(at),
    }
}

fn watched() -> (Store, Metrics) {
    let mut store = Store::new([
        (Some("runner".to_string()), "http://127.0.0.1:9001/a2a?key=secret"),
        (None, "http://user:pw@agents.example:9002/b"),
    ]);
    let metrics = Metrics::observe(&mut store);
    (store, metrics)
}

/// The sample lines of `name` (with its labels), and their values.
fn samples(metrics: &Metrics, now: i64, name: &str) -> Vec<String> {
    let text = metrics.render(ts(now), Format::Text);
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .map(str::to_string)
        .collect()
}

#[test]
fn tasks_per_state_keep_a_series_at_zero_once_a_state_had_a_task() {
    let (mut store, metrics) = watched();
    store.apply(status(0, "t1", "TASK_STATE_WORKING", 0));
    store.apply(status(0, "t2", "TASK_STATE_WORKING", 1));
    store.apply(status(0, "t1", "TASK_STATE_COMPLETED", 5));
    assert_eq!(
        samples(&metrics, 10, "a2a_watch_tasks"),
        [
            r#"a2a_watch_tasks{agent="runner",state="working"} 1"#,
            r#"a2a_watch_tasks{agent="runner",state="completed"} 1"#,
        ]
    );
    store.apply(status(0, "t2", "TASK_STATE_FAILED", 6));
    assert_eq!(
        samples(&metrics, 10, "a2a_watch_tasks"),
        [
            r#"a2a_watch_tasks{agent="runner",state="working"} 0"#,
            r#"a2a_watch_tasks{agent="runner",state="completed"} 1"#,
            r#"a2a_watch_tasks{agent="runner",state="failed"} 1"#,
        ]
    );
    assert_eq!(
        samples(&metrics, 10, "a2a_watch_task_transitions_total"),
        [
            r#"a2a_watch_task_transitions_total{agent="runner",from="working",to="completed"} 1"#,
            r#"a2a_watch_task_transitions_total{agent="runner",from="working",to="failed"} 1"#,
        ]
    );
}

#[test]
fn the_oldest_waiting_counts_up_to_the_scrape_and_is_zero_when_none_waits() {
    let (mut store, metrics) = watched();
    let oldest = |now| samples(&metrics, now, "a2a_watch_oldest_waiting_seconds");
    assert_eq!(
        oldest(0)[..2],
        [
            r#"a2a_watch_oldest_waiting_seconds{agent="runner",state="input_required"} 0"#,
            r#"a2a_watch_oldest_waiting_seconds{agent="runner",state="auth_required"} 0"#,
        ]
    );
    store.apply(status(0, "old", "TASK_STATE_AUTH_REQUIRED", 100));
    store.apply(status(0, "new", "TASK_STATE_AUTH_REQUIRED", 400));
    assert_eq!(
        oldest(700)[1],
        r#"a2a_watch_oldest_waiting_seconds{agent="runner",state="auth_required"} 600"#
    );
    store.apply(status(0, "old", "TASK_STATE_WORKING", 800));
    assert_eq!(
        oldest(1000)[1],
        r#"a2a_watch_oldest_waiting_seconds{agent="runner",state="auth_required"} 600"#
    );
    store.apply(status(0, "new", "TASK_STATE_REJECTED", 1000));
    assert_eq!(
        oldest(1000)[1],
        r#"a2a_watch_oldest_waiting_seconds{agent="runner",state="auth_required"} 0"#
    );
}

#[test]
fn a_wait_is_observed_when_the_task_leaves_the_state_in_the_issues_buckets() {
    let (mut store, metrics) = watched();
    store.apply(status(0, "t1", "TASK_STATE_INPUT_REQUIRED", 0));
    // A second question in a row is not an answer: the wait goes on.
    store.apply(status(0, "t1", "TASK_STATE_INPUT_REQUIRED", 10));
    store.apply(status(0, "t1", "TASK_STATE_WORKING", 40));
    store.apply(status(0, "t2", "TASK_STATE_INPUT_REQUIRED", 50));
    store.apply(status(0, "t2", "TASK_STATE_CANCELED", 20_050));
    let waits = samples(&metrics, 30_000, "a2a_watch_wait_duration_seconds_bucket");
    let input: Vec<&str> = (waits.iter())
        .filter(|l| l.contains(r#"agent="runner",state="input_required""#))
        .map(|l| l.split_once("le=").unwrap().1)
        .collect();
    assert_eq!(
        input,
        [
            r#""5"} 0"#,
            r#""15"} 0"#,
            r#""30"} 0"#,
            r#""60"} 1"#,
            r#""120"} 1"#,
            r#""300"} 1"#,
            r#""600"} 1"#,
            r#""1200"} 1"#,
            r#""1800"} 1"#,
            r#""3600"} 1"#,
            r#""7200"} 1"#,
            r#""14400"} 1"#,
            r#""+Inf"} 2"#,
        ],
        "the first waited 40 s (from its first question), the second 20,000 s"
    );
    let sums = samples(&metrics, 30_000, "a2a_watch_wait_duration_seconds_sum");
    assert_eq!(
        sums[0],
        r#"a2a_watch_wait_duration_seconds_sum{agent="runner",state="input_required"} 20040"#
    );
    let counts = samples(&metrics, 30_000, "a2a_watch_wait_duration_seconds_count");
    assert_eq!(
        counts[1],
        r#"a2a_watch_wait_duration_seconds_count{agent="runner",state="auth_required"} 0"#
    );
}

#[test]
fn agents_are_labelled_by_name_never_by_url_and_count_what_happened_to_them() {
    let (mut store, metrics) = watched();
    store.apply(Event::Health {
        agent: 1,
        health: Health::Reconnecting {
            attempt: 1,
            reason: "refused".into(),
        },
    });
    store.apply(Event::Health {
        agent: 1,
        health: Health::Reconnecting {
            attempt: 2,
            reason: "refused".into(),
        },
    });
    store.apply(Event::PushRefused { agent: 1 });
    let text = metrics.render(ts(0), Format::Text);
    assert!(
        !text.contains("secret") && !text.contains("pw") && !text.contains("http"),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_watch_agent_up{agent="agents.example:9002"} 0"#),
        "no name yet: the host\n{text}"
    );
    assert!(
        text.contains(r#"a2a_watch_stream_reconnects_total{agent="agents.example:9002"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_watch_push_refused_total{agent="agents.example:9002"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_watch_events_total{agent="agents.example:9002"} 3"#),
        "{text}"
    );
    let info = AgentInfo {
        name: "runner".into(),
        version: ProtocolVersion::V1_0,
        binding: Binding::Grpc,
        streaming: true,
        lists_tasks: true,
        push_off: None,
        card_signature: None,
    };
    store.apply(Event::Info { agent: 1, info });
    store.apply(Event::Health {
        agent: 1,
        health: Health::Streaming,
    });
    let text = metrics.render(ts(0), Format::Text);
    assert!(
        text.contains(r#"a2a_watch_agent_up{agent="runner#2"} 1"#),
        "a card named like another agent\n{text}"
    );
    assert!(
        text.contains(r#"a2a_watch_agent_info{agent="runner#2",protocol="1.0",binding="gRPC"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"a2a_watch_agent_up{agent="runner"} 0"#), "{text}");
}

#[test]
fn openmetrics_names_counter_families_without_total_and_ends_with_eof() {
    let (mut store, metrics) = watched();
    store.apply(status(0, "t1", "TASK_STATE_WORKING", 0));
    let text = metrics.render(ts(0), Format::OpenMetrics);
    assert!(text.contains("# TYPE a2a_watch_events counter\n"), "{text}");
    assert!(
        text.contains("\na2a_watch_events_total{agent=\"runner\"} 1\n"),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
    let text = metrics.render(ts(0), Format::Text);
    assert!(
        text.contains("# TYPE a2a_watch_events_total counter\n") && !text.contains("EOF"),
        "{text}"
    );
    assert_eq!(
        Format::accepting(Some("application/openmetrics-text;version=1.0.0,text/plain;q=0.5")),
        Format::OpenMetrics
    );
    assert_eq!(Format::accepting(Some("text/plain")), Format::Text);
    assert_eq!(Format::accepting(None), Format::Text);
}

#[test]
fn the_otlp_drop_counter_is_there_only_when_spans_are_exported() {
    let (_store, metrics) = watched();
    assert_eq!(
        samples(&metrics, 0, "a2a_watch_otlp_dropped_total"),
        Vec::<String>::new()
    );
    metrics.count_otlp_drops(Arc::new(Queue::default()));
    assert_eq!(
        samples(&metrics, 0, "a2a_watch_otlp_dropped_total"),
        ["a2a_watch_otlp_dropped_total 0"]
    );
    let text = metrics.render(ts(0), Format::OpenMetrics);
    assert!(text.contains("# TYPE a2a_watch_otlp_dropped counter\n"), "{text}");
}
