//! `FillOpenSeats`: the game's creator gives every seat still open to a server bot, which starts
//! the game (issue #30, item 1: "the game starts when every seat is taken, or when the creator
//! fills the rest with bots"). Authorized by the host token CreateGame returned with the
//! invitations; appended as a table entry through the commit path, so a join racing with it either
//! got its seat first or finds the table full.

use tonic::metadata::MetadataMap;

use super::auth::bearer_token;
use super::commit::check_request_id;
use super::error::{ServiceError, ServiceResult};
use super::seating::SeatingRecord;
use super::table_entry::OperatorEntry;
use super::tabula::{Tabula, check_game_id};
use crate::proto::v1 as pb;

pub(super) async fn fill_open_seats(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::FillOpenSeatsRequest,
) -> ServiceResult<pb::FillOpenSeatsResponse> {
    check_game_id(&request.game_id)?;
    check_request_id(&request.request_id)?;
    let token = bearer_token(metadata)?.ok_or_else(|| {
        ServiceError::Unauthenticated(
            "FillOpenSeats needs the game's host token (CreateGameResponse.host_token): send \
             `authorization: Bearer <host token>`"
                .into(),
        )
    })?;
    let game = tabula.cache.current(&request.game_id).await?;
    let record = SeatingRecord::of(&game.meta)?;
    if !record.as_ref().is_some_and(|record| record.is_host(&token)) {
        return Err(ServiceError::PermissionDenied(format!(
            "this token is not the host token of game {}: only the game's creator fills its \
             open seats",
            request.game_id
        )));
    }
    let kind = match pb::BotKind::try_from(request.kind) {
        Ok(pb::BotKind::Unspecified) => pb::BotKind::Random,
        Ok(kind) => kind,
        Err(_) => {
            return Err(ServiceError::InvalidArgument(format!(
                "kind {} is not a bot: use BOT_KIND_RANDOM or BOT_KIND_SEARCH",
                request.kind
            )));
        }
    };
    // The new bot seats count in the game's tenant's quota (see `quotas.rs`), as a hand-over's do.
    let open = game.state.status().open_seats;
    let mut admitted = Vec::new();
    if let Some(tenant) = &game.meta.tenant {
        let limit = tabula.tenants.limits(tenant).bot_seats.unwrap_or(u64::MAX);
        for seat in &open {
            let admission = tabula
                .quotas
                .admit_bot_seat(tenant, &request.game_id, *seat, limit, |id| async move {
                    tabula.is_running(&id).await
                })
                .await;
            if let Err(refused) = admission {
                leave(tabula, &game.meta, &admitted).await;
                return Err(refused);
            }
            admitted.push(*seat);
        }
    }
    let fill = pb::TableAction {
        kind: Some(pb::table_action::Kind::FillOpenSeats(
            pb::table_action::FillOpenSeats {
                bot: Some(pb::BotSeat {
                    seat: 0,
                    kind: kind as i32,
                    iterations: request.iterations,
                }),
            },
        )),
    };
    let filled = tabula
        .append_operator_entry(
            &request.game_id,
            fill,
            request.request_id,
            OperatorEntry {
                what: "filling the open seats",
                when_over: "there are no seats to fill",
            },
        )
        .await;
    // Seats a refused fill did not give to a bot hold no place.
    if filled.is_err() {
        let now_bots = tabula
            .cache
            .current(&request.game_id)
            .await
            .map(|game| game.state.status().bots)
            .unwrap_or_default();
        let never: Vec<u32> = admitted
            .into_iter()
            .filter(|seat| !now_bots.iter().any(|bot| bot.seat == *seat))
            .collect();
        leave(tabula, &game.meta, &never).await;
    }
    let (version, status) = filled?;
    Ok(pb::FillOpenSeatsResponse {
        version,
        status: Some(status),
    })
}

/// Gives back the bot-seat places of `seats` in the game's tenant's quota.
async fn leave(tabula: &Tabula, meta: &crate::store::GameMeta, seats: &[u32]) {
    let Some(tenant) = &meta.tenant else {
        return;
    };
    for seat in seats {
        if let Err(error) = tabula
            .quotas
            .leave_bot_seat(tenant, &meta.game_id, *seat)
            .await
        {
            tracing::warn!(%error, "a bot seat never filled stays counted until the next repair");
        }
    }
}
