//! Re-executing an exported log: anyone holding a finished game's log can check that the seed
//! matches the commitment published at creation, that every action was legal, and what the
//! result and final state are. Used by the `VerifyLog` RPC and `tabula verify FILE`.

//!
//! A submitted log is held to the live API's limits on every field before anything is replayed
//! ([`check_fields`]): a game id, request id, abort reason or player entry the live API would
//! have refused makes the log unacceptable (the RPCs answer INVALID_ARGUMENT naming the field and
//! the limit), rather than "valid" with a megabyte of text nobody could have sent in play.

use super::error::quote;
use super::players;
use super::tabula::{MAX_GAME_ID_LEN, MAX_REQUEST_ID_LEN, is_game_id};
use crate::games::Seed;
use crate::hosting::{self, GameState, HostError, MAX_ABORT_REASON_LEN, SYSTEM_SEAT};
use crate::proto::v1 as pb;

/// The longest rules version a log may name (this build's are a few bytes; the live API never
/// takes one from a client at all).
pub const MAX_RULES_VERSION_LEN: usize = 64;

/// The size of a seed and of its commitment (SHA-256), in bytes.
const SEED_LEN: usize = 32;

pub use super::commitment::seed_commitment;

/// A field of a submitted log that breaks a limit of the live API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct FieldError {
    /// The field, as a path from the log (`entries[3].request_id`).
    pub field: String,
    /// Which limit it breaks. Quotes at most a short prefix of what was sent.
    pub why: String,
}

impl FieldError {
    fn new(field: impl Into<String>, why: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            why: why.into(),
        }
    }
}

impl From<players::PlayerRefusal> for FieldError {
    fn from(refusal: players::PlayerRefusal) -> FieldError {
        FieldError::new(
            format!("players[{}] (seat {})", refusal.index, refusal.seat),
            refusal.why,
        )
    }
}

/// Re-executes `log` with this build's engines. A field over a limit (see [`check_fields`]) is
/// reported like any other reason the log is not valid (`tabula verify FILE`).
pub fn verify(log: &pb::GameLog) -> pb::VerifyLogResponse {
    verify_checked(log).unwrap_or_else(|error| pb::VerifyLogResponse {
        error: match error {
            Unverifiable::Field(field) => format!("the log's {field}"),
            Unverifiable::RulesVersion(why) => why,
        },
        ..Default::default()
    })
}

/// `report` (the rules' verdict on `log`) with the log's provenance checked against `keys` (see
/// [`super::provenance`]): a commitment or chain that does not match the log makes it invalid.
/// Both findings are told, the earlier first; the entry at fault is the rules' when they found
/// one no later than the chain's (their reason is the more specific), else the chain's.
pub fn with_provenance(
    mut report: pb::VerifyLogResponse,
    log: &pb::GameLog,
    keys: &[crate::signing::PublicKey],
) -> pb::VerifyLogResponse {
    match super::provenance::check_provenance(log, keys) {
        Ok(provenance) => report.provenance = Some(provenance),
        Err(error) => {
            report.provenance = Some(error.provenance);
            let why = match error.version {
                Some(version) if version > 0 => format!("entry {version}: {}", error.why),
                _ => format!("the log's provenance: {}", error.why),
            };
            let chain_first = match (error.version, report.invalid_version) {
                (Some(at), Some(rules_at)) => at < rules_at,
                _ => false,
            };
            if report.valid {
                report.invalid_version = error.version;
                report.error = why;
            } else if chain_first {
                report.invalid_version = error.version;
                report.error = format!("{why}; the rules: {}", report.error);
            } else {
                if report.invalid_version.is_none() {
                    report.invalid_version = error.version;
                }
                report.error = format!("{}; {why}", report.error);
            }
            report.valid = false;
        }
    }
    report
}

/// Why a log was not re-executed at all (rather than found invalid).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unverifiable {
    /// A field breaks a limit of the live API (see [`check_fields`]).
    #[error("{0}")]
    Field(FieldError),
    /// The log's rules version is not one this build plays: a newer release's (or one an older
    /// release dropped). Not a verdict on the log: a build that plays the version can judge it.
    #[error("{0}")]
    RulesVersion(String),
}

/// Re-executes `log` with this build's engines, under the log's rules version, unless a field
/// breaks a limit of the live API or this build does not play that version: then why, for the
/// VerifyLog RPC to refuse the request with.
pub fn verify_checked(log: &pb::GameLog) -> Result<pb::VerifyLogResponse, Unverifiable> {
    check_fields(log).map_err(Unverifiable::Field)?;
    let mut report = pb::VerifyLogResponse::default();
    match replay(log, &mut report, None) {
        Ok(Replayed { end: state, .. }) => {
            report.valid = true;
            report.state_hash = state.state_hash().to_vec();
            report.status = Some(state.status());
        }
        Err(Refusal::Field(error)) => return Err(Unverifiable::Field(error)),
        Err(Refusal::RulesVersion(why)) => return Err(Unverifiable::RulesVersion(why)),
        Err(Refusal::Invalid(error)) => report.error = error,
    }
    Ok(report)
}

/// Checks every field of `log` against the limits the live API puts on it (the same constants,
/// so the two cannot drift apart): the game id's format and length, each entry's request id and
/// abort reason, the seed's and commitment's sizes, the rules version's length, and the player
/// metadata (as CreateGame checks it; the seats against the game's seat count are checked once
/// the config is set up, see `replay`). An empty game id is accepted: a submitted log's id
/// addresses nothing, and logs assembled by hand may lack one.
pub fn check_fields(log: &pb::GameLog) -> Result<(), FieldError> {
    if !log.game_id.is_empty() && !is_game_id(&log.game_id) {
        return Err(FieldError::new(
            "game_id",
            format!(
                "{} is not a game id (1–{MAX_GAME_ID_LEN} letters, digits, '-' or '_')",
                quote(&log.game_id)
            ),
        ));
    }
    if log.rules_version.len() > MAX_RULES_VERSION_LEN {
        return Err(FieldError::new(
            "rules_version",
            format!(
                "{} bytes long; the limit is {MAX_RULES_VERSION_LEN} bytes",
                log.rules_version.len()
            ),
        ));
    }
    for (field, bytes) in [
        ("seed", &log.seed),
        ("seed_commitment", &log.seed_commitment),
    ] {
        if !bytes.is_empty() && bytes.len() != SEED_LEN {
            return Err(FieldError::new(
                field,
                format!(
                    "{} bytes long; it is {SEED_LEN} bytes (or absent)",
                    bytes.len()
                ),
            ));
        }
    }
    for (index, entry) in log.entries.iter().enumerate() {
        if entry.request_id.len() > MAX_REQUEST_ID_LEN {
            return Err(FieldError::new(
                format!("entries[{index}].request_id"),
                format!(
                    "{} bytes long; the limit is {MAX_REQUEST_ID_LEN} bytes",
                    entry.request_id.len()
                ),
            ));
        }
        if let Some(pb::Action {
            game:
                Some(pb::action::Game::Table(pb::TableAction {
                    kind: Some(pb::table_action::Kind::Abort(abort)),
                })),
        }) = &entry.action
            && abort.reason.len() > MAX_ABORT_REASON_LEN
        {
            return Err(FieldError::new(
                format!("entries[{index}].action.table.abort.reason"),
                format!(
                    "{} bytes long; the limit is {MAX_ABORT_REASON_LEN} bytes",
                    abort.reason.len()
                ),
            ));
        }
    }
    players::check(&log.players, None).map_err(FieldError::from)
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
    /// A field breaks a limit of the live API (see [`check_fields`]).
    #[error("the log's {0}")]
    Field(FieldError),
    /// The log's rules version is not one this build plays.
    #[error("{0}")]
    RulesVersion(String),
}

/// The game's state after `version` entries of `log`, once the whole log has verified exactly as
/// [`verify`] checks it: a replay viewer shows no state of a log that is not a real game.
pub fn state_at(log: &pb::GameLog, version: u64) -> Result<Box<dyn GameState>, ReplayError> {
    check_fields(log).map_err(ReplayError::Field)?;
    if log.seed.is_empty() {
        return Err(ReplayError::NoSeed);
    }
    let last = log.entries.len() as u64;
    if version > last {
        return Err(ReplayError::OutOfRange { version, last });
    }
    // One pass over the whole log, keeping a copy of the state as it stood at `version`.
    let Replayed { end, kept } = replay(log, &mut pb::VerifyLogResponse::default(), Some(version))
        .map_err(|refusal| match refusal {
            Refusal::Field(error) => ReplayError::Field(error),
            Refusal::RulesVersion(why) => ReplayError::RulesVersion(why),
            Refusal::Invalid(why) => ReplayError::Invalid(why),
        })?;
    Ok(kept.unwrap_or(end))
}

/// What a replay ends with: the final state and, if asked for, the state at an earlier version.
struct Replayed {
    end: Box<dyn GameState>,
    kept: Option<Box<dyn GameState>>,
}

/// Why [`replay`] stopped.
enum Refusal {
    /// A field over a limit of the live API, found once the config was set up.
    Field(FieldError),
    /// The log does not verify: why.
    Invalid(String),
    /// This build does not play the log's rules version: why.
    RulesVersion(String),
}

impl From<String> for Refusal {
    fn from(why: String) -> Refusal {
        Refusal::Invalid(why)
    }
}

impl From<&str> for Refusal {
    fn from(why: &str) -> Refusal {
        Refusal::Invalid(why.to_owned())
    }
}

/// Re-executes every entry of `log` (whose fields passed [`check_fields`]); returns the final
/// state and, when `keep` names a version before the last, a copy of the state at that version.
fn replay(
    log: &pb::GameLog,
    report: &mut pb::VerifyLogResponse,
    keep: Option<u64>,
) -> Result<Replayed, Refusal> {
    let config = log.config.as_ref().ok_or("the log has no config")?;
    let kind = hosting::kind_of(config).ok_or("the log's config names no game")?;
    if log.game != 0 && log.game != kind as i32 {
        return Err(format!(
            "the log says game {} but its config is for {kind:?}",
            log.game
        )
        .into());
    }
    hosting::check_rules_version(kind, &log.rules_version).map_err(|error| match error {
        HostError::RulesVersion { .. } => Refusal::RulesVersion(format!("the log: {error}")),
        other => Refusal::Invalid(other.to_string()),
    })?;
    let seed: [u8; 32] = log.seed.as_slice().try_into().map_err(|_| {
        "the log has no 32-byte seed: only a finished game's exported log can be re-executed"
            .to_string()
    })?;
    if seed_commitment(&Seed(seed)).as_slice() != log.seed_commitment.as_slice() {
        return Err("the seed does not match the seed commitment published at creation".into());
    }
    let mut state =
        hosting::setup_under(config, &Seed(seed), &log.rules_version).map_err(|e| e.to_string())?;
    // Player metadata names seats: only now is the game's seat count known.
    players::check(&log.players, Some(state.seat_count()))
        .map_err(|refusal| Refusal::Field(refusal.into()))?;
    // Logs exported before opening events existed have none; recorded ones must be exact.
    if !log.opening_events.is_empty() && !same_events(&log.opening_events, &state.opening_events())
    {
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
            Err(Refusal::Invalid(format!("entry {expected_version}: {why}")))
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
        if !entry.events.is_empty() && !same_events(&entry.events, &events) {
            return fail(
                report,
                "its recorded events differ from what the action produces".into(),
            );
        }
        report.verified_version = expected_version;
    }
    Ok(Replayed { end: state, kept })
}

/// Whether recorded events are those the log's actions produce. Their sentences (`Event.text`,
/// filled in for people when an export asked for them) are presentation, not record: ignored.
fn same_events(recorded: &[pb::Event], produced: &[pb::Event]) -> bool {
    recorded.len() == produced.len()
        && recorded
            .iter()
            .zip(produced)
            .all(|(recorded, produced)| recorded.game == produced.game)
}
