//! The dashboard's loop: terminal events become actions on the `App`, watch events go into the
//! store, and the screen is drawn only when something changed (at most ~30 times a second, plus a
//! slow tick for the ages). Knows nothing of HTTP.

use std::io::{self, Stdout};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, EventStream,
};
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use super::{App, effects};
use crate::event::{AgentId, Command, Receiver};
use crate::ui::view;

const FRAME: Duration = Duration::from_millis(33);
/// Ages on screen change once a second.
const TICK: Duration = Duration::from_secs(1);
/// Events applied before the screen gets a chance to redraw.
const BATCH: usize = 4096;

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
    for command in std::mem::take(&mut app.steer.outbox) {
        // The engine only stops when we do; a send error means we are quitting anyway.
        let _ = commands.send(command).await;
    }
    let mut out = io::stdout();
    for effect in std::mem::take(&mut app.steer.effects) {
        if let Err(message) = effects::perform(&effect, &mut out) {
            app.flash(message, true);
        }
    }
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
    let mut dirty = true;
    let mut engine_open = true;
    let mut last_draw = tokio::time::Instant::now() - FRAME;
    while !app.quit {
        flush(app, commands).await;
        if dirty {
            let wait = FRAME.saturating_sub(last_draw.elapsed());
            if wait.is_zero() {
                draw(terminal, app)?;
                last_draw = tokio::time::Instant::now();
                dirty = false;
            }
        }
        let redraw_at = last_draw + FRAME;
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => {
                    // Keys are judged at the time they arrive (a box that just opened ignores Enter).
                    app.now = jiff::Timestamp::now();
                    dirty |= super::on_terminal_event(app, ev);
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            ev = events.recv(), if engine_open => match ev {
                Some(ev) => {
                    // Coalesce a burst: apply everything waiting, then draw once.
                    let mut changes = vec![app.store.apply(ev)];
                    for _ in 0..BATCH {
                        match events.try_recv() {
                            Ok(ev) => changes.push(app.store.apply(ev)),
                            Err(_) => break,
                        }
                    }
                    changes.retain(|c| *c != crate::store::Change::Nothing);
                    if !changes.is_empty() {
                        app.now = jiff::Timestamp::now();
                        app.on_changes(&changes);
                        dirty = true;
                    }
                }
                None => engine_open = false,
            },
            _ = tick.tick() => {
                app.now = jiff::Timestamp::now();
                app.on_tick();
                dirty |= !app.store.is_empty() || app.steer.flash.is_some() || app.modal();
            }
            () = tokio::time::sleep_until(redraw_at), if dirty => {}
        }
    }
    Ok(())
}

fn draw(terminal: &mut Terminal<CrosstermBackend<Stdout>>, app: &mut App) -> io::Result<()> {
    app.now = jiff::Timestamp::now();
    let size = terminal.size()?;
    app.prepare(ratatui::layout::Rect::new(0, 0, size.width, size.height));
    terminal.draw(|frame| view::draw(frame, app))?;
    Ok(())
}
