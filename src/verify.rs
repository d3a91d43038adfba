//! Re-executing an exported log: anyone holding a finished game's log can check that the seed
//! matches the commitment published at creation, that every action was legal, and what the
//! result and final state are. Used by the `VerifyLog` RPC and `tabula verify FILE`.

use sha2::{Digest, Sha256};

use crate::games::Seed;
use crate::hosting::{self, GameState, SYSTEM_SEAT};
use crate::proto::v1 as pb;

/// Re-executes `log` with this build's engines.
pub fn verify(log: &pb::GameLog) -> pb::VerifyLogResponse {
    let mut report = pb::VerifyLogResponse::default();
    match replay(log, &mut report, None) {
        Ok(Replayed { end: state, .. }) => {
            report.valid = true;
            report.state_hash = state.state_hash().to_vec();
            report.status = Some(state.status());
        }
        Err(error) => report.error = error,
    }
    report
}

/// Why [`state_at`] cannot replay a log.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The log carries no seed: its game has not ended (or the seed was stripped).
    #[error(
        "the log carries no seed: only a finished game's exported log can be replayed (a running \
         game's seed stays secret until it ends; open such a game by id on its server instead)"
    )]
    NoSeed,
    /// The version is beyond the log's last entry.
    #[error("version {version} is beyond the log's last version {last}: choose 0 to {last}")]
    OutOfRange {
        /// The version asked for.
        version: u64,
        /// The log's last version.
        last: u64,
    },
    /// The log does not verify (see [`verify`]).
    #[error("the log does not verify, so it cannot be replayed: {0}")]
    Invalid(String),
}

/// The game's state after `version` entries of `log`, once the whole log has verified exactly as
/// [`verify`] checks it: a replay viewer shows no state of a log that is not a real game.
pub fn state_at(log: &pb::GameLog, version: u64) -> Result<Box<dyn GameState>, ReplayError> {
    if log.seed.is_empty() {
        return Err(ReplayError::NoSeed);
    }
    let last = log.entries.len() as u64;
    if version > last {
        return Err(ReplayError::OutOfRange { version, last });
    }
    // One pass over the whole log, keeping a copy of the state as it stood at `version`.
    let Replayed { end, kept } = replay(log, &mut pb::VerifyLogResponse::default(), Some(version))
        .map_err(ReplayError::Invalid)?;
    Ok(kept.unwrap_or(end))
}

/// What a replay ends with: the final state and, if asked for, the state at an earlier version.
struct Replayed {
    end: Box<dyn GameState>,
    kept: Option<Box<dyn GameState>>,
}

/// Re-executes every entry of `log`; returns the final state and, when `keep` names a version
/// before the last, a copy of the state at that version.
fn replay(
    log: &pb::GameLog,
    report: &mut pb::VerifyLogResponse,
    keep: Option<u64>,
) -> Result<Replayed, String> {
    let config = log.config.as_ref().ok_or("the log has no config")?;
    let kind = hosting::kind_of(config).ok_or("the log's config names no game")?;
    if log.game != 0 && log.game != kind as i32 {
        return Err(format!(
            "the log says game {} but its config is for {kind:?}",
            log.game
        ));
    }
    let ours = hosting::rules_version(kind).ok_or("unknown game")?;
    if log.rules_version != ours {
        return Err(format!(
            "the log was played by rules version {:?}; this verifier runs {ours:?}",
            log.rules_version
        ));
    }
    let seed: [u8; 32] = log.seed.as_slice().try_into().map_err(|_| {
        "the log has no 32-byte seed: only a finished game's exported log can be re-executed"
            .to_string()
    })?;
    let commitment: [u8; 32] = Sha256::digest(seed).into();
    if commitment.as_slice() != log.seed_commitment.as_slice() {
        return Err("the seed does not match the seed commitment published at creation".into());
    }
    let mut state = hosting::setup(config, &Seed(seed)).map_err(|e| e.to_string())?;
    // Logs exported before opening events existed have none; recorded ones must be exact.
    if !log.opening_events.is_empty() && log.opening_events != state.opening_events() {
        report.invalid_version = Some(0);
        return Err("the recorded opening events differ from what setup produces".into());
    }
    let mut kept = None;
    for (index, entry) in log.entries.iter().enumerate() {
        let expected_version = index as u64 + 1;
        if keep == Some(index as u64) {
            kept = Some(state.clone());
        }
        let fail = |report: &mut pb::VerifyLogResponse, why: String| {
            report.invalid_version = Some(expected_version);
            Err(format!("entry {expected_version}: {why}"))
        };
        if entry.version != expected_version {
            return fail(
                report,
                format!("numbered {} instead of {expected_version}", entry.version),
            );
        }
        let Some(action) = &entry.action else {
            return fail(report, "no action".into());
        };
        if entry.system != (entry.seat == SYSTEM_SEAT) {
            return fail(
                report,
                format!(
                    "marked system = {} but its seat is {} (the server's entries, and only they, \
                     carry seat {SYSTEM_SEAT})",
                    entry.system, entry.seat
                ),
            );
        }
        let events = match state.apply_at(entry.seat, action, entry.server_time_ms) {
            Ok(events) => events,
            Err(error) => {
                let author = if entry.system {
                    "the server".to_string()
                } else {
                    format!("seat {}", entry.seat)
                };
                return fail(report, format!("{author} may not play it: {error}"));
            }
        };
        if !entry.events.is_empty() && entry.events != events {
            return fail(
                report,
                "its recorded events differ from what the action produces".into(),
            );
        }
        report.verified_version = expected_version;
    }
    Ok(Replayed { end: state, kept })
}
