//! `Act`: validate the caller's move against the true log and append it atomically.
//!
//! The happy path is one store round trip: the move is validated against this replica's cached
//! state at version v and appended "if the log is at v". If another replica got there first, the
//! store answers with the entries we missed (still the same round trip), we catch up and validate
//! again. A move is only refused after it was checked against a state known to be current.

use tonic::metadata::MetadataMap;
use tracing::Span;

use super::cache::{Freshness, Game};
use super::commit::{Committed, Proposal, Proposer, check_request_id, same_request};
use super::disclosure::Disclosure;
use super::error::{ServiceError, ServiceResult};
use super::lag::LAG_ALLOWANCE_MS;
use super::tabula::{Tabula, check_game_id};
use crate::games::{Seat, Viewer};
use crate::proto::v1 as pb;
use crate::store::unix_millis;

/// Appends lost to other writers before giving up with ABORTED (the client may retry).
const MAX_ATTEMPTS: usize = 8;

pub(super) async fn act(
    tabula: &Tabula,
    metadata: &MetadataMap,
    mut request: pb::ActRequest,
) -> ServiceResult<pb::ActResponse> {
    // The turn clock judges a move by when this replica received it, not by when it got to
    // validate it (issue #24: under load, moves sent in time lost to their timeout).
    let received_ms = unix_millis();
    check_game_id(&request.game_id)?;
    let action = request
        .action
        .take()
        .ok_or_else(|| ServiceError::InvalidArgument("ActRequest.action is required".into()))?;
    if let Some(server_only) = server_only_table_action(&action) {
        // The caller's token is valid or not, the game running or not: a seat may never send
        // this kind, so it is the caller's permission that is missing, not the game's state.
        return Err(ServiceError::PermissionDenied(format!(
            "{server_only} entries are appended by the server, not sent by a seat; a seat may \
             resign (Action.table.resign)"
        )));
    }
    check_request_id(&request.request_id)?;
    if request
        .request_id
        .starts_with(super::commit::BOT_REQUEST_PREFIX)
    {
        return Err(ServiceError::InvalidArgument(format!(
            "request ids starting with {:?} are reserved for the server's bots; choose another",
            super::commit::BOT_REQUEST_PREFIX
        )));
    }
    let result = attempt(tabula, metadata, &request, &action, received_ms).await;
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
        pb::table_action::Kind::Join(_) => Some("join"),
        pb::table_action::Kind::FillOpenSeats(_) => Some("fill_open_seats"),
        pb::table_action::Kind::Resign(_)
        | pb::table_action::Kind::Undo(_)
        | pb::table_action::Kind::AcceptUndo(_)
        | pb::table_action::Kind::DeclineUndo(_) => None,
    }
}

/// `action` (the request's), as `request` asks, received at `received_ms`.
async fn attempt(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: &pb::ActRequest,
    action: &pb::Action,
    received_ms: u64,
) -> ServiceResult<pb::ActResponse> {
    let game_id = request.game_id.as_str();
    let expected_version = request.expected_version;
    let request_id = request.request_id.as_str();
    let shape = Shape {
        narrate: request.narrate,
        omit_view: request.omit_view,
    };
    let cache = &tabula.cache;
    let (mut game, mut freshness) = cache.get(game_id).await?;
    let seat = match tabula
        .tenants
        .required_seat(&game.meta, &*game.state, metadata)
    {
        // A token a join handed out (open seats) may be newer than this replica's copy.
        Err(ServiceError::PermissionDenied(_))
            if game.state.has_open_seating() && freshness == Freshness::MaybeStale =>
        {
            cache.catch_up(&mut game).await?;
            freshness = Freshness::Current;
            tabula
                .tenants
                .required_seat(&game.meta, &*game.state, metadata)?
        }
        other => other?,
    };
    Span::current().record("seat", seat);
    // The game's tenant pays for its seats' moves (see `quotas.rs`): counted locally, from a
    // lease taken ahead of need.
    if let Some(tenant) = &game.meta.tenant
        && let Some(limit) = tabula.tenants.limits(tenant).acts_per_second
    {
        tabula.quotas.admit_act(tenant, limit).await?;
    }
    let proposal = Proposal {
        proposer: Proposer::Player,
        seat,
        action,
        request_id,
        at_version: expected_version,
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
        let refusal = match expected_version {
            Some(expected) if expected != game.version => Some(ServiceError::VersionConflict {
                expected,
                current: game.version,
            }),
            _ => out_of_time(&game, seat, action, received_ms),
        };
        let committed = match refusal {
            Some(error) => Committed::Refused(error),
            None => tabula.commit(&mut game, &proposal, unix_millis()).await?,
        };
        match committed {
            Committed::Appended => {
                let applied = game.last.clone().ok_or_else(|| {
                    ServiceError::Internal(format!("game {game_id}: a commit without its entry"))
                })?;
                return Ok(response(&game, seat, &applied.events, false, shape));
            }
            // A stale cache must not turn a good move into a refusal: catch up before refusing.
            Committed::Refused(_) if freshness == Freshness::MaybeStale => {
                cache.catch_up(&mut game).await?;
                freshness = Freshness::Current;
            }
            Committed::Refused(error) => {
                // A retry of a request that was already applied is answered, not refused.
                if !request_id.is_empty()
                    && let Some(version) = cache
                        .find_request(game_id, seat, request_id, expected_version)
                        .await?
                {
                    return replay(tabula, game_id, &proposal, version, shape).await;
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
            Committed::Overtaken => freshness = Freshness::Current,
            Committed::Duplicate { version } => {
                return replay(tabula, game_id, &proposal, version, shape).await;
            }
        }
    }
    Err(ServiceError::Contention)
}

/// The refusal of a move by the seat to act once its turn clock has run out (a table entry, such
/// as resigning, is still accepted): the server is about to log its timeout, and a move must not
/// slip in after it. A move counts as in time when this replica received it by the deadline plus
/// [`LAG_ALLOWANCE_MS`], however long it then waited to be validated; the server logs no timeout
/// before the deadline plus [`super::lag::TIMEOUT_DELAY_MS`], so such a move is appended
/// first (issue #24).
fn out_of_time(
    game: &Game,
    seat: Seat,
    action: &pb::Action,
    received_ms: u64,
) -> Option<ServiceError> {
    let (late, deadline_ms) = game.state.deadline()?;
    if late != seat
        || received_ms <= deadline_ms + LAG_ALLOWANCE_MS
        || matches!(action.game, Some(pb::action::Game::Table(_)))
    {
        return None;
    }
    Some(ServiceError::FailedPrecondition(format!(
        "seat {seat} ran out of time at {deadline_ms} ms (server clock) in version {}; this move \
         reached the server at {received_ms} ms, past the deadline and its {LAG_ALLOWANCE_MS} ms \
         lag allowance: its timeout is being logged; fetch the current view",
        game.version
    )))
}

/// The original answer to a request id that was already applied at `version`: the state and
/// events right after that entry, as the caller saw them then.
async fn replay(
    tabula: &Tabula,
    game_id: &str,
    proposal: &Proposal<'_>,
    version: u64,
    shape: Shape,
) -> ServiceResult<pb::ActResponse> {
    let (mut game, later) = tabula.cache.replay_to(game_id, version - 1).await?;
    let logged = same_request(later, game_id, proposal, version)?;
    let applied = game.apply_entry(&logged)?;
    Ok(response(&game, proposal.seat, &applied.events, true, shape))
}

/// What the caller asked its answer to hold besides the version, events, status and legal
/// actions: sentences and labels (`narrate`), and whether to leave the view out (`omit_view`).
#[derive(Clone, Copy, Debug)]
struct Shape {
    narrate: bool,
    omit_view: bool,
}

/// The answer to the seat that acted: its view (unless the request left it out: a client that
/// needs only what follows its move spares the server building and encoding it, and itself
/// decoding it), the events as it may see them, whose turn it is. With sentences and labels when
/// the request asked for them.
fn response(
    game: &Game,
    seat: Seat,
    events: &[pb::Event],
    replayed: bool,
    shape: Shape,
) -> pb::ActResponse {
    let viewer = Viewer::Seat(seat);
    let mut response = pb::ActResponse {
        version: game.version,
        view: (!shape.omit_view).then(|| game.state.view(viewer)),
        events: Disclosure::of(game, viewer).events(game, events),
        status: Some(game.state.status()),
        legal_actions: game.state.legal_actions(viewer),
        replayed,
        head: game.head.map(|head| head.to_vec()).unwrap_or_default(),
    };
    if shape.narrate {
        super::narration::narrate(
            game,
            viewer,
            &mut response.events,
            &mut response.legal_actions,
        );
    }
    response
}
