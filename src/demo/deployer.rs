//! `deployer`: the one guarded agent (docs/protocol-notes.md, "The demo scenario"). Its card asks
//! for a bearer token; a deploy waits in AUTH_REQUIRED until an operator approves outside A2A
//! (spec §7.6.1), and a request that mentions `production` is REJECTED at once.

use std::collections::BTreeMap;

use super::card::{Preferred, card, skill};
use super::scenario::{Next, Scenario, Step, TaskContext, Turn, artifact, plain_text, status, working};
use crate::a2a::card::{AgentCard, SecurityRequirement, SecurityScheme, StringList};
use crate::a2a::{Message, Part, TaskState};

pub struct Deployer;

impl Scenario for Deployer {
    fn card(&self, base_url: &str) -> AgentCard {
        let mut card = card(
            base_url,
            "deployer",
            "Deploys a build to staging once an operator approves.",
            Preferred::JsonRpc,
            vec![skill(
                "deploy",
                "Deploy",
                "Deploys a build to staging after operator approval",
                &["deploy"],
                &["deploy 2026.10.06-1 to staging"],
            )],
        );
        card.security_schemes = BTreeMap::from([(
            "bearer".to_string(),
            SecurityScheme::HttpAuth {
                scheme: "Bearer".into(),
                bearer_format: None,
                description: Some("A token issued by the platform team.".into()),
            },
        )]);
        // An empty scope list: the token alone is enough (proto SecurityRequirement).
        card.security_requirements = vec![SecurityRequirement {
            schemes: BTreeMap::from([("bearer".to_string(), StringList::default())]),
        }];
        card
    }

    fn start(&self, task: &TaskContext, request: &Message) -> Turn {
        let text = request.text();
        if text.to_lowercase().contains("production") {
            // Rejected straight from SUBMITTED (docs/protocol-notes.md, "Task states").
            return Turn::last(vec![status(
                TaskState::Rejected,
                "production deploys are not allowed from the planner",
            )]);
        }
        let build = build_name(&text);
        let link = format!("{}/approve/{}", task.base_url, task.task_id);
        let ask = Message::agent(vec![
            Part::text(format!("An operator must approve this deploy at {link}")),
            Part::url(link),
        ]);
        let after_approval = Turn::last(vec![
            working(format!("approved; deploying build {build}")),
            artifact(
                "deploy-log",
                "deploy.log",
                vec![plain_text(format!("build {build} is live on staging"))],
            ),
            status(TaskState::Completed, format!("deployed {build} to staging")),
        ]);
        Turn::new(
            vec![
                working(format!("deploying build {build} to staging")),
                Step::Status(TaskState::AuthRequired, ask),
            ],
            Next::Operator(Box::new(after_approval)),
        )
    }
}

/// The first word with a digit in it ("2026.10.06-1"), else "latest".
fn build_name(text: &str) -> String {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
        .find(|w| w.chars().any(|c| c.is_ascii_digit()))
        .unwrap_or("latest")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::PartContent;
    use crate::demo::scenario::start_with;

    fn start(text: &str) -> Turn {
        start_with(&Deployer, text)
    }

    #[test]
    fn a_deploy_waits_for_the_operator_at_a_link() {
        let turn = start("deploy 2026.10.06-1 to staging, please");
        let Some(Step::Status(TaskState::AuthRequired, ask)) = turn.steps.last() else {
            panic!("asks for approval")
        };
        let link = "http://127.0.0.1:41243/approve/t-1";
        assert_eq!(ask.text(), format!("An operator must approve this deploy at {link}"));
        assert_eq!(ask.parts[1].content, PartContent::Url(link.into()));
        let Next::Operator(after) = turn.then else {
            panic!("resumes out of band")
        };
        assert!(matches!(
            after.steps.last(),
            Some(Step::Status(TaskState::Completed, m)) if m.text() == "deployed 2026.10.06-1 to staging"
        ));
    }

    #[test]
    fn production_is_rejected_at_once() {
        let turn = start("deploy 2026.10.06-1 to Production");
        assert_eq!(turn.steps.len(), 1);
        assert!(matches!(turn.steps[0], Step::Status(TaskState::Rejected, _)));
    }

    #[test]
    fn build_names_come_from_the_first_word_with_a_digit() {
        assert_eq!(build_name("deploy (2026.10.06-1), now"), "2026.10.06-1");
        assert_eq!(build_name("deploy it"), "latest");
    }
}
