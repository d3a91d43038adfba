//! Retention and abandonment (issue #14 item 3): the background task every replica runs.
//!
//! Each pass, after an interval with jitter (so replicas started together do not pass together):
//!
//! 1. **Abandoned games**: running games with no entry for `--abandon-after` are ended by the
//!    table's abort entry, reason `abandoned`, appended through the conditional append at the
//!    version the game was seen idle at: a move that gets in first wins and the abort is dropped.
//!    The request id `abandoned` makes two replicas' aborts of one game one entry.
//! 2. **Finished games past `--retain-finished`**: each is read whole from the store, written to
//!    the archive, and only once the archive confirmed the write deleted from the store (its keys,
//!    then its index entries). A replica dying anywhere in between leaves the game in the store
//!    (retried next pass: the archive write is repeated with the same bytes) or leaves index
//!    entries of a game that is gone (dropped by the next pass): a game is never lost. Two
//!    replicas retiring one game write the same bytes and delete the same keys.
//!
//! Every store and archive call has a deadline, and a pass handles at most `batch` games of each
//! kind, so a pass is bounded however far behind the store is.

use std::sync::Arc;
use std::time::Duration;

use super::error::{ServiceError, ServiceResult};
use super::options::RetentionOptions;
use super::stop::StopSignal;
use super::tabula::Tabula;
use crate::archive::ArchivedGame;
use crate::proto::v1 as pb;
use crate::store::{StoreError, unix_millis};

/// The abort reason of a game ended for inactivity.
pub const ABANDONED_REASON: &str = "abandoned";

/// What one pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Games ended as abandoned by this pass.
    pub abandoned: usize,
    /// Games archived (if an archive is configured) and deleted from the store.
    pub retired: usize,
    /// Games whose handling failed (retried next pass).
    pub failed: usize,
}

/// Runs retention passes on `tabula` until told to stop: one of the replica's workers (see
/// `workers.rs`).
pub(super) async fn run(tabula: Arc<Tabula>, options: RetentionOptions, mut stop: StopSignal) {
    while stop.pause(with_jitter(options.interval)).await {
        let report = pass(&tabula, &options).await;
        if report != PassReport::default() {
            tracing::info!(
                abandoned = report.abandoned,
                retired = report.retired,
                failed = report.failed,
                "retention pass"
            );
        }
    }
}

/// `interval` plus up to a quarter of it, at random.
fn with_jitter(interval: Duration) -> Duration {
    let mut random = [0u8; 8];
    let fraction = match getrandom::fill(&mut random) {
        Ok(()) => u64::from_le_bytes(random) as f64 / u64::MAX as f64,
        Err(_) => 0.5,
    };
    interval + interval.mul_f64(fraction / 4.0)
}

/// Runs `call` within the pass's deadline.
async fn within<T>(
    timeout: Duration,
    what: &str,
    call: impl Future<Output = ServiceResult<T>>,
) -> ServiceResult<T> {
    tokio::time::timeout(timeout, call).await.map_err(|_| {
        ServiceError::Store(StoreError::Unavailable(format!(
            "retention: {what} took longer than {timeout:?}"
        )))
    })?
}

/// One pass: abandoned games first (an abandoned game then finishes, and is retired once its
/// retention is over), then finished games past retention.
pub async fn pass(tabula: &Tabula, options: &RetentionOptions) -> PassReport {
    let mut report = PassReport::default();
    if let Some(after) = options.abandon_after {
        abandon_idle(tabula, options, after, &mut report).await;
    }
    if let Some(retain) = options.retain_finished {
        retire_finished(tabula, options, retain, &mut report).await;
    }
    crate::metrics::retention_pass(report.abandoned, report.retired, report.failed);
    report
}

async fn abandon_idle(
    tabula: &Tabula,
    options: &RetentionOptions,
    after: Duration,
    report: &mut PassReport,
) {
    let cutoff = unix_millis().saturating_sub(after.as_millis() as u64);
    let store = tabula.retained.clone();
    let idle = within(options.call_timeout, "listing idle games", async {
        Ok(store.idle_running(cutoff, options.batch).await?)
    })
    .await;
    let idle = match idle {
        Ok(idle) => idle,
        Err(error) => {
            tracing::warn!(%error, "retention: idle games not listed");
            report.failed += 1;
            return;
        }
    };
    for (game_id, version) in idle {
        let abort = pb::TableAction {
            kind: Some(pb::table_action::Kind::Abort(pb::table_action::Abort {
                reason: ABANDONED_REASON.to_owned(),
            })),
        };
        let appended = within(
            options.call_timeout,
            "appending an abandonment",
            tabula.append_table_entry(&game_id, Some(version), abort, ABANDONED_REASON.to_owned()),
        )
        .await;
        match appended {
            Ok(super::table_entry::TableEntryResult::Appended { version, .. }) => {
                tracing::info!(%game_id, version, "abandoned game ended");
                report.abandoned += 1;
            }
            // A move got in first: the game is not abandoned after all.
            Ok(super::table_entry::TableEntryResult::LostRace { .. }) => {}
            Err(error) => {
                tracing::warn!(%game_id, %error, "retention: abandoned game not ended");
                report.failed += 1;
            }
        }
    }
}

async fn retire_finished(
    tabula: &Tabula,
    options: &RetentionOptions,
    retain: Duration,
    report: &mut PassReport,
) {
    let cutoff = unix_millis().saturating_sub(retain.as_millis() as u64);
    let store = tabula.retained.clone();
    let due = within(options.call_timeout, "listing finished games", async {
        Ok(store.finished_before(cutoff, options.batch).await?)
    })
    .await;
    let due = match due {
        Ok(due) => due,
        Err(error) => {
            tracing::warn!(%error, "retention: finished games not listed");
            report.failed += 1;
            return;
        }
    };
    for game_id in due {
        match retire(tabula, options, &game_id).await {
            Ok(true) => report.retired += 1,
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%game_id, %error, "retention: game not retired (retried next pass)");
                report.failed += 1;
            }
        }
    }
}

/// Archives (when an archive is configured) and then deletes one finished game; true when this
/// call deleted it.
async fn retire(tabula: &Tabula, options: &RetentionOptions, game_id: &str) -> ServiceResult<bool> {
    let store = tabula.retained.clone();
    let timeout = options.call_timeout;
    let whole = within(timeout, "reading a finished game", async {
        Ok(store.read_whole(game_id).await?)
    })
    .await?;
    let Some(whole) = whole else {
        // Gone already (another replica, or this one before dying): drop its index entries.
        within(timeout, "dropping index entries", async {
            Ok(store.remove_finished(game_id).await?)
        })
        .await?;
        return Ok(false);
    };
    let Some(finished_at_ms) = whole.finished_at_ms else {
        return Err(ServiceError::Internal(format!(
            "game {game_id} is listed as finished but its meta says it runs"
        )));
    };
    if let Some(archive) = tabula.cache.archive() {
        let archived = ArchivedGame {
            meta: whole.meta,
            finished_at_ms,
            entries: whole.entries,
        };
        // Only once the archive has confirmed the write may the store forget the game.
        within(timeout, "writing the archive", async {
            Ok(archive.put(&archived).await?)
        })
        .await?;
    }
    within(timeout, "deleting a retired game", async {
        Ok(store.remove_finished(game_id).await?)
    })
    .await
}
