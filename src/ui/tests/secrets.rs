//! What the agents panel says of secrets (issue 20): an agent not asked to push says why, and an
//! unnamed agent's URL shows without the key in its query.

use super::*;

#[test]
fn an_agent_not_asked_to_push_says_why_on_its_row() {
    let mut s = store();
    let why = "push notifications off: their token is a credential, and http://192.0.2.1:9/a2a is plain http";
    s.apply(Event::Info {
        agent: DEPLOYER,
        info: AgentInfo {
            name: "deployer".into(),
            version: ProtocolVersion::V1_0,
            binding: Binding::JsonRpc,
            streaming: true,
            lists_tasks: true,
            push_off: Some(why.into()),
            card_signature: None,
        },
    });
    let mut app = app(s);
    let terminal = render(&mut app, 160, 48);
    let text = screen_text(terminal.backend().buffer());
    assert!(
        text.contains("push notifications off: their token is a credential"),
        "{text}"
    );
}

#[test]
fn an_unnamed_agent_shows_its_url_without_the_query() {
    // Short enough that the name column (24 cells) would show it whole.
    let mut app = app(Store::new([(None, "http://h/?k=s3cret".to_string())]));
    let terminal = render(&mut app, 160, 48);
    let text = screen_text(terminal.backend().buffer());
    assert!(text.contains("http://h/") && !text.contains("s3cret"), "{text}");
}
