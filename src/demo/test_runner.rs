//! `test-runner`: runs a suite, streams a log in chunks and a summary, then completes
//! (docs/protocol-notes.md, "The demo scenario"). Triggers in the request text: `fail` ends FAILED,
//! `drop` closes its streams (SendStreamingMessage and subscriptions alike) after a WORKING, `slow`
//! paces ten times slower.

use serde_json::json;

use super::card::{Preferred, card, skill};
use super::scenario::{
    Scenario, Step, TaskContext, Turn, artifact, json_data, lowered_text, plain_text, status, working,
};
use crate::a2a::card::AgentCard;
use crate::a2a::{Artifact, Message, TaskState};

pub struct TestRunner;

const LOG_CHUNKS: [&str; 3] = [
    "collected 12 items\n",
    "tests/test_api.py ........... [ 91%]\n",
    "tests/test_refunds.py F [100%]\n",
];

impl Scenario for TestRunner {
    fn card(&self, base_url: &str) -> AgentCard {
        card(
            base_url,
            "test-runner",
            "Runs the test suite of a commit and reports what failed.",
            Preferred::JsonRpc,
            vec![skill(
                "run-tests",
                "Run tests",
                "Runs the suite, streams the log and a JSON summary",
                &["tests", "ci"],
                &[
                    "run the tests of payments-api",
                    "run tests on commit deadbee, fail",
                    "run tests slow",
                ],
            )],
        )
    }

    fn start(&self, _task: &TaskContext, request: &Message) -> Turn {
        let text = lowered_text(request);
        let steps = if text.contains("fail") {
            vec![
                working("collecting tests"),
                working("checking out commit deadbee"),
                status(TaskState::Failed, "commit deadbee not found"),
            ]
        } else {
            passing_run()
        };
        Turn {
            pace: if text.contains("slow") { 10 } else { 1 },
            drops_stream: text.contains("drop"),
            ..Turn::last(steps)
        }
    }
}

fn passing_run() -> Vec<Step> {
    let progress = ["collected 12 items", "7/12 passed", "12/12 run"];
    let mut steps = vec![working("collecting tests")];
    for (i, (note, chunk)) in progress.iter().zip(LOG_CHUNKS).enumerate() {
        steps.push(working(*note));
        // The log grows by appended chunks (proto TaskArtifactUpdateEvent append/last_chunk).
        steps.push(Step::Artifact {
            artifact: Artifact {
                artifact_id: "test-log".into(),
                name: Some("test-log.txt".into()),
                parts: vec![plain_text(chunk)],
                ..Artifact::default()
            },
            append: i > 0,
            last_chunk: i == LOG_CHUNKS.len() - 1,
        });
    }
    steps.push(artifact(
        "summary",
        "summary.json",
        vec![json_data(json!({"passed": 11, "failed": 1}))],
    ));
    steps.push(status(TaskState::Completed, "1 failed, 11 passed"));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::scenario::start_with;

    fn start(text: &str) -> Turn {
        start_with(&TestRunner, text)
    }

    fn last_state(turn: &Turn) -> TaskState {
        match turn.steps.last() {
            Some(Step::Status(state, _)) => state.clone(),
            _ => TaskState::Unspecified,
        }
    }

    #[test]
    fn a_run_streams_the_log_in_chunks_and_completes() {
        let turn = start("run the tests");
        assert_eq!(last_state(&turn), TaskState::Completed);
        let chunks: Vec<(bool, bool)> = turn
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Artifact {
                    artifact,
                    append,
                    last_chunk,
                } if artifact.artifact_id == "test-log" => Some((*append, *last_chunk)),
                _ => None,
            })
            .collect();
        assert_eq!(chunks, [(false, false), (true, false), (true, true)]);
        assert_eq!((turn.pace, turn.drops_stream), (1, false));
    }

    #[test]
    fn trigger_words_fail_drop_and_slow() {
        assert_eq!(last_state(&start("run tests, fail please")), TaskState::Failed);
        let dropped = start("run tests but DROP the stream");
        assert!(dropped.drops_stream);
        assert_eq!(last_state(&dropped), TaskState::Completed);
        assert_eq!(start("run tests slow").pace, 10);
    }
}
