//! Table entries the server appends itself: a timeout of the seat to act (for the clock sweeper),
//! and the operator's abort (EndGame) and hand-over (HandSeatToBot). Not an RPC: the one internal
//! entry point those build on, appending through the same conditional append as a move.
//!
//! A timeout is decided against a version: "the seat to act at version v ran out of time". It is
//! appended only if the log is still at v, so a move that arrived first wins and the timeout is
//! dropped ([`TableEntryResult::LostRace`]). An abort can instead follow the log: it is validated
//! again after each move that got in first, until it is appended or the game has ended.

use prost::Message;

use super::cache::{Applied, Freshness, Game, deadline_change};
use super::{MAX_REQUEST_ID_LEN, ServiceError, ServiceResult, Tabula, check_game_id};
use crate::games::ActionError;
use crate::hosting::SYSTEM_SEAT;
use crate::proto::v1 as pb;
use crate::store::{Append, NewEntry, unix_millis};

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
        status: Option<pb::GameStatus>,
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
            }) => Ok((version, status)),
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
        if request_id.len() > MAX_REQUEST_ID_LEN {
            return Err(ServiceError::InvalidArgument(format!(
                "request_id is {} bytes long; the limit is {MAX_REQUEST_ID_LEN} bytes",
                request_id.len()
            )));
        }
        let action = pb::Action {
            game: Some(pb::action::Game::Table(entry)),
        };
        let mut entry = NewEntry {
            seat: SYSTEM_SEAT,
            action: action.encode_to_vec(),
            request_id,
            finishes: false,
            server_time_ms: 0,
            deadline: None,
        };
        let cache = &self.cache;
        let (mut game, mut freshness) = cache.get(game_id).await?;
        for _ in 0..MAX_ATTEMPTS {
            if let Some(version) = at_version {
                // The cache is never ahead of the log: past `version` means the log is too,
                // perhaps by this very entry (a retry).
                if game.version > version {
                    if let Some(appended) = self.find_earlier(game_id, &entry).await? {
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
            // The speculative apply, as for a move: refused only against a current state.
            let now = unix_millis();
            let mut next = game.state.clone_box();
            let events = match next.apply_at(SYSTEM_SEAT, &action, now) {
                Ok(events) => events,
                Err(error) => {
                    if freshness == Freshness::MaybeStale {
                        cache.catch_up(&mut game).await?;
                        freshness = Freshness::Current;
                        continue;
                    }
                    if let Some(appended) = self.find_earlier(game_id, &entry).await? {
                        return Ok(appended);
                    }
                    return Err(error.into());
                }
            };
            // The store records the end of a game with the entry that ends it (the game index).
            entry.finishes = next.is_finished();
            entry.server_time_ms = now;
            entry.deadline = deadline_change(&*game.state, &*next);
            match cache.append(&game, &entry).await? {
                Append::Appended { version } => {
                    let next = Game {
                        meta: game.meta.clone(),
                        state: std::sync::Arc::from(next),
                        version,
                        // Kept with the state, so this replica's Observe streams reuse it.
                        last: Some(std::sync::Arc::new(Applied {
                            seat: SYSTEM_SEAT,
                            action: action.clone(),
                            events,
                            server_time_ms: now,
                        })),
                    };
                    if next.is_finished() {
                        crate::metrics::game_finished(next.meta.kind);
                    }
                    let status = next.state.status();
                    cache.maybe_snapshot(&next);
                    self.bot_turn_appended(&next);
                    cache.remember(next);
                    return Ok(TableEntryResult::Appended {
                        version,
                        status: Some(status),
                    });
                }
                Append::Conflict { current, missing } => {
                    game.advance(&missing)?;
                    cache.remember(game.clone());
                    freshness = Freshness::Current;
                    if at_version.is_some() {
                        if let Some(appended) = self.find_earlier(game_id, &entry).await? {
                            return Ok(appended);
                        }
                        return Ok(TableEntryResult::LostRace { current });
                    }
                }
                Append::Duplicate { version } => {
                    return self.earlier_append(game_id, &entry, version).await;
                }
            }
        }
        Err(ServiceError::Contention)
    }

    /// The earlier append of `entry`'s request id, if there was one.
    async fn find_earlier(
        &self,
        game_id: &str,
        entry: &NewEntry,
    ) -> ServiceResult<Option<TableEntryResult>> {
        if entry.request_id.is_empty() {
            return Ok(None);
        }
        match self
            .cache
            .find_request(game_id, SYSTEM_SEAT, &entry.request_id)
            .await?
        {
            Some(version) => Ok(Some(self.earlier_append(game_id, entry, version).await?)),
            None => Ok(None),
        }
    }

    /// The answer for a request id already appended at `version`: the same entry, or a caller's
    /// mistake (the id was used for another entry).
    async fn earlier_append(
        &self,
        game_id: &str,
        entry: &NewEntry,
        version: u64,
    ) -> ServiceResult<TableEntryResult> {
        let logged = self
            .cache
            .entries_after(game_id, version.saturating_sub(1))
            .await?
            .into_iter()
            .next()
            .filter(|logged| logged.version == version)
            .ok_or_else(|| {
                ServiceError::Internal(format!("game {game_id}: version {version} missing"))
            })?;
        if logged.seat != entry.seat || logged.action != entry.action {
            // Bounded echo: request ids are at most MAX_REQUEST_ID_LEN bytes.
            return Err(ServiceError::InvalidArgument(format!(
                "request_id {:?} was already used by the server for a different entry (version \
                 {version})",
                entry.request_id
            )));
        }
        Ok(TableEntryResult::Appended {
            version,
            status: None,
        })
    }
}
