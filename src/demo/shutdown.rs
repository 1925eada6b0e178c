//! One signal that stops everything the demo started: servers, open streams, scenario pacing.
//! Dropping the sender counts as the signal, so dropping `DemoAgents` winds everything down.

use std::time::Duration;

use tokio::sync::watch;

#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    pub fn channel() -> (watch::Sender<bool>, Shutdown) {
        let (tx, rx) = watch::channel(false);
        (tx, Shutdown(rx))
    }

    /// Resolves once shutdown was asked for or its sender is gone.
    pub async fn signalled(mut self) {
        // An error means the sender was dropped: that is a shutdown too.
        let _ = self.0.wait_for(|stop| *stop).await;
    }

    /// Sleeps for `pause`; false when shutdown came first.
    pub async fn sleep(&self, pause: Duration) -> bool {
        tokio::select! {
            () = tokio::time::sleep(pause) => true,
            () = self.clone().signalled() => false,
        }
    }
}
