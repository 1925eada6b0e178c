//! The terminal as the loop's sink: the app on a ratatui screen, drawn only when something
//! changed and at most once a `FRAME` (`Pacer`), its keys, mouse and paste read from crossterm,
//! its effects (title, bell, clipboard, browser, screenshot) carried out. The live dashboard and
//! a replay both show themselves through it.

use std::io::{self, Stdout};
use std::path::Path;
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event as TermEvent,
    EventStream, KeyEventKind,
};
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use futures::StreamExt;
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use tokio::sync::mpsc;

use super::stop::Stop;
use super::{Clock, Error, FRAME, Sink, Wake, shot};
use crate::app::effects::{self, Effect};
use crate::app::{self, App};
use crate::event::Event;
use crate::record::Recorder;
use crate::store::{Change, Store};
use crate::ui::view;

/// Puts the terminal back: raw mode off, main screen, mouse and paste off, cursor shown.
fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Raw mode and the alternate screen, with a panic hook that restores the terminal before the
/// panic message is printed, so a crash never leaves the terminal unusable.
fn setup_terminal() -> io::Result<Terminal<CrosstermBackend<Stdout>>> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    enable_raw_mode()?;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    Terminal::new(CrosstermBackend::new(io::stdout()))
}

fn terminal_error(source: io::Error) -> Error {
    Error::Io {
        what: "the terminal".into(),
        source,
    }
}

/// The terminal's input (keys, mouse, paste, resizes), read by a task of its own and handed on
/// over a channel. The loop polls its sink's input on every turn (each burst of events, frame
/// and tick), and a poll of crossterm's `EventStream` while its reader thread waits on the
/// terminal spins on crossterm's reader lock (`try_lock_for(0)`, several `sched_yield`s): some
/// 2,700 system calls a second with a fleet's 400 events a second (BENCHMARKS.md, section 12).
/// The task polls the stream only when crossterm wakes it: once per input.
struct Input {
    events: mpsc::Receiver<io::Result<TermEvent>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Input {
    fn spawn() -> Input {
        let (tx, events) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            let mut stream = EventStream::new();
            while let Some(ev) = stream.next().await {
                let failed = ev.is_err();
                if tx.send(ev).await.is_err() || failed {
                    break;
                }
            }
        });
        Input { events, reader }
    }
}

impl Drop for Input {
    /// The stream goes with the task, and its reader thread with it.
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The app on the terminal, until the user quits.
pub struct Screen {
    app: App,
    terminal: Terminal<CrosstermBackend<Stdout>>,
    input: Input,
    pacer: Pacer,
    /// The changes of the burst being applied.
    changes: Vec<Change>,
    /// SIGTERM, SIGINT or SIGHUP: quit as `q` does, the terminal restored.
    stop: Stop,
}

/// Runs the loop on the terminal. The terminal is restored on every way out.
pub async fn show(app: App, clock: &mut impl Clock, recorder: Option<Recorder>) -> Result<(), Error> {
    // Before the terminal is taken over: an error here leaves it as it was.
    let stop = Stop::listen().map_err(|source| Error::Io {
        what: "listening for SIGTERM, SIGINT and SIGHUP".into(),
        source,
    })?;
    let mut screen = Screen {
        app,
        terminal: setup_terminal().map_err(terminal_error)?,
        input: Input::spawn(),
        pacer: Pacer::default(),
        changes: Vec::new(),
        stop,
    };
    let result = super::run(clock, &mut screen, recorder).await;
    restore_terminal();
    result
}

impl Sink for Screen {
    type Input = TermEvent;

    fn done(&self) -> bool {
        self.app.quitting()
    }

    fn target(&mut self) -> (&mut Store, Option<&mut Vec<u8>>) {
        (self.app.store_mut(), None)
    }

    fn applied(&mut self, change: Change) {
        self.changes.push(change);
    }

    fn burst_applied(&mut self, now: Timestamp) {
        if show_changes(&mut self.app, std::mem::take(&mut self.changes), now) {
            self.pacer.changed();
        }
    }

    fn recording_failed(&mut self, path: &Path, error: io::Error) -> Result<(), Error> {
        self.app
            .flash(format!("recording stopped: {}: {error}", path.display()), true);
        Ok(())
    }

    fn events_ended(&mut self) {}

    async fn settle(&mut self, clock: &mut impl Clock) -> Result<(), Error> {
        for command in self.app.take_outbox() {
            clock.send(command).await;
        }
        perform_effects(&mut self.app);
        if let Some(note) = clock.take_note() {
            self.app.set_now(clock.now());
            self.app.flash(note, false);
            self.pacer.changed();
        }
        let banner = clock.banner();
        if banner.as_deref() != self.app.banner() {
            self.app.set_banner(banner);
            self.pacer.changed();
        }
        let export = clock.export();
        if export != self.app.export() {
            self.app.set_export(export);
            self.pacer.changed();
        }
        if self.pacer.due() {
            self.app.set_now(clock.now());
            render(&mut self.terminal, &mut self.app).map_err(terminal_error)?;
            self.pacer.drawn();
        }
        Ok(())
    }

    async fn wake(&mut self) -> Result<Wake<TermEvent>, Error> {
        tokio::select! {
            ev = self.input.events.recv() => match ev {
                Some(Ok(ev)) => Ok(Wake::Input(ev)),
                Some(Err(e)) => Err(terminal_error(e)),
                None => Ok(Wake::End),
            },
            () = self.pacer.next_frame() => Ok(Wake::Frame),
            () = self.stop.requested() => Ok(Wake::End),
        }
    }

    /// The clock's keys first, then keys that would send refused where nothing is sent, the
    /// rest as the app takes them.
    fn on_input(&mut self, ev: TermEvent, clock: &mut impl Clock) -> Result<(), Error> {
        let app = &mut self.app;
        // Keys are judged at the time they arrive (a box that just opened ignores Enter).
        app.set_now(clock.now());
        if let TermEvent::Key(key) = &ev
            && key.kind != KeyEventKind::Release
        {
            let mode = app.mode();
            if clock.on_key(app, key)? {
                self.pacer.changed();
                return Ok(());
            }
            if let Some(why) = clock.silent()
                && app.keys().action(mode, key).is_some_and(|a| a.sends(mode))
            {
                app.flash(why, true);
                self.pacer.changed();
                return Ok(());
            }
        }
        if app::on_terminal_event(app, ev) {
            self.pacer.changed();
        }
        Ok(())
    }

    /// Ages on screen move with the clock: redrawn when it moved and something shows them.
    fn on_tick(&mut self, clock: &impl Clock) {
        let now = clock.now();
        let moved = now != self.app.now();
        self.app.set_now(now);
        self.app.on_tick();
        let app = &self.app;
        if moved && (!app.store().is_empty() || app.steer().flash.is_some() || app.modal()) {
            self.pacer.changed();
        }
    }

    /// A held question's box opens when the keyboard has rested, not at the next second's tick.
    fn tick_sooner(&self, now: Timestamp) -> Option<Duration> {
        let due = self.app.held_until()?;
        Some(Duration::try_from(due.duration_since(now)).unwrap_or(Duration::ZERO))
    }
}

/// Carries out the app's side effects: the terminal's (title, bell, clipboard, browser) and the
/// screenshot, which needs the drawing.
fn perform_effects(app: &mut App) {
    let mut out = io::stdout();
    for effect in app.take_effects() {
        let Effect::Screenshot = effect else {
            if let Err(message) = effects::perform(&effect, &mut out) {
                app.flash(message, true);
            }
            continue;
        };
        match shot::save_here(app) {
            Ok(path) => app.flash(format!("screenshot: {}", path.display()), false),
            Err(e) => app.flash(format!("no screenshot: {e}"), true),
        }
    }
}

/// When the screen is drawn: only after a change, and at most once a `FRAME`, so that a
/// burst of events costs one frame (the latency bench paces its frames with this too).
pub struct Pacer {
    last_draw: tokio::time::Instant,
    dirty: bool,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer {
            last_draw: tokio::time::Instant::now() - FRAME,
            dirty: true,
        }
    }
}

impl Pacer {
    pub fn changed(&mut self) {
        self.dirty = true;
    }

    /// Whether a frame should be drawn now.
    pub fn due(&self) -> bool {
        self.dirty && self.last_draw.elapsed() >= FRAME
    }

    pub fn drawn(&mut self) {
        self.last_draw = tokio::time::Instant::now();
        self.dirty = false;
    }

    /// Resolves when a pending change may be drawn; never, while nothing changed.
    pub async fn next_frame(&self) {
        if self.dirty {
            tokio::time::sleep_until(self.last_draw + FRAME).await;
        } else {
            std::future::pending::<()>().await;
        }
    }
}

/// Applies a burst of watch events to the store, unrecorded: the screen then draws once for all
/// of them. True if anything changed.
pub fn apply_burst(app: &mut App, burst: impl IntoIterator<Item = Event>) -> bool {
    apply_burst_at(app, burst, Timestamp::now())
}

/// `apply_burst` at a given time: a replay's is the recording's clock.
pub fn apply_burst_at(app: &mut App, burst: impl IntoIterator<Item = Event>, now: Timestamp) -> bool {
    let changes = burst.into_iter().map(|ev| app.store_mut().apply(ev)).collect();
    show_changes(app, changes, now)
}

/// Tells the app what a burst changed, at `now`; true if anything did.
fn show_changes(app: &mut App, mut changes: Vec<Change>, now: Timestamp) -> bool {
    changes.retain(|c| *c != Change::Nothing);
    if changes.is_empty() {
        return false;
    }
    app.set_now(now);
    app.on_changes(&changes);
    true
}

/// Draws one frame of the real view at the terminal's size, now.
pub fn draw<B: Backend>(terminal: &mut Terminal<B>, app: &mut App) -> Result<(), B::Error> {
    app.set_now(Timestamp::now());
    render(terminal, app)
}

/// Draws one frame at the app's own time (a replay's is the recording's clock).
pub fn render<B: Backend>(terminal: &mut Terminal<B>, app: &mut App) -> Result<(), B::Error> {
    let size = terminal.size()?;
    app.prepare(view::layout(
        ratatui::layout::Rect::new(0, 0, size.width, size.height),
        app,
    ));
    terminal.draw(|frame| view::draw(frame, app))?;
    Ok(())
}
