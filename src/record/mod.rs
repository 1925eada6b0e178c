//! Recordings (`--record FILE`): every event the store applied, with its arrival time, as NDJSON,
//! and reading them back for `a2a-watch replay`.
//!
//! The first line is a versioned header: `{"recording":"a2a-watch","format":1,"version",
//! "started","agents":[{"name","url"}]}`, the agents as the user named them (a name only where
//! the user gave one; never a credential, a header or a token command: the store never holds
//! them). Every other line is the line `--json` prints for the event, if it prints one (the same
//! fields, so scripts that read `--json` read recordings too), plus `ms` (milliseconds from the
//! start to the event's arrival) and `rec` (the event itself, the A2A parts in their wire JSON).
//! Events that changed nothing are left out. Agent text is JSON-escaped, control characters
//! included (`ndjson`), and shown through the same sanitising as live text when replayed.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::cli::JsonLines;
use crate::event::{AgentId, Event};
use crate::ndjson;
use crate::store::{Change, Store};

pub mod shot;

/// The format this version writes and the newest it reads; a change that older versions would
/// misread takes the next number.
pub const FORMAT: u32 = 1;
/// The header's `recording` value: what marks a file as ours.
const MAGIC: &str = "a2a-watch";

/// An agent as the user named it: the URL as given (user info is refused by
/// `discovery::parse_url`), and the name only if the user gave one (the card's
/// name arrives again with the recorded `info` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedAgent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub url: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub recording: String,
    pub format: u32,
    /// The a2a-watch version that recorded it.
    pub version: String,
    pub started: Timestamp,
    pub agents: Vec<RecordedAgent>,
}

impl Header {
    pub fn new(agents: impl IntoIterator<Item = (Option<String>, String)>, started: Timestamp) -> Header {
        Header {
            recording: MAGIC.into(),
            format: FORMAT,
            version: env!("CARGO_PKG_VERSION").into(),
            started,
            agents: agents
                .into_iter()
                .map(|(name, url)| RecordedAgent { name, url })
                .collect(),
        }
    }

    /// An empty store on the recorded agents, as the live one started.
    pub fn store(&self) -> Store {
        Store::new(self.agents.iter().map(|a| (a.name.clone(), a.url.clone())))
    }
}

/// Writes a recording as events are applied: [`Recorder::apply`] in place of `Store::apply`,
/// [`Recorder::flush`] once per burst.
pub struct Recorder {
    file: File,
    path: PathBuf,
    clock: Instant,
    lines: JsonLines,
    /// The lines of the current burst, written out by `flush`.
    pending: Vec<u8>,
}

impl Recorder {
    /// Creates (or truncates) the file and writes the header.
    pub fn create(path: &Path, agents: impl IntoIterator<Item = (Option<String>, String)>) -> io::Result<Recorder> {
        let mut recorder = Recorder {
            file: File::create(path)?,
            path: path.to_path_buf(),
            clock: Instant::now(),
            lines: JsonLines::default(),
            pending: Vec::new(),
        };
        ndjson::push_line(&mut recorder.pending, &Header::new(agents, Timestamp::now()));
        recorder.flush()?;
        Ok(recorder)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Applies one event to the store and records it, if it changed anything. `echo` receives the
    /// line `--json` prints for it (headless mode prints what it records).
    pub fn apply(&mut self, store: &mut Store, ev: Event, echo: Option<&mut Vec<u8>>) -> Change {
        let ms = self.clock.elapsed().as_millis();
        let rec = ndjson::to_json(&ev);
        let start = self.pending.len();
        let change = self.lines.take(store, ev, &mut self.pending);
        if let Some(echo) = echo {
            echo.extend_from_slice(&self.pending[start..]);
        }
        if change == Change::Nothing {
            self.pending.truncate(start);
            return change;
        }
        if self.pending.len() > start {
            // The `--json` line's closing "}\n" makes way for the replay fields.
            self.pending.truncate(self.pending.len() - 2);
            self.pending.push(b',');
        } else {
            self.pending.push(b'{');
        }
        // Writing to a Vec cannot fail.
        let _ = writeln!(self.pending, "\"ms\":{ms},\"rec\":{rec}}}");
        change
    }

    /// Writes out what the burst recorded: whole lines only, so a killed process leaves a
    /// recording that replays up to its last whole line.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let result = self.file.write_all(&self.pending);
        self.pending.clear();
        result
    }
}

/// One recorded event: when it arrived (milliseconds from the start) and what it was.
#[derive(Debug, Clone)]
pub struct Entry {
    pub ms: u64,
    pub event: Event,
}

#[derive(Deserialize)]
struct EntryLine {
    ms: u64,
    rec: Event,
}

/// A recording read back whole.
#[derive(Debug, Clone)]
pub struct Recording {
    pub header: Header,
    pub entries: Vec<Entry>,
    /// The file ended inside a line (the recorder was killed): the rest was left out.
    pub cut_short: bool,
}

/// Why a file cannot be replayed, with the place in it.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}:{line}: {what}", path.display())]
    Bad { path: PathBuf, line: usize, what: String },
}

impl Recording {
    pub fn read(path: &Path) -> Result<Recording, ReadError> {
        let bytes = std::fs::read(path).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Recording::parse(&bytes).map_err(|(line, what)| ReadError::Bad {
            path: path.to_path_buf(),
            line,
            what,
        })
    }

    /// Reads the lines; an error names the line (from 1) and what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<Recording, (usize, String)> {
        let mut lines = bytes.split_inclusive(|b| *b == b'\n');
        let first = lines.next().filter(|l| l.ends_with(b"\n"));
        let header = parse_header(first.ok_or((1, "not an a2a-watch recording: no header line".to_string()))?)
            .map_err(|what| (1, what))?;
        let mut entries = Vec::new();
        let mut cut_short = false;
        let mut last_ms = 0;
        for (i, line) in lines.enumerate() {
            let number = i + 2;
            if !line.ends_with(b"\n") {
                cut_short = true;
                break;
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            let entry: EntryLine =
                serde_json::from_slice(line).map_err(|e| (number, format!("not a recorded event: {e}")))?;
            let agent = agent_of(&entry.rec);
            if agent >= header.agents.len() {
                return Err((
                    number,
                    format!("agent {agent} is not in the header ({} agents)", header.agents.len()),
                ));
            }
            // Arrival times never go back, whatever the file says.
            last_ms = last_ms.max(entry.ms);
            entries.push(Entry {
                ms: last_ms,
                event: entry.rec,
            });
        }
        Ok(Recording {
            header,
            entries,
            cut_short,
        })
    }

    /// The recording's length: the arrival of its last event.
    pub fn duration_ms(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.ms)
    }

    /// The wall-clock time `ms` into the recording.
    pub fn time_at(&self, ms: u64) -> Timestamp {
        let offset = jiff::SignedDuration::from_millis(i64::try_from(ms).unwrap_or(i64::MAX));
        self.header.started.checked_add(offset).unwrap_or(self.header.started)
    }

    /// How many entries arrived by `ms`.
    pub fn count_by(&self, ms: u64) -> usize {
        self.entries.partition_point(|e| e.ms <= ms)
    }
}

fn parse_header(line: &[u8]) -> Result<Header, String> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("not an a2a-watch recording: {e}"))?;
    if value.get("recording").and_then(|v| v.as_str()) != Some(MAGIC) {
        return Err("not an a2a-watch recording: the first line is no recording header".into());
    }
    let format = value.get("format").and_then(|v| v.as_u64()).unwrap_or(0);
    if format > u64::from(FORMAT) {
        let by = value.get("version").and_then(|v| v.as_str()).unwrap_or("?");
        return Err(format!(
            "recorded in format {format} by a2a-watch {}; this a2a-watch ({}) reads format {FORMAT} at most: \
             replay it with a newer a2a-watch",
            crate::text::one_line(by),
            env!("CARGO_PKG_VERSION")
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("a broken recording header: {e}"))
}

/// The agent an event is about.
fn agent_of(ev: &Event) -> AgentId {
    match ev {
        Event::Info { agent, .. }
        | Event::Health { agent, .. }
        | Event::Snapshot { agent, .. }
        | Event::Update { agent, .. }
        | Event::Watching { agent, .. }
        | Event::NotFound { agent, .. }
        | Event::Quiet { agent, .. }
        | Event::Tapped { agent, .. }
        | Event::ListingCut { agent, .. }
        | Event::PushRefused { agent }
        | Event::EventsMissed { agent }
        | Event::TaskError { agent, .. }
        | Event::Action { agent, .. } => *agent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::{StreamResponse, Task, TaskState, TaskStatus};
    use crate::event::Health;

    fn task(id: &str, state: TaskState, text: &str) -> Task {
        let mut status = TaskStatus {
            state,
            ..TaskStatus::default()
        };
        status.message = Some(crate::a2a::Message::agent(vec![crate::a2a::Part::text(text)]));
        Task {
            id: id.into(),
            context_id: "c".into(),
            status,
            ..Task::default()
        }
    }

    fn record(events: Vec<Event>) -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!("a2a-watch-rec-{}-{}", std::process::id(), events.len()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("r.ndjson");
        let agents = vec![(Some("ops".to_string()), "http://127.0.0.1:9/a2a".to_string())];
        let mut store = Store::new(agents.clone());
        let mut rec = Recorder::create(&path, agents).unwrap();
        for ev in events {
            rec.apply(&mut store, ev, None);
        }
        rec.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        bytes
    }

    #[test]
    fn lines_are_the_json_lines_plus_the_event_and_read_back() {
        let seen = Timestamp::UNIX_EPOCH;
        let hostile = "done \u{1b}[2J\u{9b}31m";
        let working = task("t1", TaskState::Working, "working");
        let bytes = record(vec![
            Event::Health {
                agent: 0,
                health: Health::Streaming,
            },
            Event::Snapshot {
                agent: 0,
                task: working.clone(),
                seen,
            },
            // The same again changes nothing: not recorded.
            Event::Snapshot {
                agent: 0,
                task: working,
                seen,
            },
            Event::Update {
                agent: 0,
                event: StreamResponse::Task(task("t1", TaskState::Completed, hostile)),
                seen,
            },
        ]);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(!text.contains('\u{1b}') && !text.contains('\u{9b}'), "{text}");
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0]["recording"], "a2a-watch");
        assert_eq!(lines[0]["agents"][0]["name"], "ops");
        assert_eq!(lines[1]["health"], "streaming");
        assert_eq!(lines[2]["event"], "task");
        assert_eq!(lines[2]["state"], "WORKING");
        assert_eq!(lines[3]["state"], "COMPLETED");
        assert_eq!(lines[3]["text"], hostile);
        assert!(lines[3]["rec"]["update"]["event"]["task"].is_object());

        let back = Recording::parse(&bytes).unwrap();
        assert!(!back.cut_short);
        assert_eq!(back.entries.len(), 3);
        let mut store = back.header.store();
        for e in back.entries {
            store.apply(e.event);
        }
        let t = store.tasks().next().unwrap();
        assert_eq!(*t.state(), TaskState::Completed);
        assert_eq!(t.status.text(), hostile);
    }

    #[test]
    fn a_cut_line_is_left_out_and_a_bad_one_is_named() {
        let bytes = record(vec![Event::Health {
            agent: 0,
            health: Health::Streaming,
        }]);
        let mut cut = bytes.clone();
        cut.extend_from_slice(b"{\"ms\":5,\"rec\":{\"hea");
        let back = Recording::parse(&cut).unwrap();
        assert!(back.cut_short);
        assert_eq!(back.entries.len(), 1);

        let mut bad = bytes.clone();
        bad.extend_from_slice(b"{\"ms\":5}\n");
        assert_eq!(Recording::parse(&bad).unwrap_err().0, 3);

        let mut other_agent = bytes.clone();
        other_agent.extend_from_slice(b"{\"ms\":5,\"rec\":{\"push_refused\":{\"agent\":7}}}\n");
        let (line, what) = Recording::parse(&other_agent).unwrap_err();
        assert_eq!(line, 3);
        assert!(what.contains("agent 7"), "{what}");

        let newer = String::from_utf8(bytes)
            .unwrap()
            .replacen("\"format\":1", "\"format\":99", 1);
        let (line, what) = Recording::parse(newer.as_bytes()).unwrap_err();
        assert_eq!(line, 1);
        assert!(what.contains("format 99") && what.contains("newer"), "{what}");

        for garbage in [
            &b""[..],
            b"\xff\xfe\x00garbage\n",
            b"{\"task\":\"t\"}\n",
            b"{\"recording\":\"a2a",
        ] {
            let (line, what) = Recording::parse(garbage).unwrap_err();
            assert_eq!(line, 1);
            assert!(what.contains("not an a2a-watch recording"), "{what}");
        }
    }
}
