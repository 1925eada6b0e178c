use jiff::Timestamp;
use serde_json::json;

use super::query::{Filter, OrderedView, SortBy, ViewSpec};
use super::*;
use crate::a2a::{Binding, ProtocolVersion, StateClass, Task, TaskState, TaskStatus};
use crate::event::{AgentInfo, Event, Health, WatchMode};

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn store() -> Store {
    Store::new([
        (Some("runner".to_string()), "http://a".to_string()),
        (Some("deployer".to_string()), "http://b".to_string()),
    ])
}

fn status(state: &str, text: &str, at: i64) -> serde_json::Value {
    json!({"state": state, "timestamp": ts(at).to_string(),
           "message": {"messageId": format!("m-{at}"), "role": "ROLE_AGENT", "parts": [{"text": text}]}})
}

fn snapshot(agent: AgentId, id: &str, state: &str, text: &str, at: i64) -> Event {
    let task =
        serde_json::from_value(json!({"id": id, "contextId": "ctx", "status": status(state, text, at)})).unwrap();
    Event::Snapshot {
        agent,
        task,
        seen: ts(at),
    }
}

fn update(agent: AgentId, v: serde_json::Value, at: i64) -> Event {
    Event::Update {
        agent,
        event: serde_json::from_value(v).unwrap(),
        seen: ts(at),
    }
}

fn status_update(agent: AgentId, id: &str, state: &str, text: &str, at: i64) -> Event {
    update(
        agent,
        json!({"statusUpdate": {"taskId": id, "contextId": "ctx", "status": status(state, text, at)}}),
        at,
    )
}

fn key(agent: AgentId, id: &str) -> TaskKey {
    TaskKey { agent, id: id.into() }
}

/// The rows of a view built afresh, in order.
fn rows(s: &Store, spec: &ViewSpec) -> Vec<TaskKey> {
    OrderedView::build(s, spec).from(0).cloned().collect()
}

fn states(s: &Store, k: &TaskKey) -> Vec<String> {
    s.task(k)
        .unwrap()
        .timeline
        .iter()
        .map(|t| t.state.short_name().to_string())
        .collect()
}

#[test]
fn snapshots_and_updates_build_a_timeline() {
    let mut s = store();
    assert!(matches!(
        s.apply(snapshot(0, "t1", "TASK_STATE_SUBMITTED", "", 0)),
        Change::State(_)
    ));
    assert!(matches!(
        s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "collecting", 1)),
        Change::State(_)
    ));
    assert!(matches!(
        s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "7/12", 2)),
        Change::Task(_)
    ));
    assert!(matches!(
        s.apply(status_update(0, "t1", "TASK_STATE_COMPLETED", "1 failed, 11 passed", 3)),
        Change::State(_)
    ));
    let k = key(0, "t1");
    assert_eq!(states(&s, &k), ["SUBMITTED", "WORKING", "WORKING", "COMPLETED"]);
    let t = s.task(&k).unwrap();
    assert_eq!(t.status.text(), "1 failed, 11 passed");
    assert_eq!(t.state_since, ts(3));
    assert_eq!(&*t.context, "ctx");
}

#[test]
fn duplicates_change_nothing() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "x", 1));
    s.take_journal();
    assert_eq!(
        s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "x", 1)),
        Change::Nothing
    );
    assert_eq!(
        s.apply(snapshot(0, "t1", "TASK_STATE_WORKING", "x", 1)),
        Change::Nothing
    );
    assert_eq!(s.take_journal(), Journal::Changed(vec![]), "views need not redraw");
    assert_eq!(s.task(&key(0, "t1")).unwrap().timeline.len(), 1);
}

#[test]
fn older_snapshots_do_not_roll_back_and_terminal_is_final() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_INPUT_REQUIRED", "branch?", 5));
    assert_eq!(
        s.apply(snapshot(0, "t1", "TASK_STATE_WORKING", "old", 2)),
        Change::Nothing
    );
    assert_eq!(s.task(&key(0, "t1")).unwrap().state(), &TaskState::InputRequired);
    s.apply(status_update(0, "t1", "TASK_STATE_CANCELED", "", 6));
    // a later-stamped but non-terminal snapshot (a confused server) cannot revive it
    s.apply(snapshot(0, "t1", "TASK_STATE_WORKING", "zombie", 9));
    assert_eq!(s.task(&key(0, "t1")).unwrap().state(), &TaskState::Canceled);
    // a timestamp-less SUBMITTED (returnImmediately) after a stamped WORKING is stale
    s.apply(status_update(0, "t2", "TASK_STATE_WORKING", "", 3));
    let t2: Task = serde_json::from_value(json!({"id":"t2","status":{"state":"TASK_STATE_SUBMITTED"}})).unwrap();
    s.apply(Event::Snapshot {
        agent: 0,
        task: t2,
        seen: ts(4),
    });
    assert_eq!(s.task(&key(0, "t2")).unwrap().state(), &TaskState::Working);
}

#[test]
fn artifact_chunks_assemble_and_listings_without_artifacts_keep_them() {
    let mut s = store();
    s.apply(snapshot(0, "t1", "TASK_STATE_WORKING", "", 1));
    let chunk = |append: bool, last: bool, text: &str| {
        json!({"artifactUpdate": {"taskId": "t1", "contextId": "ctx", "append": append, "lastChunk": last,
               "artifact": {"artifactId": "log", "name": "test-log.txt", "parts": [{"text": text}]}}})
    };
    s.apply(update(0, chunk(false, false, "a"), 2));
    s.apply(update(0, chunk(true, false, "b"), 3));
    s.apply(update(0, chunk(true, true, "c"), 4));
    let k = key(0, "t1");
    assert_eq!(s.task(&k).unwrap().artifacts[0].text(), "abc");
    // ListTasks omits artifacts unless asked (spec section 4.8): they are not erased.
    s.apply(snapshot(0, "t1", "TASK_STATE_COMPLETED", "done", 5));
    assert_eq!(s.task(&k).unwrap().artifacts.len(), 1);
    // a subscription snapshot with the folded artifact replaces it
    let full: Task = serde_json::from_value(json!({"id":"t1","status": status("TASK_STATE_COMPLETED","done",5),
        "artifacts":[{"artifactId":"log","parts":[{"text":"a"},{"text":"b"},{"text":"c"}]}]}))
    .unwrap();
    s.apply(Event::Snapshot {
        agent: 0,
        task: full,
        seen: ts(6),
    });
    assert_eq!(s.task(&k).unwrap().artifacts[0].parts.len(), 3);
}

#[test]
fn the_timeline_is_bounded_and_says_what_it_cut() {
    let mut s = store();
    s.limits.timeline = 3;
    for i in 0..10 {
        s.apply(status_update(0, "t1", "TASK_STATE_WORKING", &format!("step {i}"), i));
    }
    let t = s.task(&key(0, "t1")).unwrap();
    assert_eq!(t.timeline.len(), 3);
    assert_eq!(t.timeline_dropped, 7);
    assert_eq!(t.timeline.back().unwrap().text, "step 9");
}

#[test]
fn unknown_states_are_kept_and_counted_as_unknown() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_PAUSED", "", 1));
    s.apply(status_update(0, "t2", "TASK_STATE_UNSPECIFIED", "", 1));
    assert_eq!(s.counts(0).unknown, 2);
    assert_eq!(s.task(&key(0, "t1")).unwrap().state().proto_name(), "TASK_STATE_PAUSED");
}

#[test]
fn counts_and_interrupts_per_agent() {
    let mut s = store();
    s.apply(status_update(0, "a", "TASK_STATE_WORKING", "", 1));
    s.apply(status_update(0, "b", "TASK_STATE_COMPLETED", "", 1));
    s.apply(status_update(
        1,
        "c",
        "TASK_STATE_AUTH_REQUIRED",
        "approve at http://x",
        5,
    ));
    s.apply(status_update(1, "d", "TASK_STATE_REJECTED", "", 1));
    s.apply(status_update(0, "e", "TASK_STATE_INPUT_REQUIRED", "branch?", 2));
    assert_eq!(
        s.counts(0),
        Counts {
            active: 1,
            interrupted: 1,
            completed: 1,
            ended: 0,
            unknown: 0
        }
    );
    assert_eq!(
        s.counts(1),
        Counts {
            active: 0,
            interrupted: 1,
            completed: 0,
            ended: 1,
            unknown: 0
        }
    );
    let waiting: Vec<&str> = s.interrupts().iter().map(|t| &*t.key.id).collect();
    assert_eq!(waiting, ["e", "c"], "oldest first");
}

#[test]
fn agent_events_update_health_and_info() {
    let mut s = store();
    let h = Health::Unauthorized {
        message: "set A2A_TOKEN_DEPLOYER".into(),
    };
    assert_eq!(
        s.apply(Event::Health {
            agent: 1,
            health: h.clone()
        }),
        Change::Agent(1)
    );
    assert_eq!(s.apply(Event::Health { agent: 1, health: h }), Change::Nothing);
    let info = AgentInfo {
        name: "deployer".into(),
        version: ProtocolVersion::V1_0,
        binding: Binding::Rest,
        streaming: true,
        lists_tasks: true,
        push_off: None,
        card_signature: None,
    };
    assert_eq!(s.apply(Event::Info { agent: 1, info }), Change::Agent(1));
    assert_eq!(s.agents[1].health.label(), "unauthorized");
}

#[test]
fn the_card_names_agents_the_user_did_not_name() {
    let mut s = Store::new([
        (None, "http://h:1/a2a?key=s3cret".to_string()),
        (Some("mine".to_string()), "http://h:2".to_string()),
    ]);
    // Until the card is read, the URL in the form it may be shown (the store keeps no other).
    assert_eq!(s.agents[0].name, "http://h:1/a2a");
    assert_eq!(s.agents[0].url.as_str(), "http://h:1/a2a");
    for agent in [0, 1] {
        let info = AgentInfo {
            name: "from-card".into(),
            version: ProtocolVersion::V1_0,
            binding: Binding::JsonRpc,
            streaming: true,
            lists_tasks: true,
            push_off: None,
            card_signature: None,
        };
        s.apply(Event::Info { agent, info });
    }
    assert_eq!(s.agents[0].name, "from-card");
    assert_eq!(s.agents[1].name, "mine");
}

#[test]
fn watching_and_errors_attach_to_the_task() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "", 1));
    s.apply(Event::Watching {
        agent: 0,
        task: "t1".into(),
        mode: WatchMode::Polling,
    });
    s.apply(Event::TaskError {
        agent: 0,
        task: "t1".into(),
        message: "subscribe refused".into(),
    });
    let t = s.task(&key(0, "t1")).unwrap();
    assert_eq!(t.watch, Some(WatchMode::Polling));
    assert_eq!(t.error.as_deref(), Some("subscribe refused"));
    // events about tasks we never saw are ignored rather than inventing rows
    assert_eq!(
        s.apply(Event::Watching {
            agent: 0,
            task: "nope".into(),
            mode: WatchMode::Done
        }),
        Change::Nothing
    );
}

#[test]
fn messages_join_the_history_once() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "", 1));
    let m = json!({"message": {"messageId": "m1", "role": "ROLE_AGENT", "taskId": "t1", "parts": [{"text": "hi"}]}});
    assert!(matches!(s.apply(update(0, m.clone(), 2)), Change::Task(_)));
    assert_eq!(s.apply(update(0, m, 3)), Change::Nothing);
    assert_eq!(s.task(&key(0, "t1")).unwrap().history.len(), 1);
}

#[test]
fn views_sort_and_filter() {
    let mut s = store();
    s.apply(status_update(0, "run", "TASK_STATE_WORKING", "7/12", 3));
    s.apply(status_update(
        0,
        "old",
        "TASK_STATE_COMPLETED",
        "1 failed, 11 passed",
        1,
    ));
    s.apply(status_update(1, "dep", "TASK_STATE_AUTH_REQUIRED", "approve", 2));
    s.apply(status_update(
        1,
        "prod",
        "TASK_STATE_REJECTED",
        "production deploys are not allowed",
        4,
    ));
    let ids = |spec: &ViewSpec| rows(&s, spec).iter().map(|k| k.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&ViewSpec::default()), ["dep", "run", "prod", "old"]);
    assert_eq!(
        ids(&ViewSpec {
            sort: SortBy::Updated,
            ..Default::default()
        }),
        ["prod", "run", "dep", "old"]
    );
    assert_eq!(
        ids(&ViewSpec {
            sort: SortBy::Age,
            ..Default::default()
        }),
        ["old", "dep", "run", "prod"]
    );
    assert_eq!(
        ids(&ViewSpec {
            hide_terminal: true,
            ..Default::default()
        }),
        ["dep", "run"]
    );
    let f = |text: &str| {
        ids(&ViewSpec {
            filter: Filter::parse(text),
            ..Default::default()
        })
    };
    assert_eq!(f("state:interrupted"), ["dep"]);
    assert_eq!(f("agent:deployer"), ["dep", "prod"]);
    assert_eq!(f("!completed agent:runner"), ["run"]);
    assert_eq!(f("state:auth-required"), ["dep"]);
    assert_eq!(f("production"), ["prod"]);
    assert_eq!(f("state:terminal !rejected"), ["old"]);
}

#[test]
fn agent_and_group_terms_take_a_whole_name_alone_and_a_part_of_one_anywhere() {
    let mut s = Store::new(["api", "api-2", "billing", "search"].map(|n| (Some(n.to_string()), format!("http://{n}"))));
    for (agent, group) in [(0, "payments"), (1, "payments"), (2, "payments-eu")] {
        s.agents[agent].group = Some(group.to_string());
    }
    for agent in 0..4 {
        s.apply(snapshot(
            agent,
            &format!("t{agent}"),
            "TASK_STATE_WORKING",
            "",
            agent as i64,
        ));
    }
    let ids = |text: &str| -> Vec<String> {
        let spec = ViewSpec {
            filter: Filter::parse(text),
            sort: SortBy::Agent,
            ..ViewSpec::default()
        };
        rows(&s, &spec).iter().map(|k| k.id.to_string()).collect()
    };
    assert_eq!(ids("agent:api"), ["t0"], "an agent called api is not api-2");
    assert_eq!(ids("agent:API-2"), ["t1"]);
    assert_eq!(
        ids("agent:ap"),
        ["t0", "t1"],
        "a part of a name matches every agent that has it"
    );
    assert_eq!(ids("group:payments"), ["t0", "t1"]);
    assert_eq!(ids("g:pay"), ["t0", "t1", "t2"]);
    assert_eq!(
        ids("!group:payments"),
        ["t2", "t3"],
        "an agent without a group is in none"
    );
    let agents = |text: &str| -> Vec<AgentId> {
        let filter = Filter::parse(text);
        (0..4).filter(|a| query::agent_matches(&filter, &s, *a)).collect()
    };
    assert_eq!(agents("group:payments-eu"), [2]);
    assert_eq!(agents("pay !api"), [1, 2], "a word is a name or a group");
    assert_eq!(
        agents("state:working agent:search"),
        [3],
        "terms of tasks do not narrow agents"
    );
    assert_eq!(agents("connecting"), [0, 1, 2, 3], "a word is also a health");
}

#[test]
fn an_agent_row_counts_its_streams_reconnects_and_its_last_event() {
    let mut s = store();
    let watching = |task: &str, mode| Event::Watching {
        agent: 0,
        task: task.into(),
        mode,
    };
    s.apply(snapshot(0, "a", "TASK_STATE_WORKING", "", 5));
    s.apply(snapshot(0, "b", "TASK_STATE_WORKING", "", 3));
    assert_eq!(
        s.agents[0].last_event,
        Some(ts(5)),
        "the latest seen, not the last applied"
    );
    s.apply(status_update(0, "a", "TASK_STATE_WORKING", "", 9));
    assert_eq!((s.agents[0].last_event, s.agents[1].last_event), (Some(ts(9)), None));
    for (task, mode) in [
        ("a", WatchMode::Streaming),
        ("b", WatchMode::Streaming),
        ("b", WatchMode::Streaming),
        ("a", WatchMode::Polling),
    ] {
        s.apply(watching(task, mode));
    }
    assert_eq!(s.agents[0].streams, 1, "b streams; a went back to polling");
    s.apply(watching("b", WatchMode::Done));
    s.apply(watching("unknown-task", WatchMode::Streaming));
    assert_eq!(s.agents[0].streams, 0);
    let reconnecting = |attempt| Event::Health {
        agent: 1,
        health: Health::Reconnecting {
            attempt,
            reason: "refused".into(),
        },
    };
    for event in [reconnecting(1), reconnecting(1), reconnecting(2)] {
        s.apply(event);
    }
    s.apply(Event::Health {
        agent: 1,
        health: Health::Streaming,
    });
    assert_eq!((s.agents[0].reconnects, s.agents[1].reconnects), (0, 2));
}

#[test]
fn groups_come_in_the_order_first_named_and_the_ungrouped_last() {
    let mut s = Store::new(["a", "b", "c", "d"].map(|n| (Some(n.to_string()), format!("http://{n}"))));
    assert!(s.groups().is_empty(), "no group, no headers");
    s.agents[1].group = Some("search".into());
    s.agents[2].group = Some("payments".into());
    s.agents[3].group = Some("search".into());
    assert_eq!(s.groups(), [Some("search"), Some("payments"), None]);
}

#[test]
fn action_outcomes_are_kept_by_id() {
    use crate::event::ActionOutcome;
    let mut s = store();
    assert_eq!(s.action(7), None);
    let failed = ActionOutcome::Failed {
        message: "deployer: cannot connect".into(),
    };
    assert_eq!(
        s.apply(Event::Action {
            agent: 1,
            action: 7,
            outcome: failed.clone(),
            call: None,
        }),
        Change::Action(7)
    );
    assert_eq!(s.action(7), Some(&failed));
    let done = ActionOutcome::Done {
        task: Some("t9".into()),
    };
    s.apply(Event::Action {
        agent: 1,
        action: 7,
        outcome: done.clone(),
        call: None,
    });
    assert_eq!(s.action(7), Some(&done), "a retry's outcome replaces the failure");
}

#[test]
fn kept_counts_and_waiting_list_match_a_recount() {
    let states = [
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_PAUSED",
    ];
    let mut s = store();
    // A deterministic walk over tasks, states, snapshots and duplicates, some out of order.
    let mut x: u64 = 7;
    for step in 0..2000i64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let agent = (x >> 60) as usize % 2;
        let id = format!("t{}", (x >> 40) % 40);
        let state = states[((x >> 20) % states.len() as u64) as usize];
        let at = step - ((x >> 10) % 5) as i64;
        if x.is_multiple_of(3) {
            s.apply(snapshot(agent, &id, state, "", at));
        } else {
            s.apply(status_update(agent, &id, state, "", at));
        }
    }
    for agent in 0..2 {
        let mut recount = Counts::default();
        for t in s.tasks().filter(|t| t.key.agent == agent) {
            recount.add(t.state());
        }
        assert_eq!(s.counts(agent), recount, "agent {agent}");
    }
    let mut waiting: Vec<&TaskEntry> = s.tasks().filter(|t| t.class() == StateClass::Interrupted).collect();
    waiting.sort_by(|a, b| a.state_since.cmp(&b.state_since).then_with(|| a.key.cmp(&b.key)));
    let kept: Vec<&TaskKey> = s.interrupts().iter().map(|t| &t.key).collect();
    assert_eq!(kept, waiting.iter().map(|t| &t.key).collect::<Vec<_>>());
    let approvals: Vec<&TaskKey> = s.approvals_from(0).map(|t| &t.key).collect();
    let auth: Vec<&TaskKey> = waiting
        .iter()
        .filter(|t| *t.state() == TaskState::AuthRequired)
        .map(|t| &t.key)
        .collect();
    assert_eq!(approvals, auth);
    assert_eq!(s.approval_count(), auth.len());
}

#[test]
fn an_ordered_view_kept_up_to_date_matches_one_built_afresh() {
    let states = [
        "TASK_STATE_WORKING",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
    ];
    for sort in SortBy::ALL {
        for filter in ["", "state:active", "!completed agent:runner"] {
            let spec = ViewSpec {
                sort,
                filter: Filter::parse(filter),
                hide_terminal: filter.is_empty(),
            };
            let mut s = store();
            let mut view = OrderedView::build(&s, &spec);
            let mut x: u64 = 11;
            for step in 0..600i64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let agent = (x >> 60) as usize % 2;
                let id = format!("t{}", (x >> 40) % 30);
                s.apply(status_update(agent, &id, states[((x >> 20) % 4) as usize], "", step));
                if step % 7 == 0 {
                    let Journal::Changed(keys) = s.take_journal() else {
                        panic!("no overflow here")
                    };
                    view.update(&s, &keys);
                    let kept: Vec<TaskKey> = view.from(0).cloned().collect();
                    assert_eq!(kept, rows(&s, &spec), "{sort:?} {filter:?} at step {step}");
                    if let Some(k) = kept.get(kept.len() / 2) {
                        assert_eq!(view.position(k), Some(kept.len() / 2));
                    }
                }
            }
        }
    }
}

#[test]
fn a_terminal_state_never_becomes_another() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_COMPLETED", "done", 5));
    for other in ["TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"] {
        assert_eq!(s.apply(status_update(0, "t1", other, "late", 9)), Change::Nothing);
        assert_eq!(s.apply(snapshot(0, "t1", other, "late", 9)), Change::Nothing);
    }
    let k = key(0, "t1");
    assert_eq!(s.task(&k).unwrap().state(), &TaskState::Completed);
    assert_eq!(s.counts(0).completed, 1);
    assert_eq!(s.counts(0).ended, 0);
    // the same terminal state again may say more
    assert!(matches!(
        s.apply(status_update(0, "t1", "TASK_STATE_COMPLETED", "done, 3 files", 10)),
        Change::Task(_)
    ));
    assert_eq!(s.task(&k).unwrap().status.text(), "done, 3 files");
    assert_eq!(states(&s, &k), ["COMPLETED", "COMPLETED"]);
}

#[test]
fn a_warning_clears_once_the_task_is_heard_from_again() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "", 1));
    let warn = |s: &mut Store| {
        s.apply(Event::TaskError {
            agent: 0,
            task: "t1".into(),
            message: "HTTP 500 from GetTask: upstream down".into(),
        })
    };
    assert!(matches!(warn(&mut s), Change::Task(_)));
    // the same snapshot as held still says the agent answers for the task
    assert!(matches!(
        s.apply(snapshot(0, "t1", "TASK_STATE_WORKING", "", 1)),
        Change::Task(_)
    ));
    assert_eq!(s.task(&key(0, "t1")).unwrap().error, None);
    warn(&mut s);
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "step 2", 2));
    assert_eq!(s.task(&key(0, "t1")).unwrap().error, None);
    warn(&mut s);
    let chunk = json!({"artifactUpdate": {"taskId": "t1", "contextId": "ctx",
        "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}});
    s.apply(update(0, chunk, 3));
    assert_eq!(s.task(&key(0, "t1")).unwrap().error, None);
}

#[test]
fn a_task_the_agent_does_not_know_is_a_row_marked_not_found() {
    let mut s = store();
    let not_found = Event::NotFound {
        agent: 1,
        task: "ghost".into(),
        message: "TaskNotFoundError (-32001): no such task".into(),
        seen: ts(1),
    };
    assert!(matches!(s.apply(not_found.clone()), Change::Task(_)));
    assert_eq!(s.apply(not_found), Change::Nothing);
    let t = s.task(&key(1, "ghost")).unwrap();
    assert!(t.not_found);
    assert!(t.error.as_deref().is_some_and(|e| e.contains("TaskNotFound")));
    assert_eq!(s.counts(1).total(), 0, "not counted in any state");
    // if it turns up after all, the mark goes
    s.apply(snapshot(1, "ghost", "TASK_STATE_WORKING", "", 2));
    assert!(!s.task(&key(1, "ghost")).unwrap().not_found);
}

#[test]
fn artifacts_parts_and_metadata_are_capped_and_the_cut_counted() {
    let mut s = store();
    s.limits = Limits {
        artifacts: 2,
        parts: 3,
        metadata: 2,
        ..Limits::default()
    };
    let artifacts: Vec<serde_json::Value> = (0..4)
        .map(|i| json!({"artifactId": format!("a{i}"), "parts": [{"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}]}))
        .collect();
    let task = serde_json::from_value(
        json!({"id": "t1", "contextId": "ctx", "status": status("TASK_STATE_WORKING", "", 1),
        "artifacts": artifacts, "metadata": {"a": 1, "b": 2, "c": 3}}),
    )
    .unwrap();
    s.apply(Event::Snapshot {
        agent: 0,
        task,
        seen: ts(1),
    });
    let t = s.task(&key(0, "t1")).unwrap();
    assert_eq!(t.artifacts.iter().map(|a| a.parts.len()).collect::<Vec<_>>(), [3, 3]);
    assert_eq!(t.metadata.as_ref().unwrap().len(), 2);
    assert_eq!(
        t.cut,
        Cut {
            artifacts: 2,
            parts: 2,
            metadata: 1
        }
    );
    // chunks and new artifacts past the caps are dropped and counted too
    let append = json!({"artifactUpdate": {"taskId": "t1", "append": true,
        "artifact": {"artifactId": "a0", "parts": [{"text": "5"}]}}});
    s.apply(update(0, append, 2));
    let extra =
        json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "new", "parts": [{"text": "x"}]}}});
    s.apply(update(0, extra, 3));
    let md = json!({"statusUpdate": {"taskId": "t1", "status": status("TASK_STATE_WORKING", "", 4), "metadata": {"d": 4, "a": 9}}});
    s.apply(update(0, md, 4));
    let t = s.task(&key(0, "t1")).unwrap();
    assert_eq!(t.artifacts.len(), 2);
    assert_eq!(t.artifacts[0].parts.len(), 3);
    assert_eq!(t.metadata.as_ref().unwrap()["a"], 9, "a held key may still change");
    assert_eq!(
        t.cut,
        Cut {
            artifacts: 3,
            parts: 3,
            metadata: 2
        }
    );
}

#[test]
fn a_quiet_stream_shows_until_the_next_event() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "", 1));
    let quiet = Event::Quiet {
        agent: 0,
        task: "t1".into(),
        since: ts(1),
    };
    assert!(matches!(s.apply(quiet.clone()), Change::Task(_)));
    assert_eq!(s.task(&key(0, "t1")).unwrap().quiet_since, Some(ts(1)));
    // a GetTask snapshot meanwhile is not the stream speaking
    s.apply(snapshot(0, "t1", "TASK_STATE_WORKING", "", 1));
    assert_eq!(s.task(&key(0, "t1")).unwrap().quiet_since, Some(ts(1)));
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "", 1));
    assert_eq!(s.task(&key(0, "t1")).unwrap().quiet_since, None);
}

/// What `all_settled` and `any_interrupted` stand for, by looking at every task.
fn settled_by_scan(s: &Store) -> (bool, bool) {
    (
        !s.is_empty() && s.tasks().all(|t| t.class() == StateClass::Terminal || t.not_found),
        s.tasks().any(|t| t.class() == StateClass::Interrupted),
    )
}

#[test]
fn settled_and_interrupted_are_kept_as_tasks_move() {
    let mut s = store();
    assert!(!s.all_settled(), "no task yet");
    let not_found = |task: &str, at| Event::NotFound {
        agent: 0,
        task: task.into(),
        message: "no such task".into(),
        seen: ts(at),
    };
    let events = vec![
        snapshot(0, "t1", "TASK_STATE_WORKING", "", 0),
        status_update(0, "t1", "TASK_STATE_COMPLETED", "done", 1),
        // The same terminal status again, and an older snapshot: nothing moves.
        status_update(0, "t1", "TASK_STATE_COMPLETED", "done", 1),
        snapshot(0, "t1", "TASK_STATE_WORKING", "", 0),
        not_found("t2", 2),
        not_found("t2", 2),
        // The agent knows t2 after all: it may move again.
        snapshot(0, "t2", "TASK_STATE_INPUT_REQUIRED", "which one?", 3),
        status_update(0, "t2", "TASK_STATE_FAILED", "", 4),
        // A chunk for a task never seen adds it, unsettled, even when it changes nothing.
        update(
            1,
            json!({"artifactUpdate": {"taskId": "t3", "contextId": "ctx",
                "artifact": {"artifactId": "a", "parts": []}, "append": true}}),
            5,
        ),
        status_update(1, "t3", "TASK_STATE_AUTH_REQUIRED", "", 6),
        status_update(1, "t3", "TASK_STATE_CANCELED", "", 7),
        not_found("t4", 8),
        status_update(1, "t5", "TASK_STATE_WORKING", "", 9),
        status_update(1, "t5", "TASK_STATE_REJECTED", "", 10),
    ];
    let mut seen = Vec::new();
    for (n, ev) in events.into_iter().enumerate() {
        s.apply(ev);
        let kept = (s.all_settled(), s.any_interrupted());
        assert_eq!(kept, settled_by_scan(&s), "after event {n}");
        seen.push(kept);
    }
    assert!(seen.contains(&(true, false)) && seen.contains(&(false, true)) && seen.contains(&(false, false)));
    assert!(s.all_settled());
}

/// A status message's ids that repeat its task's are not kept per task, yet the task reads back
/// as it was sent, an id that differs is kept, and the same status again changes nothing.
#[test]
fn status_message_ids_that_repeat_the_task_are_shared_and_given_back() {
    let mut s = store();
    let mut sent = status("TASK_STATE_WORKING", "busy", 1);
    sent["message"]["taskId"] = json!("t1");
    sent["message"]["contextId"] = json!("ctx");
    let event = || {
        update(
            0,
            json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx", "status": sent}}),
            1,
        )
    };
    assert!(matches!(s.apply(event()), Change::State(_)));
    assert_eq!(s.apply(event()), Change::Nothing);
    let t = s.task(&key(0, "t1")).unwrap();
    let stored = t.status.message.as_ref().unwrap();
    assert_eq!((stored.task_id.as_deref(), stored.context_id.as_deref()), (None, None));
    let back = serde_json::to_value(t.as_task()).unwrap();
    assert_eq!(
        back["status"],
        serde_json::to_value(serde_json::from_value::<TaskStatus>(sent.clone()).unwrap()).unwrap()
    );

    sent["message"]["contextId"] = json!("another");
    sent["timestamp"] = json!(ts(2).to_string());
    s.apply(update(
        0,
        json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx", "status": sent}}),
        2,
    ));
    let t = s.task(&key(0, "t1")).unwrap();
    let stored = t.status.message.as_ref().unwrap();
    assert_eq!(
        (stored.task_id.as_deref(), stored.context_id.as_deref()),
        (None, Some("another"))
    );
    assert_eq!(t.status_as_sent().message.unwrap().task_id.as_deref(), Some("t1"));
}

/// A status update stamped `stamp` (None: unstamped) that arrives at `seen`.
fn stamped_update(id: &str, state: &str, text: &str, stamp: Option<Timestamp>, seen: i64) -> Event {
    let mut status = status(state, text, seen);
    status["timestamp"] = stamp.map_or(serde_json::Value::Null, |t| json!(t.to_string()));
    update(
        0,
        json!({"statusUpdate": {"taskId": id, "contextId": "ctx", "status": status}}),
        seen,
    )
}

#[test]
fn a_status_stamped_in_the_future_is_ordered_by_its_arrival() {
    let mut s = store();
    let k = key(0, "t1");
    let year_2999 = Timestamp::from_second(32_472_144_000).unwrap();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "start", 1));
    s.apply(stamped_update(
        "t1",
        "TASK_STATE_WORKING",
        "frozen?",
        Some(year_2999),
        2,
    ));
    let t = s.task(&k).unwrap();
    assert_eq!(t.status.timestamp, Some(year_2999), "kept as sent");
    assert_eq!(t.updated, ts(2), "ordered and aged by its arrival");
    // A real status after it is not older than it.
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "step 2", 3));
    assert_eq!(s.task(&k).unwrap().status.text(), "step 2");
    s.apply(stamped_update("t1", "TASK_STATE_WORKING", "again", Some(year_2999), 4));
    assert!(matches!(
        s.apply(status_update(0, "t1", "TASK_STATE_COMPLETED", "done", 5)),
        Change::State(_)
    ));
    assert_eq!(s.task(&k).unwrap().state(), &TaskState::Completed);
    // Four minutes ahead is a clock a little off, and counts as stamped.
    s.apply(stamped_update("t2", "TASK_STATE_WORKING", "a", Some(ts(10 + 240)), 10));
    s.apply(stamped_update("t2", "TASK_STATE_WORKING", "b", Some(ts(10 + 200)), 11));
    assert_eq!(s.task(&key(0, "t2")).unwrap().status.text(), "a");
}

#[test]
fn a_terminal_state_is_never_discarded_as_older() {
    let mut s = store();
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "late clock", 50));
    assert!(matches!(
        s.apply(status_update(0, "t1", "TASK_STATE_COMPLETED", "done", 40)),
        Change::State(_)
    ));
    assert_eq!(s.task(&key(0, "t1")).unwrap().state(), &TaskState::Completed);
    // ...but a live state stamped older than a live one still is.
    s.apply(status_update(0, "t2", "TASK_STATE_INPUT_REQUIRED", "branch?", 50));
    s.apply(status_update(0, "t2", "TASK_STATE_WORKING", "old", 40));
    assert_eq!(s.task(&key(0, "t2")).unwrap().state(), &TaskState::InputRequired);
}

#[test]
fn an_unstamped_status_does_not_move_a_stamped_task_back() {
    let mut s = store();
    let k = key(0, "t1");
    s.apply(status_update(0, "t1", "TASK_STATE_INPUT_REQUIRED", "Which repo?", 5));
    assert_eq!(
        s.apply(stamped_update("t1", "TASK_STATE_WORKING", "pushed late", None, 9)),
        Change::Nothing
    );
    assert_eq!(s.task(&k).unwrap().state(), &TaskState::InputRequired);
    // More of the same state is taken, and opens no door to an unstamped move after it.
    s.apply(stamped_update(
        "t1",
        "TASK_STATE_INPUT_REQUIRED",
        "Which repo, again?",
        None,
        9,
    ));
    assert_eq!(s.task(&k).unwrap().status.text(), "Which repo, again?");
    s.apply(stamped_update("t1", "TASK_STATE_WORKING", "pushed late", None, 9));
    assert_eq!(s.task(&k).unwrap().state(), &TaskState::InputRequired);
    // An unstamped end is taken: terminal is never discarded.
    s.apply(stamped_update("t1", "TASK_STATE_CANCELED", "", None, 10));
    assert_eq!(s.task(&k).unwrap().state(), &TaskState::Canceled);
    assert_eq!(s.task(&k).unwrap().state_since, ts(10), "placed at its arrival");
    // Among unstamped statuses, arrival orders: the later one is taken.
    s.apply(stamped_update("t2", "TASK_STATE_WORKING", "", None, 1));
    s.apply(stamped_update("t2", "TASK_STATE_INPUT_REQUIRED", "?", None, 2));
    assert_eq!(s.task(&key(0, "t2")).unwrap().state(), &TaskState::InputRequired);
    // A stamped status after an unstamped one (a first SUBMITTED without a stamp) is taken.
    s.apply(stamped_update("t3", "TASK_STATE_SUBMITTED", "", None, 100));
    s.apply(status_update(0, "t3", "TASK_STATE_WORKING", "", 90));
    assert_eq!(s.task(&key(0, "t3")).unwrap().state(), &TaskState::Working);
}

#[test]
fn a_terminal_tasks_artifacts_are_frozen() {
    let mut s = store();
    let k = key(0, "t1");
    let chunk = |text: &str, at: i64| {
        update(
            0,
            json!({"artifactUpdate": {"taskId": "t1", "contextId": "ctx",
                "artifact": {"artifactId": "a1", "parts": [{"text": text}]}}}),
            at,
        )
    };
    s.apply(status_update(0, "t1", "TASK_STATE_WORKING", "", 1));
    s.apply(chunk("report", 2));
    s.apply(status_update(0, "t1", "TASK_STATE_COMPLETED", "done", 3));
    assert_eq!(s.apply(chunk("forged", 4)), Change::Nothing);
    assert_eq!(s.task(&k).unwrap().artifacts[0].text(), "report");
    // A stale snapshot (still WORKING) carries no artifacts into the ended task...
    let with_artifact = |state: &str, at: i64, text: &str| {
        let task = serde_json::from_value(json!({"id": "t1", "contextId": "ctx",
            "status": status(state, "done", at),
            "artifacts": [{"artifactId": "a1", "parts": [{"text": text}]}]}))
        .unwrap();
        Event::Snapshot {
            agent: 0,
            task,
            seen: ts(5),
        }
    };
    s.apply(with_artifact("TASK_STATE_WORKING", 2, "stale"));
    assert_eq!(s.task(&k).unwrap().artifacts[0].text(), "report");
    // ...but the agent's record of the ended task may fill them in.
    s.apply(with_artifact("TASK_STATE_COMPLETED", 3, "report, whole"));
    assert_eq!(s.task(&k).unwrap().artifacts[0].text(), "report, whole");
}
