//! How the background workers are told to stop: the handle's [`WorkerStop`] and each worker's
//! [`StopSignal`], which its loop waits on between passes (see `workers.rs`).

use std::time::Duration;

use tokio::sync::watch;

/// Tells the workers to stop after their current pass (cheap to clone; see [`Workers::stopper`](super::workers::Workers::stopper)).
#[derive(Clone)]
pub struct WorkerStop(watch::Sender<bool>);

impl WorkerStop {
    pub(super) fn new(stop: &watch::Sender<bool>) -> WorkerStop {
        WorkerStop(stop.clone())
    }

    /// Tells every worker to stop once its current pass is done.
    pub fn stop(&self) {
        self.0.send_replace(true);
    }
}

/// What a worker's loop waits on between passes: the pause, or the order to stop.
pub(super) struct StopSignal(watch::Receiver<bool>);

impl StopSignal {
    pub(super) fn new(stop: &watch::Sender<bool>) -> StopSignal {
        StopSignal(stop.subscribe())
    }

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

    /// As [`StopSignal::pause`], but ends early when `wake` is notified.
    pub(super) async fn pause_or(&mut self, pause: Duration, wake: &tokio::sync::Notify) -> bool {
        if *self.0.borrow() {
            return false;
        }
        tokio::select! {
            _ = self.0.changed() => false,
            () = tokio::time::sleep(pause) => !*self.0.borrow(),
            () = wake.notified() => !*self.0.borrow(),
        }
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
