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
    let (version, status) = tabula
        .append_operator_entry(
            &request.game_id,
            fill,
            request.request_id,
            OperatorEntry {
                what: "filling the open seats",
                when_over: "there are no seats to fill",
            },
        )
        .await?;
    Ok(pb::FillOpenSeatsResponse {
        version,
        status: Some(status),
    })
}
