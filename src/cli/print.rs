//! Human-readable output of the client commands. Everything that came from an agent goes
//! through `text::sanitize` first.

use std::fmt::Write;

use crate::a2a::card::Interface;
use crate::a2a::shown::ShownUrl;
use crate::a2a::{Client, PartContent, Task};
use crate::demo::DemoAgents;
use crate::text::{one_line, sanitize};

pub fn card_summary(client: &Client) -> String {
    let card = &client.card;
    let mut out = String::new();
    let _ = writeln!(out, "{}  {}", one_line(&card.name), one_line(&card.version));
    if !card.description.is_empty() {
        let _ = writeln!(out, "  {}", one_line(&card.description));
    }
    let _ = writeln!(out, "card       {}", one_line(&client.card_source));
    if let Some(signature) = &client.card_signature {
        let from = signature
            .key_origin()
            .map(|o| format!(" (key: {o})"))
            .unwrap_or_default();
        let _ = writeln!(out, "{}", one_line(&format!("{}{from}", signature.label())));
    }
    let e = &client.endpoint;
    let _ = writeln!(
        out,
        "using      {} {} at {}",
        e.binding.label(),
        e.version.label(),
        one_line(ShownUrl::of(&e.url).as_str())
    );
    for i in card.interfaces() {
        let mark = if i.supported().is_some() { "" } else { "  (not spoken)" };
        let _ = writeln!(out, "interface  {}{mark}", interface_line(&i));
    }
    let caps = &card.capabilities;
    let _ = writeln!(
        out,
        "streaming  {}   push {}   extended card {}",
        yes_no(caps.streaming),
        yes_no(caps.push_notifications),
        yes_no(card.has_extended_card())
    );
    for ext in &caps.extensions {
        let required = if ext.required { " (required)" } else { "" };
        let _ = writeln!(out, "extension  {}{required}", one_line(&ext.uri));
    }
    let requirements = card.requirements();
    if requirements.is_empty() {
        let _ = writeln!(out, "security   none declared");
    }
    for alt in requirements {
        let names: Vec<String> = alt
            .schemes
            .keys()
            .map(|name| match card.security_schemes.get(name) {
                Some(s) => format!("{} ({})", one_line(name), one_line(&s.describe())),
                None => one_line(name),
            })
            .collect();
        let _ = writeln!(
            out,
            "security   {}   token from {}",
            names.join(" + "),
            match client.token_env_var() {
                Some(var) => format!("{var} or A2A_TOKEN"),
                None => "A2A_TOKEN (or name the agent with --name NAME for A2A_TOKEN_<NAME>)".to_string(),
            }
        );
    }
    for skill in &card.skills {
        let _ = writeln!(
            out,
            "skill      {}: {}",
            one_line(&skill.name),
            one_line(&skill.description)
        );
    }
    out
}

fn interface_line(i: &Interface) -> String {
    let tenant = i
        .tenant
        .as_deref()
        .map(|t| format!(" tenant {}", one_line(t)))
        .unwrap_or_default();
    format!(
        "{} {} {}{tenant}",
        one_line(&i.binding_name),
        one_line(&i.version_name),
        one_line(ShownUrl::of_written(&i.url).as_str())
    )
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// Cuts to `max` characters, marking the cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

pub fn task_table(tasks: &[Task]) -> String {
    if tasks.is_empty() {
        return "no tasks\n".into();
    }
    let mut out = format!(
        "{:<36}  {:<36}  {:<15}  {:<24}  STATUS\n",
        "TASK", "CONTEXT", "STATE", "UPDATED"
    );
    for t in tasks {
        let at = t
            .status
            .timestamp
            .map(|ts| ts.to_string())
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<36}  {:<36}  {:<15}  {:<24}  {}",
            cut(&one_line(&t.id), 36),
            cut(&one_line(&t.context_id), 36),
            // An unknown state is the agent's own string: sanitized like any agent text.
            cut(&one_line(t.status.state.short_name()), 15),
            cut(&at, 24),
            cut(&one_line(&t.status.text()), 80)
        );
    }
    out
}

pub fn task_detail(task: &Task) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "task     {}", one_line(&task.id));
    let _ = writeln!(out, "context  {}", one_line(&task.context_id));
    let at = task
        .status
        .timestamp
        .map(|t| t.to_string())
        .unwrap_or_else(|| "no timestamp".into());
    let _ = writeln!(
        out,
        "state    {} ({}) at {at}",
        one_line(task.status.state.short_name()),
        task.status.state.class().as_str()
    );
    if let Some(m) = &task.status.message {
        let _ = writeln!(out, "status   {}", sanitize(&m.text()).replace('\n', "\n         "));
    }
    for a in &task.artifacts {
        let name = a.name.as_deref().unwrap_or(&a.artifact_id);
        let _ = writeln!(out, "artifact {} ({} parts)", one_line(name), a.parts.len());
        let text = a.text();
        if !text.is_empty() {
            let _ = writeln!(out, "  {}", sanitize(&text).replace('\n', "\n  "));
        }
        for p in &a.parts {
            if let PartContent::Data(d) = &p.content {
                let pretty = serde_json::to_string_pretty(d).unwrap_or_default();
                let _ = writeln!(out, "  {}", sanitize(&pretty).replace('\n', "\n  "));
            }
        }
    }
    if !task.history.is_empty() {
        let _ = writeln!(out, "history  {} messages", task.history.len());
        for m in &task.history {
            let _ = writeln!(
                out,
                "  {}: {}",
                one_line(m.role.proto_name()),
                cut(&one_line(&m.text()), 100)
            );
        }
    }
    out
}

pub fn demo_banner(agents: &DemoAgents) -> String {
    let mut out = String::from("demo agents on loopback:\n");
    for a in &agents.agents {
        let _ = writeln!(out, "  {:<14} {}", a.name, a.url);
    }
    out.push_str(
        "the deployer wants a bearer token: export A2A_TOKEN_DEPLOYER to the --token value and name it \
         (--agent deployer=URL or --name deployer; see README)\n",
    );
    out
}
