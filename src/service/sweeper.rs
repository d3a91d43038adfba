//! The turn-clock sweeper (issue #14, item 1): every replica runs one. Not an RPC.
//!
//! Each pass reads the deadlines due from the store's deadline index
//! ([`DeadlineSchedule::expired_deadlines`]), and for each game reloads it at its current version
//! and re-checks the deadline there (the index may lag the log; it never holds a later deadline
//! than the log's). A deadline really past is ended by appending the timeout of the seat to act
//! through [`Tabula::append_table_entry`] at that version, with a request id derived from the
//! version (`timeout@<version>`): replicas sweeping the same game at the same time append it once
//! between them, and a move appended first makes the timeout lose the race, so a move that arrived
//! in time always wins. Lost races are normal, counted and not logged as errors. A deadline found
//! later than indexed, or gone (the game ended), is corrected in the index.
//!
//! A timeout is logged no sooner than the deadline plus [`TIMEOUT_DELAY_MS`]: a move received in
//! time has that long to be appended first (the lag policy, in `lag.rs`).
//!
//! Passes start every [`SweeperOptions::interval`](super::SweeperOptions::interval) with a random jitter, so replicas started
//! together do not sweep in lockstep; every store call of a pass has a deadline
//! ([`SweeperOptions::call_timeout`](super::SweeperOptions::call_timeout)).
//!
//! [`DeadlineSchedule::expired_deadlines`]: crate::store::DeadlineSchedule::expired_deadlines

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;

use super::error::{ServiceError, ServiceResult};
use super::lag::TIMEOUT_DELAY_MS;
use super::stop::StopSignal;
use super::table_entry::TableEntryResult;
use super::tabula::Tabula;
use crate::outage::{OUTAGE_REPORT_EVERY, Outage, OutageReport};
use crate::proto::v1 as pb;
use crate::store::{IndexedDeadline, unix_millis};

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Due index entries read.
    pub due: usize,
    /// Timeouts this replica appended.
    pub timeouts: usize,
    /// Due games where a move, or another replica's timeout, got in first.
    pub lost_races: usize,
    /// Index entries found early or stale and corrected.
    pub corrected: usize,
    /// Games whose handling failed (store unavailable, timed out): tried again next pass.
    pub failed: usize,
}

/// What became of one due index entry.
enum Outcome {
    TimedOut,
    LostRace,
    Corrected,
}

/// One sweep pass of `tabula`'s replica at `now_ms` (server clock): see the module docs.
pub async fn sweep_once(tabula: &Tabula, now_ms: u64) -> ServiceResult<SweepReport> {
    let options = &tabula.options.sweeper;
    let due = tokio::time::timeout(
        options.call_timeout,
        // A deadline is due for its timeout only once the delay after it has passed.
        tabula
            .deadlines
            .expired_deadlines(now_ms.saturating_sub(TIMEOUT_DELAY_MS), options.batch),
    )
    .await
    .map_err(|_| timed_out("reading the deadline index"))??;
    let mut report = SweepReport {
        due: due.len(),
        ..SweepReport::default()
    };
    let outcomes: Vec<ServiceResult<Outcome>> = futures::stream::iter(due)
        .map(|indexed| async move {
            tokio::time::timeout(options.call_timeout, sweep_game(tabula, &indexed, now_ms))
                .await
                .map_err(|_| timed_out("re-checking a deadline"))?
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect()
        .await;
    for outcome in outcomes {
        match outcome {
            Ok(Outcome::TimedOut) => report.timeouts += 1,
            Ok(Outcome::LostRace) => report.lost_races += 1,
            Ok(Outcome::Corrected) => report.corrected += 1,
            Err(error) => {
                report.failed += 1;
                tracing::warn!(%error, "turn-clock sweep of a game failed; retried next pass");
            }
        }
    }
    Ok(report)
}

/// Re-checks one due index entry against its game and appends the timeout if it is due.
async fn sweep_game(
    tabula: &Tabula,
    indexed: &IndexedDeadline,
    now_ms: u64,
) -> ServiceResult<Outcome> {
    let game_id = indexed.game_id.as_str();
    let store = &tabula.deadlines;
    let game = match tabula.cache.current(game_id).await {
        Ok(game) => game,
        Err(ServiceError::NotFound(_)) => {
            // Indexed before it was created, and never created (its creator failed).
            store.set_deadline(game_id, 0, None).await?;
            return Ok(Outcome::Corrected);
        }
        Err(error) => return Err(error),
    };
    let version = game.version;
    let (seat, deadline_ms) = match game.state.deadline() {
        Some((seat, deadline_ms)) if deadline_ms + TIMEOUT_DELAY_MS <= now_ms => {
            (seat, deadline_ms)
        }
        other => {
            // Not due yet (the index held an earlier deadline), or no deadline any more.
            store
                .set_deadline(game_id, version, other.map(|(_, deadline)| deadline))
                .await?;
            return Ok(Outcome::Corrected);
        }
    };
    let timeout = pb::TableAction {
        kind: Some(pb::table_action::Kind::Timeout(pb::table_action::Timeout {
            seat,
        })),
    };
    // The same id on every replica for this decision: one timeout between them.
    let request_id = format!("timeout@{version}");
    match tabula
        .append_table_entry(game_id, Some(version), timeout, request_id)
        .await?
    {
        TableEntryResult::Appended {
            version: appended,
            status: Some(_),
        } => {
            crate::metrics::clock_timeout(game.meta.kind);
            tracing::info!(
                %game_id,
                seat,
                deadline_ms,
                late_ms = now_ms.saturating_sub(deadline_ms),
                version = appended,
                "turn clock ran out: timeout appended"
            );
            Ok(Outcome::TimedOut)
        }
        // Appended earlier under the same id (another replica), or a move got in first.
        TableEntryResult::Appended { status: None, .. } | TableEntryResult::LostRace { .. } => {
            crate::metrics::clock_lost_race();
            tracing::debug!(%game_id, version, "turn-clock timeout lost the race");
            Ok(Outcome::LostRace)
        }
    }
}

fn timed_out(what: &str) -> ServiceError {
    ServiceError::Store(crate::store::StoreError::Unavailable(format!(
        "{what} took longer than the sweeper's call timeout"
    )))
}

/// Runs sweep passes on `tabula` until told to stop: one of the replica's workers (see
/// `workers.rs`), started on every replica unless [`SweeperOptions::enabled`](super::SweeperOptions::enabled) is off.
pub(super) async fn run(tabula: Arc<Tabula>, mut stop: StopSignal) {
    let options = tabula.options.sweeper.clone();
    // While the store is down every pass fails: log the failing streak's changes, not each pass
    // (see `crate::outage`).
    let mut outage = Outage::default();
    while stop.pause(jittered(options.interval, options.jitter)).await {
        let result = sweep_once(&tabula, unix_millis()).await;
        let now = Instant::now();
        match result {
            Ok(report) => {
                if report.due > 0 {
                    tracing::debug!(?report, "turn-clock sweep pass");
                }
                if let Some(OutageReport::BackUp { down_for, failures }) = outage.success(now) {
                    tracing::info!(
                        failures,
                        "turn-clock sweep passes work again after {down_for:.1?}; {failures} \
                         failed meanwhile"
                    );
                }
            }
            Err(error) => match outage.failure(now) {
                Some(OutageReport::Down) => tracing::warn!(
                    %error,
                    "turn-clock sweep pass failed; retried every pass, logged again every {}s \
                     while passes fail",
                    OUTAGE_REPORT_EVERY.as_secs()
                ),
                Some(OutageReport::StillDown { down_for, failures }) => tracing::warn!(
                    %error,
                    failures,
                    "turn-clock sweep passes still failing after {down_for:.1?}: {failures} \
                     failed so far"
                ),
                _ => tracing::debug!(%error, "turn-clock sweep pass failed"),
            },
        }
    }
}

/// `interval` ± up to `jitter` of it, at random.
fn jittered(interval: Duration, jitter: f64) -> Duration {
    let mut bytes = [0u8; 4];
    // Without OS randomness the pause is simply not jittered.
    let unit = match getrandom::fill(&mut bytes) {
        Ok(()) => f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX),
        Err(_) => 0.5,
    };
    let factor = 1.0 + jitter.clamp(0.0, 1.0) * (2.0 * unit - 1.0);
    interval.mul_f64(factor.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_its_fraction() {
        let interval = Duration::from_millis(1000);
        for _ in 0..1000 {
            let pause = jittered(interval, 0.2);
            assert!(pause >= Duration::from_millis(800) && pause <= Duration::from_millis(1200));
        }
        assert_eq!(jittered(interval, 0.0), interval);
    }
}
