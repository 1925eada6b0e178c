//! The signals that end a2a-watch the way `q` does (README, "Monitoring stack"): SIGTERM
//! (systemd, `docker stop`, `kill`), SIGINT (Ctrl-C where the terminal is not in raw mode) and
//! SIGHUP (the terminal closed). Caught, they end the loop: the burst at hand is applied, written
//! and recorded, the terminal is restored, and the exit status is 0. Left to their default
//! action, they would kill the process with the terminal in raw mode and a recording cut short.

use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The three signals, listened for from the start: one that comes while a burst is applied is
/// kept for the next wait, not lost between two waits.
pub struct Stop {
    terminate: Signal,
    interrupt: Signal,
    hangup: Signal,
}

impl Stop {
    pub fn listen() -> io::Result<Stop> {
        Ok(Stop {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Once one of them came.
    pub async fn requested(&mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
            _ = self.hangup.recv() => {}
        }
    }
}
