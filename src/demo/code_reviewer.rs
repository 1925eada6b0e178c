//! `code-reviewer`: asks for the base branch (INPUT_REQUIRED), then reviews against the branch
//! named in the reply (docs/protocol-notes.md, "The demo scenario"). Lists HTTP+JSON first on its
//! card.

use serde_json::json;

use super::card::{Preferred, card, skill};
use super::error::{ApiError, ApiResult};
use super::scenario::{Next, Scenario, TaskContext, Turn, artifact, json_data, plain_text, status, working};
use crate::a2a::card::AgentCard;
use crate::a2a::{Message, TaskState};

pub struct CodeReviewer;

pub const QUESTION: &str = "Which base branch should I compare this diff against?";

impl Scenario for CodeReviewer {
    fn card(&self, base_url: &str) -> AgentCard {
        card(
            base_url,
            "code-reviewer",
            "Reviews a diff against the base branch you name.",
            Preferred::Rest,
            vec![skill(
                "review",
                "Review a diff",
                "Reviews a diff; asks for the base branch first",
                &["review"],
                &["review the payments-api diff"],
            )],
        )
    }

    fn start(&self, _task: &TaskContext, _request: &Message) -> Turn {
        Turn::new(
            vec![working("reading the diff"), status(TaskState::InputRequired, QUESTION)],
            Next::Reply(Box::new(review)),
        )
    }
}

/// The reply names the branch (spec §3.4.3: the answer is a new message on the same task).
fn review(reply: &Message) -> ApiResult<Turn> {
    let branch = reply.text().trim().to_string();
    if branch.is_empty() {
        return Err(ApiError::invalid_params("name the base branch in a text part"));
    }
    let comments = json!([
        {"file": "src/refunds.rs", "line": 42, "note": "the refund amount is not checked against the charge"},
        {"file": "src/api.rs", "line": 7, "note": "this handler logs the card number"},
    ]);
    Ok(Turn::last(vec![
        working(format!("comparing the diff against {branch}")),
        artifact(
            "review",
            "review.json",
            vec![
                plain_text(format!("Reviewed the diff against {branch}: 2 comments, no blockers.")),
                json_data(json!({"base": branch, "comments": comments})),
            ],
        ),
        status(TaskState::Completed, format!("review against {branch}: 2 comments")),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::Part;
    use crate::demo::scenario::{Step, start_with};

    #[test]
    fn asks_then_reviews_against_the_named_branch() {
        let first = start_with(&CodeReviewer, "review this");
        assert!(matches!(first.steps.last(), Some(Step::Status(TaskState::InputRequired, m)) if m.text() == QUESTION));
        let Next::Reply(answer) = first.then else {
            panic!("waits for a reply")
        };
        let blank = answer(&Message::user(vec![Part::text("  ")]));
        assert!(blank.is_err(), "an empty branch is refused");
        let second = answer(&Message::user(vec![Part::text("release/2026.10")])).unwrap();
        assert!(matches!(
            second.steps.last(),
            Some(Step::Status(TaskState::Completed, m)) if m.text() == "review against release/2026.10: 2 comments"
        ));
    }
}
