//! The background workers every replica runs beside the RPCs, behind one handle: the turn-clock
//! sweeper (`sweeper.rs`), the sweep of pending bot turns (`bots.rs`), retention
//! (`retention.rs`) and webhook delivery (`webhook_delivery.rs`). None owns a game: each works through the store, so every replica runs them
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

use super::bots::BotWorkers;
use super::stop::StopSignal;
pub use super::stop::WorkerStop;
use super::tabula::Tabula;
use super::webhook_delivery::WebhookWorker;

/// The running workers of one replica.
pub struct Workers {
    stop: watch::Sender<bool>,
    tasks: Vec<(&'static str, JoinHandle<()>)>,
}

impl Workers {
    /// Starts this replica's workers on `tabula`, as its options say: retention when configured,
    /// the turn-clock sweeper unless disabled, the bot workers (told of every new entry by the
    /// core) and their sweep when the replica plays bots.
    pub fn start(tabula: &Arc<Tabula>) -> Workers {
        let (stop, _) = watch::channel(false);
        let signal = || StopSignal::new(&stop);
        let mut tasks = vec![
            (
                "tenant directory",
                tokio::spawn(tabula.tenants().clone().follow(signal())),
            ),
            (
                "stream quota leases",
                tokio::spawn(tabula.quotas().clone().renew_streams(signal())),
            ),
        ];
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
        // The bot workers act on new entries, so the core tells them of each one; a replica
        // without bot threads still records bot turns for the others' sweeps.
        let bots = BotWorkers::new(tabula);
        // Webhooks are delivered by every replica, woken by its own commits.
        let webhooks = WebhookWorker::new(tabula);
        tabula.observe_entries(vec![bots.clone(), webhooks.clone()]);
        tasks.push(("webhook delivery", tokio::spawn(webhooks.run(signal()))));
        if tabula.options().bots.threads > 0 {
            tasks.push((
                "bot-turn sweep",
                tokio::spawn(bots.sweep_bot_turns(signal())),
            ));
        }
        Workers { stop, tasks }
    }

    /// What tells the workers to stop, for the shutdown signal to hold.
    pub fn stopper(&self) -> WorkerStop {
        WorkerStop::new(&self.stop)
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
