//! `a2a-watch replay FILE`: the dashboard on a recording (`--record`), with no network: the
//! dashboard's own loop on the recording's clock (`run::playback`), so the same recording at the
//! same size shows the same screen at the same recording time. Actions that would send are off.
//! `--json` prints the recording's `--json` lines again; `--snapshot` writes the screen at `--at`
//! as SVG or HTML.

use std::path::PathBuf;

use clap::Args;

use super::dashboard::{self, ScreenArgs};
use super::{Error, out};
use crate::app::App;
use crate::app::keys::KeyMap;
use crate::app::steer::Prefs;
use crate::config::Config;
use crate::ndjson::JsonLines;
use crate::record::Recording;
use crate::run::playback::{self, Playback};
use crate::run::{screen, shot};

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
    let mut playback = Playback::new(recording, args.at.is_none(), args.speed)?;
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
    Ok(screen::show(app, &mut playback, None).await?)
}

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
        if buf.len() > playback::BATCH * 64 {
            out::write(&buf);
            buf.clear();
        }
    }
    out::write(&buf);
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
