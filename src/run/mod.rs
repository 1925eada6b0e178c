//! The dashboard's loop: terminal events become actions on the `App`, watch events go into the
//! store, and the screen is drawn only when something changed (at most ~30 times a second, plus a
//! slow tick for the ages). Knows nothing of HTTP. It sits above both `app` and `ui`: before each
//! frame it hands the app the layout `ui` computed, and it carries out the app's effects,
//! screenshots (`shot`) included.

pub mod shot;

use std::io::{self, Stdout};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, EventStream,
};
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use tokio::sync::mpsc;

use crate::app::effects::{self, Effect};
use crate::app::{self, App};
use crate::event::{AgentId, Command, Receiver};
use crate::ui::view;

pub const FRAME: Duration = Duration::from_millis(33);
/// Ages on screen change once a second.
const TICK: Duration = Duration::from_secs(1);
/// Events applied before the screen gets a chance to redraw.
pub const BATCH: usize = 4096;

/// Puts the terminal back: raw mode off, main screen, mouse and paste off, cursor shown.
pub(crate) fn restore_terminal() {
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
pub(crate) fn setup_terminal() -> io::Result<Terminal<CrosstermBackend<Stdout>>> {
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

/// Runs the dashboard until the user quits. The terminal is restored on every way out.
/// `commands` carries what the user asks for (answers, cancels, new tasks) to the engine.
pub async fn run(mut app: App, mut events: Receiver, commands: mpsc::Sender<(AgentId, Command)>) -> io::Result<()> {
    let mut terminal = setup_terminal()?;
    let result = event_loop(&mut terminal, &mut app, &mut events, &commands).await;
    restore_terminal();
    result
}

/// Hands the app's commands to the engine and carries out its side effects.
async fn flush(app: &mut App, commands: &mpsc::Sender<(AgentId, Command)>) {
    for command in app.take_outbox() {
        // The engine only stops when we do; a send error means we are quitting anyway.
        let _ = commands.send(command).await;
    }
    perform_effects(app);
}

/// Carries out the app's side effects: the terminal's (title, bell, clipboard, browser) and the
/// screenshot, which needs the drawing.
pub fn perform_effects(app: &mut App) {
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

/// Applies a burst of watch events (the first, then whatever is already waiting, up to
/// `BATCH`) to the store: the screen then draws once for all of them. True if anything changed.
pub fn apply_burst(app: &mut App, burst: impl IntoIterator<Item = crate::event::Event>) -> bool {
    apply_burst_at(app, burst, jiff::Timestamp::now())
}

/// `apply_burst` at a given time: a replay's is the recording's clock.
pub fn apply_burst_at(
    app: &mut App,
    burst: impl IntoIterator<Item = crate::event::Event>,
    now: jiff::Timestamp,
) -> bool {
    // The recording is set aside while the events apply, so that both it and the store can be
    // borrowed.
    let mut recorder = app.recorder.take();
    let mut changes: Vec<_> = (burst.into_iter())
        .map(|ev| match recorder.as_mut() {
            Some(recorder) => recorder.apply(app.store_mut(), ev, None),
            None => app.store_mut().apply(ev),
        })
        .collect();
    app.recorder = recorder;
    if let Some(recorder) = app.recorder.as_mut()
        && let Err(e) = recorder.flush()
    {
        let message = format!("recording stopped: {}: {e}", recorder.path().display());
        app.recorder = None;
        app.flash(message, true);
    }
    changes.retain(|c| *c != crate::store::Change::Nothing);
    if changes.is_empty() {
        return false;
    }
    app.set_now(now);
    app.on_changes(&changes);
    true
}

async fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    events: &mut Receiver,
    commands: &mpsc::Sender<(AgentId, Command)>,
) -> io::Result<()> {
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut pacer = Pacer::default();
    let mut engine_open = true;
    while !app.quitting() {
        flush(app, commands).await;
        if pacer.due() {
            draw(terminal, app)?;
            pacer.drawn();
        }
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => {
                    // Keys are judged at the time they arrive (a box that just opened ignores Enter).
                    app.set_now(jiff::Timestamp::now());
                    if app::on_terminal_event(app, ev) {
                        pacer.changed();
                    }
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            ev = events.recv(), if engine_open => match ev {
                Some(ev) => {
                    let waiting = std::iter::from_fn(|| events.try_recv().ok()).take(BATCH);
                    if apply_burst(app, std::iter::once(ev).chain(waiting)) {
                        pacer.changed();
                    }
                }
                None => engine_open = false,
            },
            _ = tick.tick() => {
                app.set_now(jiff::Timestamp::now());
                app.on_tick();
                if !app.store().is_empty() || app.steer().flash.is_some() || app.modal() {
                    pacer.changed();
                }
            }
            () = pacer.next_frame() => {}
        }
    }
    Ok(())
}

/// Draws one frame of the real view at the terminal's size, now.
pub fn draw<B: Backend>(terminal: &mut Terminal<B>, app: &mut App) -> Result<(), B::Error> {
    app.set_now(jiff::Timestamp::now());
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
