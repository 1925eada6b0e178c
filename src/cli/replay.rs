//! `a2a-watch replay FILE`: the dashboard on a recording (`--record`), with no network. The
//! recording's clock drives the app's (`app.now()`), so the same recording at the same size shows
//! the same screen at the same recording time. Actions that would send are off. `--json` prints
//! the recording's `--json` lines again; `--snapshot` writes the screen at `--at` as SVG or HTML.

use std::io::{self, Stdout};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::dashboard::{self, ScreenArgs};
use super::{Error, out};
use crate::app::App;
use crate::app::keys::{Action, KeyMap, Mode};
use crate::app::popup::Popup;
use crate::app::steer::Prefs;
use crate::config::Config;
use crate::event::Event;
use crate::ndjson::JsonLines;
use crate::record::{Entries, Entry, Recording};
use crate::run::{self as live, shot};

#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// A recording made with --record.
    pub file: PathBuf,
    /// Playback speed: 2 plays twice as fast, 0.5 half as fast.
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
    /// No screen: print the recording's --json lines again (up to --at).
    #[arg(long, conflicts_with = "snapshot")]
    pub json: bool,
    /// Write the screen at --at (default: the end) to this file, SVG (HTML for .html), and exit.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// A time into the recording, `90s`, `1m30s`, `1500ms`: the dashboard opens there, paused.
    #[arg(long, value_name = "TIME", value_parser = parse_at)]
    pub at: Option<u64>,
    /// The --snapshot screen's size, WIDTHxHEIGHT in cells.
    #[arg(long, value_name = "WxH", default_value = "160x45", value_parser = parse_size)]
    pub size: (u16, u16),
    /// A built-in theme (dark, light, ansi16) or a theme file.
    #[arg(long)]
    pub theme: Option<String>,
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed > 0.0 && speed.is_finite() => Ok(speed),
        _ => Err("a speed is a number above 0 (1 = as recorded)".into()),
    }
}

/// `90s`, `1m30s`, `1500ms`, `1h`, or a number of seconds, as milliseconds.
fn parse_at(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a time into the recording (try 90s, 1m30s, 1500ms)");
    if text.trim().is_empty() {
        return Err(bad());
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return (seconds >= 0.0 && seconds.is_finite())
            .then_some((seconds * 1000.0) as u64)
            .ok_or_else(bad);
    }
    let mut total = 0.0;
    let mut rest = text.trim();
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit_end = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest.len(), |i| digits + i);
        let unit = match &rest[digits..unit_end] {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return Err(bad()),
        };
        total += number * unit;
        rest = &rest[unit_end..];
    }
    Ok(total as u64)
}

fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let bad = || format!("{text:?} is not a size (try 160x45)");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h) = (
        w.parse::<u16>().map_err(|_| bad())?,
        h.parse::<u16>().map_err(|_| bad())?,
    );
    if w < 10 || h < 5 {
        return Err(format!("{text:?} is too small (10x5 at least)"));
    }
    Ok((w, h))
}

pub async fn run(args: ReplayArgs, config: Option<&std::path::Path>) -> Result<(), Error> {
    let recording = Recording::read(&args.file)?;
    if recording.cut_short {
        out::error(&format!(
            "a2a-watch: {} ends inside a line (the recorder was stopped mid-write): replaying up to its last whole line",
            args.file.display()
        ));
    }
    if args.json {
        return print_lines(&recording, args.at.unwrap_or(u64::MAX));
    }
    let config = Config::load(config)?;
    let screen = ScreenArgs {
        theme: args.theme.clone(),
        ..ScreenArgs::default()
    };
    let mut app = App::new(
        recording.header.store(),
        KeyMap::with_overrides(config.key_overrides())?,
        dashboard::theme(&screen, &config)?,
    );
    // Nothing pops up by itself, rings or notifies: a replay only shows.
    app.set_prefs(Prefs {
        auto_popup: false,
        bell: false,
        desktop: false,
        ..Prefs::default()
    });
    let mut playback = Playback {
        entries: recording.entries()?,
        recording,
        next: None,
        last_ms: None,
        before_last_ms: 0,
        clock: 0,
        playing: args.at.is_none(),
        speed: args.speed,
    };
    if let Some(path) = &args.snapshot {
        playback.seek(&mut app, args.at.unwrap_or(playback.end()))?;
        let (width, height) = args.size;
        let buffer = shot::render(&mut app, width, height);
        return shot::write_new(path, &shot::document(&buffer, &app, path)).map_err(|source| Error::Io {
            what: path.display().to_string(),
            source,
        });
    }
    playback.seek(&mut app, args.at.unwrap_or(0))?;
    let mut terminal = live::setup_terminal().map_err(terminal_error)?;
    let result = play(&mut terminal, &mut app, &mut playback).await;
    live::restore_terminal();
    result
}

fn terminal_error(source: io::Error) -> Error {
    Error::Io {
        what: "the terminal".into(),
        source,
    }
}

/// Events applied in one burst at most, and `--json` lines written at a time: what a replay
/// holds beside the store and one line of the file.
const BATCH: usize = 1024;

/// The lines `--json` printed for the events up to `until_ms`, made again from the events as
/// they are read.
fn print_lines(recording: &Recording, until_ms: u64) -> Result<(), Error> {
    let mut store = recording.header.store();
    let mut lines = JsonLines::default();
    let mut buf = Vec::new();
    for entry in recording.entries()? {
        let entry = entry?;
        if entry.ms > until_ms {
            break;
        }
        lines.take(&mut store, entry.event, &mut buf);
        if buf.len() > BATCH * 64 {
            out::write(&buf);
            buf.clear();
        }
    }
    out::write(&buf);
    Ok(())
}

/// Where the replay stands: the recording's clock, and the events read from the file up to it.
/// Only what comes next is held; going back builds the store again from the start of the file
/// (a store cannot be run backwards), so a recording of any size replays in bounded memory.
struct Playback {
    recording: Recording,
    /// The events not read yet.
    entries: Entries,
    /// The event read but not applied yet: the next change.
    next: Option<Entry>,
    /// When the last event applied arrived; none applied: `None`.
    last_ms: Option<u64>,
    /// When the last event applied before `last_ms` arrived (0 for none): where `[` goes back to.
    before_last_ms: u64,
    /// Milliseconds into the recording.
    clock: u64,
    playing: bool,
    speed: f64,
}

impl Playback {
    fn end(&self) -> u64 {
        self.recording.duration_ms()
    }

    /// The next event, read if it was not yet.
    fn upcoming(&mut self) -> Result<Option<&Entry>, Error> {
        if self.next.is_none() {
            self.next = self.entries.next().transpose()?;
        }
        Ok(self.next.as_ref())
    }

    /// The next event if it arrived by `ms`, taken.
    fn take_due(&mut self, ms: u64) -> Result<Option<Event>, Error> {
        self.upcoming()?;
        let Some(entry) = self.next.take_if(|e| e.ms <= ms) else {
            return Ok(None);
        };
        if let Some(last) = self.last_ms
            && last < entry.ms
        {
            self.before_last_ms = last;
        }
        self.last_ms = Some(entry.ms);
        Ok(Some(entry.event))
    }

    /// Moves the clock to `ms` (forward or back) and the store with it.
    fn seek(&mut self, app: &mut App, ms: u64) -> Result<(), Error> {
        let ms = ms.min(self.end());
        if self.last_ms.is_some_and(|last| last > ms) {
            self.entries = self.recording.entries()?;
            self.next = None;
            self.last_ms = None;
            self.before_last_ms = 0;
            let mut store = self.recording.header.store();
            while let Some(event) = self.take_due(ms)? {
                store.apply(event);
            }
            app.replace_store(store);
        }
        self.clock = ms;
        let now = self.recording.time_at(ms);
        // Bursts of at most BATCH events, each read from the file as it is applied.
        loop {
            let (mut failed, mut taken) = (None, 0);
            let burst = std::iter::from_fn(|| match self.take_due(ms) {
                Ok(event) => event,
                Err(e) => {
                    failed = Some(e);
                    None
                }
            });
            let burst = burst.take(BATCH).inspect(|_| taken += 1);
            live::apply_burst_at(app, burst, now);
            if let Some(e) = failed {
                return Err(e);
            }
            if taken < BATCH {
                break;
            }
        }
        app.set_now(now);
        Ok(())
    }

    /// The replay's own keys: pause, and the next or previous change.
    fn act(&mut self, app: &mut App, action: Action) -> Result<(), Error> {
        match action {
            Action::Pause if !self.playing && self.clock >= self.end() => {
                self.seek(app, 0)?;
                self.playing = true;
            }
            Action::Pause => self.playing = !self.playing,
            Action::Quit => app.handle(Action::Quit),
            Action::NextChange => {
                if let Some(next) = self.upcoming()?.map(|e| e.ms) {
                    self.seek(app, next)?;
                }
            }
            // Back to just before the last change shown: the state the one before it left.
            Action::PreviousChange if self.last_ms.is_some() => self.seek(app, self.before_last_ms)?,
            _ => {}
        }
        Ok(())
    }

    /// The title line's note: where the replay is, and whether it plays.
    fn banner(&self) -> String {
        let clock = |ms: u64| format!("{:02}:{:02}", ms / 60_000, ms / 1000 % 60);
        let state = if self.playing {
            format!("▶ x{}", self.speed)
        } else {
            "⏸".into()
        };
        format!("replay {} / {} {state}", clock(self.clock), clock(self.end()))
    }
}

/// Whether an action would send something to an agent (off in a replay).
fn sends(mode: Mode, action: Action) -> bool {
    matches!(
        (mode, action),
        (
            Mode::Main,
            Action::Reply | Action::Approve | Action::Deny | Action::Cancel | Action::NewTask
        ) | (Mode::Inbox, Action::Details)
    )
}

/// One terminal event in a replay: its own keys first (except while typing), actions that would
/// send refused with a note, the rest as on the live dashboard. True if the screen may change.
fn on_event(app: &mut App, playback: &mut Playback, ev: TermEvent) -> Result<bool, Error> {
    if let TermEvent::Key(key) = &ev
        && key.kind != KeyEventKind::Release
    {
        let typing = matches!(
            app.top(),
            Some(Popup::Filter { .. } | Popup::Answer(_) | Popup::NewTask(_))
        );
        if let Some(action) = app.keys().action(Mode::Replay, key).filter(|_| !typing) {
            playback.act(app, action)?;
            return Ok(true);
        }
        if app.keys().action(app.mode(), key).is_some_and(|a| sends(app.mode(), a)) {
            app.flash(
                "replay: nothing is sent to agents (answer, approve, deny, cancel and new task are off)",
                true,
            );
            return Ok(true);
        }
    }
    Ok(crate::app::on_terminal_event(app, ev))
}

/// How often the replay's clock is looked at.
const STEP: Duration = Duration::from_millis(50);

async fn play(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    playback: &mut Playback,
) -> Result<(), Error> {
    let mut input = EventStream::new();
    let mut last = tokio::time::Instant::now();
    let mut shown = String::new();
    let mut dirty = true;
    while !app.quitting() {
        let elapsed = last.elapsed();
        last = tokio::time::Instant::now();
        if playback.playing {
            let ahead = (elapsed.as_secs_f64() * 1000.0 * playback.speed) as u64;
            playback.seek(app, playback.clock.saturating_add(ahead))?;
            if playback.clock >= playback.end() {
                playback.playing = false;
                app.flash("end of the recording: space plays it again", false);
            }
            dirty = true;
        }
        app.set_now(playback.recording.time_at(playback.clock));
        app.on_tick();
        // Nothing leaves a replay; links may still be opened or copied.
        app.take_outbox();
        live::perform_effects(app);
        let banner = playback.banner();
        if dirty || banner != shown {
            app.set_banner(Some(banner.clone()));
            shown = banner;
            live::render(terminal, app).map_err(terminal_error)?;
            dirty = false;
        }
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => dirty |= on_event(app, playback, ev)?,
                Some(Err(e)) => return Err(terminal_error(e)),
                None => return Ok(()),
            },
            () = tokio::time::sleep(STEP) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_sizes_parse() {
        assert_eq!(parse_at("90s"), Ok(90_000));
        assert_eq!(parse_at("1m30s"), Ok(90_000));
        assert_eq!(parse_at("1500ms"), Ok(1500));
        assert_eq!(parse_at("2.5"), Ok(2500));
        assert_eq!(parse_at("1h"), Ok(3_600_000));
        for bad in ["", "s", "90x", "-1", "1m30", "ms"] {
            assert!(parse_at(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size("160x45"), Ok((160, 45)));
        assert!(parse_size("160").is_err() && parse_size("3x2").is_err());
        assert!(parse_speed("0").is_err() && parse_speed("2").is_ok());
    }
}
