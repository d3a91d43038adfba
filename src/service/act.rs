//! `Act`: validate the caller's move against the true log and append it atomically.
//!
//! The happy path is one store round trip: the move is validated against this replica's cached
//! state at version v and appended "if the log is at v". If another replica got there first, the
//! store answers with the entries we missed (still the same round trip), we catch up and validate
//! again. A move is only refused after it was checked against a state known to be current.

use std::sync::Arc;

use prost::Message;
use tonic::metadata::MetadataMap;
use tracing::Span;

use super::cache::{Applied, Freshness, Game, deadline_change};
use super::disclosure::Disclosure;
use super::{MAX_REQUEST_ID_LEN, ServiceError, ServiceResult, Tabula, auth, check_game_id};
use crate::games::{Seat, Viewer};
use crate::proto::v1 as pb;
use crate::store::{Append, NewEntry, unix_millis};

/// Appends lost to other writers before giving up with ABORTED (the client may retry).
const MAX_ATTEMPTS: usize = 8;

pub(super) async fn act(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::ActRequest,
) -> ServiceResult<pb::ActResponse> {
    check_game_id(&request.game_id)?;
    let action = request
        .action
        .ok_or_else(|| ServiceError::InvalidArgument("ActRequest.action is required".into()))?;
    if let Some(server_only) = server_only_table_action(&action) {
        // The caller's token is valid or not, the game running or not: a seat may never send
        // this kind, so it is the caller's permission that is missing, not the game's state.
        return Err(ServiceError::PermissionDenied(format!(
            "{server_only} entries are appended by the server, not sent by a seat; a seat may \
             resign (Action.table.resign)"
        )));
    }
    if request.request_id.len() > MAX_REQUEST_ID_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "request_id is {} bytes long; the limit is {MAX_REQUEST_ID_LEN} bytes",
            request.request_id.len()
        )));
    }
    if request.request_id.starts_with(super::BOT_REQUEST_PREFIX) {
        return Err(ServiceError::InvalidArgument(format!(
            "request ids starting with {:?} are reserved for the server's bots; choose another",
            super::BOT_REQUEST_PREFIX
        )));
    }
    let result = attempt(
        tabula,
        metadata,
        &request.game_id,
        action,
        request.expected_version,
        request.request_id,
    )
    .await;
    if let Ok(response) = &result {
        Span::current().record("version", response.version);
    }
    result
}

/// The name of `action`'s kind when it is a table entry only the server appends (a timeout, an
/// abort, a hand-over to a bot), for the one refusal all three get.
fn server_only_table_action(action: &pb::Action) -> Option<&'static str> {
    let Some(pb::action::Game::Table(table)) = &action.game else {
        return None;
    };
    match table.kind.as_ref()? {
        pb::table_action::Kind::Timeout(_) => Some("timeout"),
        pb::table_action::Kind::Abort(_) => Some("abort"),
        pb::table_action::Kind::HandToBot(_) => Some("hand_to_bot"),
        pb::table_action::Kind::Resign(_) => None,
    }
}

async fn attempt(
    tabula: &Tabula,
    metadata: &MetadataMap,
    game_id: &str,
    action: pb::Action,
    expected_version: Option<u64>,
    request_id: String,
) -> ServiceResult<pb::ActResponse> {
    let cache = &tabula.cache;
    let (mut game, mut freshness) = cache.get(game_id).await?;
    let seat = auth::required_seat(&game.meta, metadata)?;
    Span::current().record("seat", seat);
    let mut entry = NewEntry {
        seat,
        action: action.encode_to_vec(),
        request_id,
        finishes: false,
        server_time_ms: 0,
        deadline: None,
    };

    for _ in 0..MAX_ATTEMPTS {
        // A seat handed to a bot is the bot's from the hand-over entry on. A cache that has not
        // seen that entry yet cannot append either: the append is conditional on the version,
        // so the conflict brings the entry and this check refuses on the next attempt.
        if game.state.is_bot_seat(seat) {
            return Err(ServiceError::PermissionDenied(format!(
                "seat {seat} of game {game_id} is played by a bot: its token may no longer act"
            )));
        }
        let now = unix_millis();
        // A stale cache must not turn a good move into a refusal: catch up before refusing.
        let refusal = match expected_version {
            Some(expected) if expected != game.version => Some(ServiceError::VersionConflict {
                expected,
                current: game.version,
            }),
            _ => out_of_time(&game, seat, &action, now),
        };
        let applied = match refusal {
            Some(error) => Err(error),
            None => {
                // The speculative apply: the one deep copy of the state a move costs.
                let mut next = game.state.clone_box();
                next.apply_at(seat, &action, now)
                    .map(|events| (next, events))
                    .map_err(ServiceError::from)
            }
        };
        let (next, events) = match applied {
            Ok(applied) => applied,
            Err(_) if freshness == Freshness::MaybeStale => {
                cache.catch_up(&mut game).await?;
                freshness = Freshness::Current;
                continue;
            }
            Err(error) => {
                // A retry of a request that was already applied is answered, not refused.
                if !entry.request_id.is_empty()
                    && let Some(version) =
                        cache.find_request(game_id, seat, &entry.request_id).await?
                {
                    return replay(tabula, game_id, &entry, version).await;
                }
                if game.is_finished() {
                    // Issue #14: a finished game (kept in the store or only in the archive) is
                    // read-only; say so rather than with the engine's refusal of this move.
                    return Err(ServiceError::FailedPrecondition(format!(
                        "game {game_id} has finished (at version {}): it can be viewed, exported \
                         and observed, not played",
                        game.version
                    )));
                }
                return Err(error);
            }
        };

        // The store records the end of a game with the entry that ends it (the game index).
        entry.finishes = next.is_finished();
        entry.server_time_ms = now;
        entry.deadline = deadline_change(&*game.state, &*next);
        match cache.append(&game, &entry).await? {
            Append::Appended { version } => {
                // Kept with the state, so this replica's Observe streams reuse it (no re-apply).
                let applied = Arc::new(Applied {
                    seat,
                    action: action.clone(),
                    events,
                    server_time_ms: now,
                });
                let next = Game {
                    meta: game.meta.clone(),
                    state: Arc::from(next),
                    version,
                    last: Some(applied.clone()),
                };
                if next.is_finished() {
                    crate::metrics::game_finished(next.meta.kind);
                }
                cache.maybe_snapshot(&next);
                let answer = response(&next, seat, &applied.events, false);
                tabula.bot_turn_appended(&next);
                cache.remember(next);
                return Ok(answer);
            }
            Append::Conflict { current, missing } => {
                game.advance(&missing)?;
                if game.version != current {
                    return Err(ServiceError::Internal(format!(
                        "game {game_id}: the store reports version {current} but sent entries up to {}",
                        game.version
                    )));
                }
                cache.remember(game.clone());
                freshness = Freshness::Current;
            }
            Append::Duplicate { version } => {
                return replay(tabula, game_id, &entry, version).await;
            }
        }
    }
    Err(ServiceError::Contention)
}

/// The refusal of a move by the seat to act once its turn clock has run out (a table entry, such
/// as resigning, is still accepted): the server is about to log its timeout, and a move must not
/// slip in after the deadline the clock shows (issue #14: a move that arrived in time wins, a late
/// one does not).
fn out_of_time(game: &Game, seat: Seat, action: &pb::Action, now_ms: u64) -> Option<ServiceError> {
    let (late, deadline_ms) = game.state.deadline()?;
    if late != seat
        || now_ms <= deadline_ms
        || matches!(action.game, Some(pb::action::Game::Table(_)))
    {
        return None;
    }
    Some(ServiceError::FailedPrecondition(format!(
        "seat {seat} ran out of time at {deadline_ms} ms (server clock) in version {}: its timeout \
         is being logged; fetch the current view",
        game.version
    )))
}

/// The original answer to a request id that was already applied at `version`: the state and
/// events right after that entry, as the caller saw them then.
async fn replay(
    tabula: &Tabula,
    game_id: &str,
    entry: &NewEntry,
    version: u64,
) -> ServiceResult<pb::ActResponse> {
    let (mut game, later) = tabula.cache.replay_to(game_id, version - 1).await?;
    let logged = later
        .into_iter()
        .next()
        .filter(|logged| logged.version == version)
        .ok_or_else(|| {
            ServiceError::Internal(format!("game {game_id}: version {version} missing"))
        })?;
    if logged.seat != entry.seat || logged.action != entry.action {
        // Bounded echo: request ids are at most MAX_REQUEST_ID_LEN bytes.
        return Err(ServiceError::InvalidArgument(format!(
            "request_id {:?} was already used by this seat for a different action (version {version}); \
             use a new request id for a new action",
            entry.request_id
        )));
    }
    let applied = game.apply_entry(&logged)?;
    Ok(response(&game, entry.seat, &applied.events, true))
}

/// The answer to the seat that acted: its view, the events as it may see them, whose turn it is.
fn response(game: &Game, seat: Seat, events: &[pb::Event], replayed: bool) -> pb::ActResponse {
    let viewer = Viewer::Seat(seat);
    pb::ActResponse {
        version: game.version,
        view: Some(game.state.view(viewer)),
        events: Disclosure::of(game, viewer).events(game, events),
        status: Some(game.state.status()),
        legal_actions: game.state.legal_actions(viewer),
        replayed,
    }
}
