//! `Act`: validate the caller's move against the true log and append it atomically.
//!
//! The happy path is one store round trip: the move is validated against this replica's cached
//! state at version v and appended "if the log is at v". If another replica got there first, the
//! store answers with the entries we missed (still the same round trip), we catch up and validate
//! again. A move is only refused after it was checked against a state known to be current.

use prost::Message;
use tonic::metadata::MetadataMap;
use tracing::Span;

use super::games::Game;
use super::{ServiceError, ServiceResult, Tabula, auth, check_game_id};
use crate::games::{Seat, Viewer};
use crate::proto::v1 as pb;
use crate::store::{Append, NewEntry};

/// Appends lost to other writers before giving up with ABORTED (the client may retry).
const MAX_ATTEMPTS: usize = 8;
const MAX_REQUEST_ID_LEN: usize = 128;

pub(super) async fn act(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::ActRequest,
) -> ServiceResult<pb::ActResponse> {
    check_game_id(&request.game_id)?;
    let action = request
        .action
        .ok_or_else(|| ServiceError::InvalidArgument("ActRequest.action is required".into()))?;
    if request.request_id.len() > MAX_REQUEST_ID_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "request_id is longer than {MAX_REQUEST_ID_LEN} bytes"
        )));
    }
    let span = Span::current();
    let mut round_trips = 0u32;
    let result = attempt(
        tabula,
        metadata,
        &request.game_id,
        action,
        request.expected_version,
        request.request_id,
        &mut round_trips,
    )
    .await;
    span.record("store_round_trips", round_trips);
    if let Ok(response) = &result {
        span.record("version", response.version);
    }
    result
}

async fn attempt(
    tabula: &Tabula,
    metadata: &MetadataMap,
    game_id: &str,
    action: pb::Action,
    expected_version: Option<u64>,
    request_id: String,
    round_trips: &mut u32,
) -> ServiceResult<pb::ActResponse> {
    let store = tabula.games.store();
    let (mut game, mut fresh) = tabula.games.get(game_id).await?;
    *round_trips += u32::from(fresh);
    let seat = auth::required_seat(&game.meta, metadata)?;
    Span::current().record("seat", seat);
    let entry = NewEntry {
        seat,
        action: action.encode_to_vec(),
        request_id,
    };

    for _ in 0..MAX_ATTEMPTS {
        // A stale cache must not turn a good move into a refusal: catch up before refusing.
        let refusal = match expected_version {
            Some(expected) if expected != game.version => Some(ServiceError::VersionConflict {
                expected,
                current: game.version,
            }),
            _ => None,
        };
        let applied = match refusal {
            Some(error) => Err(error),
            None => {
                let mut next = game.clone();
                next.state
                    .apply(seat, &action)
                    .map(|events| (next, events))
                    .map_err(ServiceError::from)
            }
        };
        let (mut next, events) = match applied {
            Ok(applied) => applied,
            Err(_) if !fresh => {
                *round_trips += 1;
                tabula.games.catch_up(&mut game).await?;
                fresh = true;
                continue;
            }
            Err(error) => {
                // A retry of a request that was already applied is answered, not refused.
                if !entry.request_id.is_empty() {
                    *round_trips += 1;
                    if let Some(version) =
                        store.find_request(game_id, seat, &entry.request_id).await?
                    {
                        return replay(tabula, game_id, &entry, version, round_trips).await;
                    }
                }
                return Err(error);
            }
        };

        *round_trips += 1;
        match store.append(game_id, game.version, &entry).await? {
            Append::Appended { version } => {
                next.version = version;
                tabula.games.maybe_snapshot(&next);
                let answer = response(&next, seat, &events, false);
                tabula.games.remember(next);
                return Ok(answer);
            }
            Append::Conflict { current, missing } => {
                game.apply_entries(&missing)?;
                if game.version != current {
                    return Err(ServiceError::Internal(format!(
                        "game {game_id}: the store reports version {current} but sent entries up to {}",
                        game.version
                    )));
                }
                tabula.games.remember(game.clone());
                fresh = true;
            }
            Append::Duplicate { version } => {
                return replay(tabula, game_id, &entry, version, round_trips).await;
            }
        }
    }
    Err(ServiceError::Contention)
}

/// The original answer to a request id that was already applied at `version`: the state and
/// events right after that entry, as the caller saw them then.
async fn replay(
    tabula: &Tabula,
    game_id: &str,
    entry: &NewEntry,
    version: u64,
    round_trips: &mut u32,
) -> ServiceResult<pb::ActResponse> {
    *round_trips += 2;
    let (mut game, later) = tabula.games.replay_to(game_id, version - 1).await?;
    let logged = later
        .into_iter()
        .next()
        .filter(|logged| logged.version == version)
        .ok_or_else(|| {
            ServiceError::Internal(format!("game {game_id}: version {version} missing"))
        })?;
    if logged.seat != entry.seat || logged.action != entry.action {
        return Err(ServiceError::InvalidArgument(format!(
            "request_id {:?} was already used by this seat for a different action (version {version}); \
             use a new request id for a new action",
            entry.request_id
        )));
    }
    let events = game.apply_entry(&logged)?;
    Ok(response(&game, entry.seat, &events, true))
}

fn response(game: &Game, seat: Seat, events: &[pb::Event], replayed: bool) -> pb::ActResponse {
    let viewer = Viewer::Seat(seat);
    pb::ActResponse {
        version: game.version,
        view: Some(game.state.view(viewer)),
        events: game.state.redact(events, viewer),
        status: Some(game.state.status()),
        legal_actions: game.state.legal_actions(viewer),
        replayed,
    }
}
