//! Table entries the server appends itself: a timeout of the seat to act (for the clock sweeper),
//! and the operator's abort (EndGame) and hand-over (HandSeatToBot). Not an RPC: the one internal
//! entry point those build on, appending through the same conditional append as a move.
//!
//! A timeout is decided against a version: "the seat to act at version v ran out of time". It is
//! appended only if the log is still at v, so a move that arrived first wins and the timeout is
//! dropped ([`TableEntryResult::LostRace`]). An abort can instead follow the log: it is validated
//! again after each move that got in first, until it is appended or the game has ended.

use super::cache::Freshness;
use super::commit::{Committed, Proposal, Proposer, check_request_id};
use super::error::{ServiceError, ServiceResult};
use super::tabula::{Tabula, check_game_id};
use crate::games::ActionError;
use crate::hosting::SYSTEM_SEAT;
use crate::proto::v1 as pb;
use crate::store::unix_millis;

/// Appends lost to moves before giving up with ABORTED (only when following the log).
const MAX_ATTEMPTS: usize = 8;

/// What became of a table entry the server appended.
#[derive(Clone, Debug, PartialEq)]
pub enum TableEntryResult {
    /// The entry is in the log at `version` (appended now, or earlier under the same request id).
    Appended {
        /// The entry's version.
        version: u64,
        /// The game right after the entry, when it was appended now (`None` for an earlier
        /// append under the same request id).
        status: Option<Box<pb::GameStatus>>,
    },
    /// The log had moved past the version the entry was meant for: a move arrived first, and the
    /// entry was not appended.
    LostRace {
        /// The log's version.
        current: u64,
    },
}

/// What an operator's entry is, in the words its errors use: the entry ("an abort") and what the
/// game's end leaves nothing of ("nothing to end").
pub(super) struct OperatorEntry {
    /// The entry with its article, e.g. "an abort".
    pub what: &'static str,
    /// Why an ended game refuses it, e.g. "there is nothing to end".
    pub when_over: &'static str,
}

impl Tabula {
    /// The tenant owning game `game_id`, once `caller` may operate it: another tenant's game
    /// answers as a missing one (the same NOT_FOUND), before anything about it is told. Every
    /// operator call on a game starts here.
    pub(super) async fn operated_tenant(
        &self,
        caller: &super::tenants::Caller,
        game_id: &str,
    ) -> ServiceResult<Option<String>> {
        check_game_id(game_id)?;
        let owner = self.cache.current(game_id).await?.meta.tenant.clone();
        if caller.may_operate(owner.as_deref()) {
            Ok(owner)
        } else {
            Err(ServiceError::NotFound(game_id.to_owned()))
        }
    }

    /// Appends an operator's table entry (`EndGame`'s abort, `HandSeatToBot`'s hand-over) at
    /// whatever version the log has, and answers the entry's version and the game's status after
    /// it: now, or, for a retry of an entry appended earlier under the same request id, the game
    /// as it is now. A game that has ended gets FAILED_PRECONDITION in `entry`'s words.
    pub(super) async fn append_operator_entry(
        &self,
        game_id: &str,
        action: pb::TableAction,
        request_id: String,
        entry: OperatorEntry,
    ) -> ServiceResult<(u64, pb::GameStatus)> {
        match self
            .append_table_entry(game_id, None, action, request_id)
            .await
        {
            Ok(TableEntryResult::Appended {
                version,
                status: Some(status),
            }) => Ok((version, *status)),
            Ok(TableEntryResult::Appended {
                version,
                status: None,
            }) => {
                let game = self.cache.current(game_id).await?;
                Ok((version, game.state.status()))
            }
            // Following the log, the append never names a version it could lose.
            Ok(TableEntryResult::LostRace { current }) => Err(ServiceError::Internal(format!(
                "game {game_id}: {} that follows the log lost a race at version {current}",
                entry.what
            ))),
            Err(ServiceError::Action(ActionError::GameOver)) => {
                Err(ServiceError::FailedPrecondition(format!(
                    "game {game_id} has already ended: {}",
                    entry.when_over
                )))
            }
            Err(error) => Err(error),
        }
    }

    /// Appends `entry`, a table entry by the server ([`SYSTEM_SEAT`]), to the game `game_id`.
    ///
    /// With `at_version`, only if the log is at exactly that version: if it has moved on, nothing
    /// is appended and the answer is [`TableEntryResult::LostRace`] (a timeout names the version
    /// its clock ran at, so a move that arrived first wins). Without it, at whatever version the
    /// log has when the append lands, validated again after every move that got in first (an
    /// abort). A non-empty `request_id` makes retries idempotent, as for moves.
    ///
    /// An entry the rules refuse is an error: FAILED_PRECONDITION when the game has ended or the
    /// timeout names a seat that is not the seat to act; INVALID_ARGUMENT when malformed (an abort
    /// reason over [`crate::hosting::MAX_ABORT_REASON_LEN`] bytes).
    pub async fn append_table_entry(
        &self,
        game_id: &str,
        at_version: Option<u64>,
        entry: pb::TableAction,
        request_id: String,
    ) -> ServiceResult<TableEntryResult> {
        check_game_id(game_id)?;
        check_request_id(&request_id)?;
        let action = pb::Action {
            game: Some(pb::action::Game::Table(entry)),
        };
        let proposal = Proposal {
            proposer: Proposer::Server,
            seat: SYSTEM_SEAT,
            action: &action,
            request_id: &request_id,
            at_version,
        };
        let cache = &self.cache;
        let (mut game, mut freshness) = cache.get(game_id).await?;
        for _ in 0..MAX_ATTEMPTS {
            if let Some(version) = at_version {
                // The cache is never ahead of the log: past `version` means the log is too,
                // perhaps by this very entry (a retry).
                if game.version > version {
                    if let Some(appended) = self.find_earlier(game_id, &proposal).await? {
                        return Ok(appended);
                    }
                    return Ok(TableEntryResult::LostRace {
                        current: game.version,
                    });
                }
                if game.version < version {
                    if freshness == Freshness::MaybeStale {
                        cache.catch_up(&mut game).await?;
                        freshness = Freshness::Current;
                        continue;
                    }
                    return Err(ServiceError::OutOfRange(format!(
                        "game {game_id} is at version {}; it has no version {version} yet",
                        game.version
                    )));
                }
            }
            match self.commit(&mut game, &proposal, unix_millis()).await? {
                Committed::Appended => {
                    return Ok(TableEntryResult::Appended {
                        version: game.version,
                        status: Some(Box::new(game.state.status())),
                    });
                }
                // Refused only against a current state, as a move is.
                Committed::Refused(_) if freshness == Freshness::MaybeStale => {
                    cache.catch_up(&mut game).await?;
                    freshness = Freshness::Current;
                }
                Committed::Refused(error) => {
                    if let Some(appended) = self.find_earlier(game_id, &proposal).await? {
                        return Ok(appended);
                    }
                    return Err(error);
                }
                Committed::Overtaken => {
                    freshness = Freshness::Current;
                    if at_version.is_some() {
                        if let Some(appended) = self.find_earlier(game_id, &proposal).await? {
                            return Ok(appended);
                        }
                        return Ok(TableEntryResult::LostRace {
                            current: game.version,
                        });
                    }
                }
                Committed::Duplicate { version } => {
                    self.logged_request(game_id, &proposal, version).await?;
                    return Ok(TableEntryResult::Appended {
                        version,
                        status: None,
                    });
                }
            }
        }
        Err(ServiceError::Contention)
    }

    /// The earlier append of the proposal's request id, if there was one.
    async fn find_earlier(
        &self,
        game_id: &str,
        proposal: &Proposal<'_>,
    ) -> ServiceResult<Option<TableEntryResult>> {
        if proposal.request_id.is_empty() {
            return Ok(None);
        }
        let Some(version) = self
            .cache
            .find_request(
                game_id,
                SYSTEM_SEAT,
                proposal.request_id,
                proposal.at_version,
            )
            .await?
        else {
            return Ok(None);
        };
        self.logged_request(game_id, proposal, version).await?;
        Ok(Some(TableEntryResult::Appended {
            version,
            status: None,
        }))
    }
}
