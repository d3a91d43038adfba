//! `JoinGame`: take an open seat with an invitation code (issue #30, item 1).
//!
//! The code names its game; the game's meta says which seat the code takes and until when
//! (`seating.rs`). The join itself is a table entry the server appends through the ordinary
//! commit path, following the log: the rules of the table (`hosting/seating.rs`) refuse a second
//! use of the invitation and a seat already taken, so of callers racing for one seat exactly one
//! wins, on any number of replicas.

use tonic::metadata::MetadataMap;

use super::error::{ServiceError, ServiceResult};
use super::seating::{MAX_JOIN_REQUEST_ID_LEN, SeatingRecord, game_of_code};
use super::table_entry::TableEntryResult;
use super::tabula::Tabula;
use super::{auth, players};
use crate::games::ActionError;
use crate::proto::v1 as pb;
use crate::store::unix_millis;

/// The answer to a code no game issued (or one of another tenant's games): the same whatever the
/// reason, so a guess learns nothing.
fn unknown_code() -> ServiceError {
    ServiceError::NotFound(
        "no game issued this invitation code: check it, or ask the game's creator for another"
            .into(),
    )
}

pub(super) async fn join_game(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::JoinGameRequest,
) -> ServiceResult<pb::JoinGameResponse> {
    let game_id = game_of_code(&request.code)?.to_owned();
    tracing::Span::current().record("game_id", game_id.as_str());
    if request.request_id.len() > MAX_JOIN_REQUEST_ID_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "request_id is {} bytes long; a join's limit is {MAX_JOIN_REQUEST_ID_LEN} bytes",
            request.request_id.len()
        )));
    }
    // A joiner may stay nameless; a name given is held to Player's limits.
    let player = request
        .player
        .filter(|player| !player.display_name.is_empty() || !player.external_id.is_empty());
    if let Some(player) = &player {
        players::check(std::slice::from_ref(player), None).map_err(|refusal| {
            ServiceError::InvalidArgument(format!("JoinGameRequest.player: {}", refusal.why))
        })?;
    }

    let game = match tabula.cache.current(&game_id).await {
        Err(ServiceError::NotFound(_)) => return Err(unknown_code()),
        other => other?,
    };
    match tabula.tenants.may_join(&game.meta, metadata) {
        Err(ServiceError::NotFound(_)) => return Err(unknown_code()),
        other => other?,
    }
    let record = SeatingRecord::of(&game.meta)?.ok_or_else(unknown_code)?;
    let (invitation, invited) = record.invitation(&request.code).ok_or_else(unknown_code)?;
    if unix_millis() >= invited.expires_at_ms {
        return Err(ServiceError::FailedPrecondition(format!(
            "this invitation expired at {} (server clock, ms since the Unix epoch); ask the \
             game's creator for another",
            invited.expires_at_ms
        )));
    }

    let token = record.join_token(invitation, &request.request_id)?;
    let token_hash = auth::hash_token(&token);
    let join = pb::TableAction {
        kind: Some(pb::table_action::Kind::Join(pb::table_action::Join {
            seat: invited.seat,
            invitation,
            token_hash: token_hash.to_vec(),
            player: player.map(|player| pb::Player {
                seat: invited.seat.unwrap_or_default(),
                ..player
            }),
        })),
    };
    // Request ids of server entries share one namespace: a join's is scoped by its invitation,
    // so two joiners choosing the same id never take each other's join for their own.
    let entry_request_id = if request.request_id.is_empty() {
        String::new()
    } else {
        format!("join:{invitation}:{}", request.request_id)
    };
    let appended = tabula
        .append_table_entry(&game_id, None, join, entry_request_id)
        .await;
    let version = match appended {
        Ok(TableEntryResult::Appended { version, .. }) => version,
        Ok(TableEntryResult::LostRace { current }) => {
            return Err(ServiceError::Internal(format!(
                "game {game_id}: a join that follows the log lost a race at version {current}"
            )));
        }
        Err(ServiceError::Action(ActionError::GameOver)) => {
            return Err(ServiceError::FailedPrecondition(format!(
                "game {game_id} has ended: there is no seat left to join"
            )));
        }
        Err(error) => return Err(error),
    };
    let game = tabula.cache.at_least(&game_id, version).await?;
    let seat = (0..game.state.seat_count())
        .find(|seat| game.state.joined_token_hash(*seat) == Some(token_hash))
        .ok_or_else(|| {
            ServiceError::Internal(format!(
                "game {game_id}: the join at version {version} holds another token"
            ))
        })?;
    tracing::Span::current().record("seat", seat);
    Ok(pb::JoinGameResponse {
        game_id,
        seat,
        token,
        version,
        status: Some(game.state.status()),
    })
}
