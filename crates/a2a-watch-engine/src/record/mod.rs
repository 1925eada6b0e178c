//! Recordings (`--record FILE`): every event the store applied, with its arrival time, as NDJSON,
//! and reading them back for `a2a-watch replay`.
//!
//! The first line is a versioned header: `{"recording":"a2a-watch","format":1,"version",
//! "started","agents":[{"name","url","group"}]}`, the agents as the user named them (a name only
//! where the user gave one, a group where the config gave one; never a credential, a header or a
//! token command: the store never holds them). Every other line is the line `--json` prints for the event, if it prints one (the same
//! fields, so scripts that read `--json` read recordings too), plus `ms` (milliseconds from the
//! start to the event's arrival) and `rec` (the event itself, the A2A parts in their wire JSON).
//! Events that changed nothing are left out. Agent text is JSON-escaped, control characters
//! included (`ndjson`), and shown through the same sanitising as live text when replayed.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::a2a::shown::ShownUrl;
use crate::event::Event;
use crate::ndjson::{self, JsonLines};
use crate::store::{Change, Store};

/// The format this version writes and the newest it reads; a change that older versions would
/// misread takes the next number.
pub const FORMAT: u32 = 1;
/// The header's `recording` value: what marks a file as ours.
const MAGIC: &str = "a2a-watch";

/// An agent as the user named it: the URL in its shown form (no user info, query or fragment),
/// and the name only if the user gave one (the card's name arrives again with the recorded
/// `info` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedAgent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub url: ShownUrl,
    /// The config's `group`; absent in recordings made before groups, read as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// An agent as `Store::new` takes it, in no group.
impl<U: AsRef<str>> From<(Option<String>, U)> for RecordedAgent {
    fn from((name, url): (Option<String>, U)) -> RecordedAgent {
        RecordedAgent {
            name,
            url: ShownUrl::of_input(url.as_ref()),
            group: None,
        }
    }
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
    pub fn new<A: Into<RecordedAgent>>(agents: impl IntoIterator<Item = A>, started: Timestamp) -> Header {
        Header {
            recording: MAGIC.into(),
            format: FORMAT,
            version: env!("CARGO_PKG_VERSION").into(),
            started,
            agents: agents.into_iter().map(Into::into).collect(),
        }
    }

    /// An empty store on the recorded agents, in their groups, as the live one started.
    pub fn store(&self) -> Store {
        let mut store = Store::new(self.agents.iter().map(|a| (a.name.clone(), a.url.clone())));
        for (entry, recorded) in store.agents.iter_mut().zip(&self.agents) {
            entry.group.clone_from(&recorded.group);
        }
        store
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
    /// Creates the file (0600) and writes the header. A file already at the path is replaced only
    /// if it is a recording and `force` says so; a link there is never written through.
    pub fn create<A: Into<RecordedAgent>>(
        path: &Path,
        agents: impl IntoIterator<Item = A>,
        force: bool,
    ) -> io::Result<Recorder> {
        let file = match create_private(path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => replace_recording(path, force)?,
            created => created?,
        };
        let mut recorder = Recorder {
            file,
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

/// A new file that only its owner can read (recordings and screenshots show task text): never
/// one already at the path, nor through a link there (`O_CREAT | O_EXCL` follows none).
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Opens `path` with `options`, only as a regular file reached without a link: `O_NOFOLLOW` on
/// the file opened, so nothing can be swapped in between a check and the open. A link or another
/// kind of file is refused as `AlreadyExists`, saying that `what` is never written through it.
pub fn open_without_link(options: &mut OpenOptions, path: &Path, what: &str) -> io::Result<File> {
    let refused = |why: String| io::Error::new(io::ErrorKind::AlreadyExists, why);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, libc::O_NOFOLLOW);
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return refused(format!("a link is there; {what} is never written through one"));
        }
        e
    })?;
    if !file.metadata()?.is_file() {
        return Err(refused(format!(
            "it is not a regular file; {what} is not written there"
        )));
    }
    Ok(file)
}

/// The longest first line read to tell a recording: a header names its agents, a few hundred
/// bytes each.
const HEADER_LIMIT: u64 = 1024 * 1024;

/// Records over the file at `path`: only a regular file reached without a link (`O_NOFOLLOW`),
/// whose first line is a recording header, and only with `force`. The new recording is a fresh
/// private file beside it ([`create_private`]'s rules, through `tempfile`), renamed over the path:
/// the old file is never written, so a hard link to it or a reader holding it open keeps the old
/// recording, and a failure leaves it whole (rename(2) replaces the name atomically).
fn replace_recording(path: &Path, force: bool) -> io::Result<File> {
    let old = open_without_link(OpenOptions::new().read(true), path, "a recording")?;
    let refused = |why: &str| io::Error::new(io::ErrorKind::AlreadyExists, why.to_string());
    let mut first = Vec::new();
    io::BufReader::new(old.take(HEADER_LIMIT)).read_until(b'\n', &mut first)?;
    let is_recording = serde_json::from_slice::<serde_json::Value>(&first)
        .is_ok_and(|header| header.get("recording").and_then(|v| v.as_str()) == Some(MAGIC));
    if !is_recording {
        return Err(refused("a file that is not a recording is there; not replaced"));
    }
    if !force {
        return Err(refused("a recording is there already; --force replaces it"));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Created 0600 with O_EXCL (tempfile's defaults on unix); removed again if the rename fails.
    let fresh = tempfile::Builder::new()
        .prefix(".a2a-watch-recording")
        .tempfile_in(dir)?;
    fresh.persist(path).map_err(|e| e.error)
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

/// The longest line a recording may have, newline aside: what one line may cost while replaying.
/// The recorder writes one event a line; a streamed event is at most 8 MiB on the wire
/// (`sse::DEFAULT_FRAME_LIMIT`), and only a task read whole (GetTask, up to 64 MiB) may be longer:
/// such a line is refused rather than held.
pub const LINE_LIMIT: usize = 16 * 1024 * 1024;

/// Reads a recording line by line in the memory of one line: the header first (`new`), then one
/// event at a time. A last line without its newline (the recorder was killed mid-write) ends the
/// events and sets `cut_short`; a line over the limit, or one that is not a recorded event, is an
/// error naming the line (from 1), after which nothing more is read.
pub struct Reader<R> {
    input: R,
    limit: usize,
    /// The line read last, from 1.
    line: usize,
    buf: Vec<u8>,
    agents: usize,
    last_ms: u64,
    failed: bool,
    pub cut_short: bool,
}

impl<R: BufRead> Reader<R> {
    /// Reads the header line; lines may be `limit` bytes long, newline aside.
    pub fn new(input: R, limit: usize) -> Result<(Header, Reader<R>), (usize, String)> {
        let mut reader = Reader {
            input,
            limit,
            line: 0,
            buf: Vec::new(),
            agents: 0,
            last_ms: 0,
            failed: false,
            cut_short: false,
        };
        let header = match reader.next_line() {
            Ok(true) => parse_header(&reader.buf),
            Ok(false) => Err("not an a2a-watch recording: no header line".to_string()),
            Err(what) => Err(what),
        }
        .map_err(|what| (1, what))?;
        reader.agents = header.agents.len();
        Ok((header, reader))
    }

    /// Reads the next whole line into `buf`; false at the end of the input or at a cut last line.
    fn next_line(&mut self) -> Result<bool, String> {
        self.buf.clear();
        self.line += 1;
        let most = self.limit as u64 + 1;
        (&mut self.input)
            .take(most)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| e.to_string())?;
        if self.buf.ends_with(b"\n") {
            return Ok(true);
        }
        if self.buf.len() as u64 == most {
            const MIB: usize = 1024 * 1024;
            let limit = if self.limit.is_multiple_of(MIB) {
                format!("{} MiB", self.limit / MIB)
            } else {
                format!("{} bytes", self.limit)
            };
            return Err(format!("a line longer than {limit}, more than a replay reads"));
        }
        self.cut_short = !self.buf.is_empty();
        Ok(false)
    }

    /// The event on the line in `buf`; `None` for a blank line.
    fn entry(&mut self) -> Result<Option<Entry>, String> {
        if self.buf.trim_ascii().is_empty() {
            return Ok(None);
        }
        let entry: EntryLine = serde_json::from_slice(&self.buf).map_err(|e| format!("not a recorded event: {e}"))?;
        let agent = entry.rec.agent();
        if agent >= self.agents {
            return Err(format!("agent {agent} is not in the header ({} agents)", self.agents));
        }
        // Arrival times never go back, whatever the file says.
        self.last_ms = self.last_ms.max(entry.ms);
        Ok(Some(Entry {
            ms: self.last_ms,
            event: entry.rec,
        }))
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Entry, (usize, String)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            let read = match self.next_line() {
                Ok(false) => return None,
                Ok(true) => self.entry(),
                Err(what) => Err(what),
            };
            match read {
                Ok(None) => {}
                Ok(Some(entry)) => return Some(Ok(entry)),
                Err(what) => {
                    self.failed = true;
                    return Some(Err((self.line, what)));
                }
            }
        }
        None
    }
}

/// A recording checked whole once (every line, its length), then read again from the file each
/// time its events are needed (`entries`): a replay holds one line at a time, never the file.
#[derive(Debug)]
pub struct Recording {
    pub header: Header,
    path: PathBuf,
    duration_ms: u64,
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

/// The events of a recording file, read as they are taken.
pub struct Entries {
    reader: Reader<BufReader<File>>,
    path: PathBuf,
}

impl Iterator for Entries {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let read = self.reader.next()?;
        Some(read.map_err(|(line, what)| ReadError::Bad {
            path: self.path.clone(),
            line,
            what,
        }))
    }
}

impl Recording {
    /// Reads the file through once: an error names the line; a cut last line is left out.
    pub fn read(path: &Path) -> Result<Recording, ReadError> {
        let (header, mut entries) = Recording::open(path)?;
        let mut duration_ms = 0;
        for entry in &mut entries {
            duration_ms = entry?.ms;
        }
        Ok(Recording {
            header,
            path: path.to_path_buf(),
            duration_ms,
            cut_short: entries.reader.cut_short,
        })
    }

    fn open(path: &Path) -> Result<(Header, Entries), ReadError> {
        let file = File::open(path).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let (header, reader) =
            Reader::new(BufReader::new(file), LINE_LIMIT).map_err(|(line, what)| ReadError::Bad {
                path: path.to_path_buf(),
                line,
                what,
            })?;
        let path = path.to_path_buf();
        Ok((header, Entries { reader, path }))
    }

    /// The events from the start, read from the file again.
    pub fn entries(&self) -> Result<Entries, ReadError> {
        Recording::open(&self.path).map(|(_, entries)| entries)
    }

    /// The recording's length: the arrival of its last event.
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms
    }

    /// The wall-clock time `ms` into the recording.
    pub fn time_at(&self, ms: u64) -> Timestamp {
        let offset = jiff::SignedDuration::from_millis(i64::try_from(ms).unwrap_or(i64::MAX));
        self.header.started.checked_add(offset).unwrap_or(self.header.started)
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
        let mut rec = Recorder::create(&path, agents, false).unwrap();
        for ev in events {
            rec.apply(&mut store, ev, None);
        }
        rec.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        bytes
    }

    /// The header, the events and whether the last line was cut, as a replay reads them.
    fn parse(bytes: &[u8]) -> Result<(Header, Vec<Entry>, bool), (usize, String)> {
        parse_with(bytes, LINE_LIMIT)
    }

    fn parse_with(bytes: &[u8], limit: usize) -> Result<(Header, Vec<Entry>, bool), (usize, String)> {
        let (header, mut reader) = Reader::new(bytes, limit)?;
        let entries = (&mut reader).collect::<Result<Vec<_>, _>>()?;
        Ok((header, entries, reader.cut_short))
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
        assert_eq!(lines[0]["agents"][0].get("group"), None, "no group, no key");
        assert_eq!(lines[1]["health"], "streaming");
        assert_eq!(lines[2]["event"], "task");
        assert_eq!(lines[2]["state"], "WORKING");
        assert_eq!(lines[3]["state"], "COMPLETED");
        assert_eq!(lines[3]["text"], hostile);
        assert!(lines[3]["rec"]["update"]["event"]["task"].is_object());

        let (header, entries, cut_short) = parse(&bytes).unwrap();
        assert!(!cut_short);
        assert_eq!(entries.len(), 3);
        let mut store = header.store();
        for e in entries {
            store.apply(e.event);
        }
        let t = store.tasks().next().unwrap();
        assert_eq!(*t.state(), TaskState::Completed);
        assert_eq!(t.status.text(), hostile);
    }

    #[test]
    fn an_agents_group_is_recorded_and_comes_back_in_the_replays_store() {
        let grouped = RecordedAgent {
            group: Some("payments".into()),
            ..RecordedAgent::from((Some("api".to_string()), "http://127.0.0.1:9"))
        };
        let header = Header::new(
            [grouped, RecordedAgent::from((None, "http://127.0.0.1:8"))],
            Timestamp::UNIX_EPOCH,
        );
        let line = serde_json::to_value(&header).unwrap();
        assert_eq!(line["agents"][0]["group"], "payments");
        let read: Header = serde_json::from_value(line).unwrap();
        let groups: Vec<_> = read.store().agents.iter().map(|a| a.group.clone()).collect();
        assert_eq!(groups, [Some("payments".to_string()), None]);
    }

    #[test]
    fn a_cut_line_is_left_out_and_a_bad_one_is_named() {
        let bytes = record(vec![Event::Health {
            agent: 0,
            health: Health::Streaming,
        }]);
        let mut cut = bytes.clone();
        cut.extend_from_slice(b"{\"ms\":5,\"rec\":{\"hea");
        let (_, entries, cut_short) = parse(&cut).unwrap();
        assert!(cut_short);
        assert_eq!(entries.len(), 1);

        let mut bad = bytes.clone();
        bad.extend_from_slice(b"{\"ms\":5}\n");
        assert_eq!(parse(&bad).unwrap_err().0, 3);

        // A line over the limit is refused by number, read no further than the limit.
        let limit = bytes.len();
        let mut long = bytes.clone();
        long.extend_from_slice(b"\n");
        long.extend(std::iter::repeat_n(b' ', limit + 1));
        long.extend_from_slice(b"\n");
        let (line, what) = parse_with(&long, limit).unwrap_err();
        assert_eq!(line, 4);
        assert!(what.contains(&format!("longer than {limit} bytes")), "{what}");
        assert!(
            parse_with(&long, 64).is_err_and(|(line, _)| line == 1),
            "the header too"
        );
        assert_eq!(
            parse_with(&long, limit + 1).unwrap().1.len(),
            1,
            "blank lines are skipped"
        );

        let mut other_agent = bytes.clone();
        other_agent.extend_from_slice(b"{\"ms\":5,\"rec\":{\"push_refused\":{\"agent\":7}}}\n");
        let (line, what) = parse(&other_agent).unwrap_err();
        assert_eq!(line, 3);
        assert!(what.contains("agent 7"), "{what}");

        let newer = String::from_utf8(bytes)
            .unwrap()
            .replacen("\"format\":1", "\"format\":99", 1);
        let (line, what) = parse(newer.as_bytes()).unwrap_err();
        assert_eq!(line, 1);
        assert!(what.contains("format 99") && what.contains("newer"), "{what}");

        for garbage in [
            &b""[..],
            b"\xff\xfe\x00garbage\n",
            b"{\"task\":\"t\"}\n",
            b"{\"recording\":\"a2a",
        ] {
            let (line, what) = parse(garbage).unwrap_err();
            assert_eq!(line, 1);
            assert!(what.contains("not an a2a-watch recording"), "{what}");
        }
    }
}
