//! The background workers every replica runs beside the RPCs, behind one handle: the turn-clock
//! sweeper (`sweeper.rs`), the sweep of pending bot turns (`bots.rs`) and retention
//! (`retention.rs`). None owns a game: each works through the store, so every replica runs them
//! and any one may stop at any time.
//!
//! `serve` starts them together ([`Workers::start`]) and stops them together: on shutdown each is
//! told to stop ([`WorkerStop::stop`]), finishes the pass it is in (a pass's store calls have
//! deadlines of their own) and is waited for, at most the shutdown grace
//! ([`Workers::join`]); a worker still running then is aborted.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::tabula::Tabula;

/// The running workers of one replica.
pub struct Workers {
    stop: watch::Sender<bool>,
    tasks: Vec<(&'static str, JoinHandle<()>)>,
}

/// Tells the workers to stop after their current pass (cheap to clone; see [`Workers::stopper`]).
#[derive(Clone)]
pub struct WorkerStop(watch::Sender<bool>);

impl WorkerStop {
    /// Tells every worker to stop once its current pass is done.
    pub fn stop(&self) {
        self.0.send_replace(true);
    }
}

/// What a worker's loop waits on between passes: the pause, or the order to stop.
pub(super) struct StopSignal(watch::Receiver<bool>);

impl StopSignal {
    /// Waits `pause`, and says whether to run another pass: false once the workers are told to
    /// stop (at once if they already were, or if their handle is gone).
    pub(super) async fn pause(&mut self, pause: Duration) -> bool {
        if *self.0.borrow() {
            return false;
        }
        tokio::select! {
            _ = self.0.changed() => false,
            () = tokio::time::sleep(pause) => !*self.0.borrow(),
        }
    }
}

impl Workers {
    /// Starts this replica's workers on `tabula`, as its options say: retention when configured,
    /// the turn-clock sweeper unless disabled, the bot-turn sweep when the replica plays bots.
    pub fn start(tabula: &Arc<Tabula>) -> Workers {
        let (stop, _) = watch::channel(false);
        let signal = || StopSignal(stop.subscribe());
        let mut tasks = Vec::new();
        if let Some(options) = tabula.options().retention.clone() {
            tasks.push((
                "retention",
                tokio::spawn(super::retention::run(tabula.clone(), options, signal())),
            ));
        }
        if tabula.options().sweeper.enabled {
            tasks.push((
                "turn-clock sweeper",
                tokio::spawn(super::sweeper::run(tabula.clone(), signal())),
            ));
        }
        if tabula.options().bots.threads > 0 {
            tasks.push((
                "bot-turn sweep",
                tokio::spawn(tabula.clone().sweep_bot_turns(signal())),
            ));
        }
        Workers { stop, tasks }
    }

    /// What tells the workers to stop, for the shutdown signal to hold.
    pub fn stopper(&self) -> WorkerStop {
        WorkerStop(self.stop.clone())
    }

    /// Tells the workers to stop (if nobody has yet) and waits at most `grace` for them to finish
    /// their passes; any still running then is aborted.
    pub async fn join(mut self, grace: Duration) {
        self.stop.send_replace(true);
        let deadline = tokio::time::Instant::now() + grace;
        for (name, mut task) in std::mem::take(&mut self.tasks) {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                tracing::warn!(
                    worker = name,
                    ?grace,
                    "worker still busy after the shutdown grace: aborted"
                );
                task.abort();
            }
        }
    }
}

impl Drop for Workers {
    /// A handle dropped without [`Workers::join`] (a test's replica, an error) still stops them.
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_ends_the_pause_at_once_and_every_later_one() {
        let (stop, _) = watch::channel(false);
        let mut signal = StopSignal(stop.subscribe());
        assert!(
            signal.pause(Duration::from_millis(1)).await,
            "runs until told"
        );
        let stopper = WorkerStop(stop.clone());
        let waiting = tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let again = signal.pause(Duration::from_secs(3600)).await;
            (again, started.elapsed(), signal.pause(Duration::ZERO).await)
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        stopper.stop();
        let (again, waited, later) = waiting.await.expect("the loop ends");
        assert!(!again && !later);
        assert!(
            waited < Duration::from_secs(60),
            "woken by the stop, not the pause"
        );
    }
}
