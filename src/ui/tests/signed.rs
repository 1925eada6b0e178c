//! What a signed card shows on its agent's row: `signed ✓ kid` (and whether the key proves
//! anything), `signed ✗ why`, or nothing.

use super::*;
use crate::a2a::signature::{CardSignature, KeyOrigin};

fn signed_as(s: &mut Store, agent: usize, signature: CardSignature) {
    let mut info = s.agents[agent].info.clone().expect("the store's agents are connected");
    info.card_signature = Some(signature);
    s.apply(Event::Info { agent, info });
}

#[test]
fn the_agent_row_says_whether_its_card_verifies() {
    let mut s = store();
    signed_as(
        &mut s,
        RUNNER,
        CardSignature::Verified {
            kid: "runner-2026".into(),
            key: KeyOrigin::Pinned,
        },
    );
    signed_as(
        &mut s,
        DEPLOYER,
        CardSignature::Failed {
            why: "the signature does not match the card".into(),
        },
    );
    // A key from the card itself verifies, and the row says, in full, that it proves nothing.
    signed_as(
        &mut s,
        REVIEWER,
        CardSignature::Verified {
            kid: "reviewer-key-2026".into(),
            key: KeyOrigin::Header,
        },
    );
    let mut app = app(s);
    let terminal = render(&mut app, 160, 48);
    let buffer = terminal.backend().buffer();
    let text = screen_text(buffer);
    let row = |name: &str| {
        text.lines()
            .nth(usize::from(row_of(buffer, name)))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("test-runner ").contains("signed ✓ runner-2026"), "{text}");
    assert!(
        row("deployer ").contains("signed ✗ the signature does not match the card"),
        "{text}"
    );
    assert!(
        row("code-reviewer ").contains("signed ✓ reviewer-key-2026 (key from the card itself, not pinned);"),
        "{text}"
    );
    assert!(!row("assistant ").contains("signed"), "an unsigned card shows nothing");
}
