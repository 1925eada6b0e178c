//! What every demo card shares: both 1.0 interfaces, streaming, default modes (spec §4.4, §8.3).

use crate::a2a::Binding;
use crate::a2a::card::{AgentCapabilities, AgentCard, AgentInterface, AgentSkill};

/// Which binding the card lists first; clients take the first they speak (spec §8.3.1).
#[derive(Clone, Copy)]
pub enum Preferred {
    JsonRpc,
    Rest,
}

pub fn card(base_url: &str, name: &str, description: &str, preferred: Preferred, skills: Vec<AgentSkill>) -> AgentCard {
    let interface = |binding: Binding, path: &str| AgentInterface {
        url: format!("{base_url}{path}"),
        protocol_binding: binding.wire_name().into(),
        protocol_version: "1.0".into(),
        tenant: None,
    };
    let jsonrpc = interface(Binding::JsonRpc, "/");
    let rest = interface(Binding::Rest, "/rest");
    let supported_interfaces = match preferred {
        Preferred::JsonRpc => vec![jsonrpc, rest],
        Preferred::Rest => vec![rest, jsonrpc],
    };
    AgentCard {
        name: name.into(),
        description: description.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        supported_interfaces,
        capabilities: AgentCapabilities {
            streaming: true,
            ..AgentCapabilities::default()
        },
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into(), "application/json".into()],
        skills,
        ..AgentCard::default()
    }
}

pub fn skill(id: &str, name: &str, description: &str, tags: &[&str], examples: &[&str]) -> AgentSkill {
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
    AgentSkill {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        tags: strings(tags),
        examples: strings(examples),
        ..AgentSkill::default()
    }
}
