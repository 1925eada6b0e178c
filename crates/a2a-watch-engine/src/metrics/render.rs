//! The registry in the Prometheus text exposition format (0.0.4), or in OpenMetrics 1.0 when
//! the scraper asks for it (`Format::accepting`): the two differ in a counter's family name
//! (OpenMetrics names it without `_total`), the content type and the closing `# EOF`.

use std::collections::HashMap;
use std::fmt::{Display, Write};

use jiff::Timestamp;

use super::{AgentSeries, Registry, STATES, WAIT_BUCKETS, WAITING};

/// Which exposition format a scrape gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    OpenMetrics,
}

impl Format {
    /// OpenMetrics when the `Accept` header names it (Prometheus does by default), else text.
    pub fn accepting(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.to_ascii_lowercase().contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// One exposition being written.
struct Exposition {
    out: String,
    format: Format,
}

impl Exposition {
    /// A family's `# HELP` and `# TYPE`; a counter's samples are `name`, which ends in `_total`.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let family = match (self.format, kind) {
            (Format::OpenMetrics, "counter") => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let _ = writeln!(self.out, "# HELP {family} {help}\n# TYPE {family} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        for (i, (label, text)) in labels.iter().enumerate() {
            self.out.push(if i == 0 { '{' } else { ',' });
            let _ = write!(self.out, "{label}=\"{}\"", escape(text));
        }
        if !labels.is_empty() {
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }
}

/// A label value as both formats quote it: backslash, double quote and line feed escaped.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Each agent's `agent` label: its name, else its host; a label another agent already has gets
/// `#2`, `#3`, ..., so that no two agents' series collide (a scrape with twins is refused whole).
fn labels(registry: &Registry) -> Vec<String> {
    let mut taken: HashMap<String, usize> = HashMap::new();
    (registry.agents.iter())
        .map(|a| {
            let name = a.name.clone().unwrap_or_else(|| a.host.clone());
            let n = taken.entry(name.clone()).or_default();
            *n += 1;
            if *n == 1 { name } else { format!("{name}#{n}") }
        })
        .collect()
}

pub(super) fn render(registry: &Registry, now: Timestamp, format: Format) -> String {
    let mut e = Exposition {
        out: String::new(),
        format,
    };
    let labels = labels(registry);
    let agents: Vec<(&str, &AgentSeries)> = labels.iter().map(String::as_str).zip(&registry.agents).collect();
    tasks(&mut e, &agents, now);
    waits(&mut e, &agents);
    agent_families(&mut e, &agents);
    if let Some(queue) = &registry.otlp {
        let name = "a2a_watch_otlp_dropped_total";
        e.family(
            name,
            "counter",
            "Spans not exported: the oldest when the queue was full, or a batch the collector did not take after retries.",
        );
        e.sample(name, &[], queue.dropped());
    }
    if format == Format::OpenMetrics {
        e.out.push_str("# EOF\n");
    }
    e.out
}

/// The task families: tasks per state, the oldest waiting, the transitions.
fn tasks(e: &mut Exposition, agents: &[(&str, &AgentSeries)], now: Timestamp) {
    e.family("a2a_watch_tasks", "gauge", "Tasks now in each state.");
    for (agent, a) in agents {
        for (state, n) in STATES.iter().zip(&a.tasks) {
            if let Some(n) = n {
                e.sample("a2a_watch_tasks", &[("agent", agent), ("state", state)], n);
            }
        }
    }
    let name = "a2a_watch_oldest_waiting_seconds";
    e.family(
        name,
        "gauge",
        "How long the oldest task in the state has waited (0 when none).",
    );
    for (agent, a) in agents {
        for (&state, waiting) in WAITING.iter().zip(&a.waiting) {
            let oldest = waiting
                .first()
                .map_or(0.0, |(since, _)| now.duration_since(*since).as_secs_f64().max(0.0));
            e.sample(name, &[("agent", agent), ("state", STATES[state])], oldest);
        }
    }
    let name = "a2a_watch_task_transitions_total";
    e.family(
        name,
        "counter",
        "Task state changes seen, by the state left and the state entered.",
    );
    for (agent, a) in agents {
        for (&(from, to), n) in &a.transitions {
            e.sample(name, &[("agent", agent), ("from", STATES[from]), ("to", STATES[to])], n);
        }
    }
}

/// How long tasks waited on a person before they left the state.
fn waits(e: &mut Exposition, agents: &[(&str, &AgentSeries)]) {
    let name = "a2a_watch_wait_duration_seconds";
    e.family(
        name,
        "histogram",
        "How long tasks stayed in an interrupted state before they left it.",
    );
    let bucket = format!("{name}_bucket");
    for (agent, a) in agents {
        for (&state, h) in WAITING.iter().zip(&a.waits) {
            let state = STATES[state];
            let mut cumulative = 0;
            for (le, n) in WAIT_BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let le = le.to_string();
                e.sample(&bucket, &[("agent", agent), ("state", state), ("le", &le)], cumulative);
            }
            e.sample(&bucket, &[("agent", agent), ("state", state), ("le", "+Inf")], h.count);
            e.sample(&format!("{name}_sum"), &[("agent", agent), ("state", state)], h.sum);
            e.sample(&format!("{name}_count"), &[("agent", agent), ("state", state)], h.count);
        }
    }
}

/// Reads one of an agent's counters.
type Count = fn(&AgentSeries) -> u64;

/// The families of the agents themselves: up, info and their counters.
fn agent_families(e: &mut Exposition, agents: &[(&str, &AgentSeries)]) {
    e.family(
        "a2a_watch_agent_up",
        "gauge",
        "1 when the agent's card and listing or stream answer.",
    );
    for (agent, a) in agents {
        e.sample("a2a_watch_agent_up", &[("agent", agent)], u8::from(a.up));
    }
    e.family(
        "a2a_watch_agent_info",
        "gauge",
        "The agent's protocol version and binding (always 1).",
    );
    for (agent, a) in agents {
        if let Some((protocol, binding)) = a.info {
            let labels = [("agent", *agent), ("protocol", protocol), ("binding", binding)];
            e.sample("a2a_watch_agent_info", &labels, 1);
        }
    }
    let counters: [(&str, &str, Count); 3] = [
        ("a2a_watch_events_total", "Events applied from the agent.", |a| a.events),
        (
            "a2a_watch_stream_reconnects_total",
            "Times the agent's connection was tried again.",
            |a| a.reconnects,
        ),
        (
            "a2a_watch_push_refused_total",
            "Push deliveries refused for a missing or wrong token.",
            |a| a.push_refused,
        ),
    ];
    for (name, help, value) in counters {
        e.family(name, "counter", help);
        for (agent, a) in agents {
            e.sample(name, &[("agent", agent)], value(a));
        }
    }
}
