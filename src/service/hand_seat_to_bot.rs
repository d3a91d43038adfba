//! `HandSeatToBot` (operator API): a server bot takes a seat over, with the table's hand-over
//! entry in the log (`TableAction.hand_to_bot`, see [`crate::hosting`]'s table entries), appended
//! by the server through the same conditional append as a move
//! ([`Tabula::append_table_entry`]): a move that gets in first is kept and the hand-over follows
//! it, and a retry with the same request id answers the first result. From the entry on, the
//! seat's token may no longer act (Act checks the seat against the state), and the bot workers
//! play the seat whenever it must act (the append wakes them).
//!
//! A resigned seat may be handed over too (three or more seats): it stays resigned — it ranks
//! last and never wins — but its bot decides for it instead of its default actions.

use super::{ServiceError, ServiceResult, TableEntryResult, Tabula, check_game_id};
use crate::games::ActionError;
use crate::proto::v1 as pb;

pub(super) async fn hand_seat_to_bot(
    tabula: &Tabula,
    request: pb::HandSeatToBotRequest,
) -> ServiceResult<pb::HandSeatToBotResponse> {
    check_game_id(&request.game_id)?;
    let bot = request.bot.ok_or_else(|| {
        ServiceError::InvalidArgument(
            "HandSeatToBotRequest.bot is required: name the seat and the bot's kind".into(),
        )
    })?;
    let hand = pb::TableAction {
        kind: Some(pb::table_action::Kind::HandToBot(
            pb::table_action::HandToBot { bot: Some(bot) },
        )),
    };
    let appended = tabula
        .append_table_entry(&request.game_id, None, hand, request.request_id)
        .await;
    match appended {
        Ok(TableEntryResult::Appended {
            version,
            status: Some(status),
        }) => Ok(pb::HandSeatToBotResponse {
            version,
            status: Some(status),
        }),
        // A retry of a hand-over already appended: answer with the game as it is now.
        Ok(TableEntryResult::Appended {
            version,
            status: None,
        }) => {
            let game = tabula.cache.current(&request.game_id).await?;
            Ok(pb::HandSeatToBotResponse {
                version,
                status: Some(game.state.status()),
            })
        }
        Ok(TableEntryResult::LostRace { current }) => Err(ServiceError::Internal(format!(
            "game {}: a hand-over that follows the log lost a race at version {current}",
            request.game_id
        ))),
        Err(ServiceError::Action(ActionError::GameOver)) => {
            Err(ServiceError::FailedPrecondition(format!(
                "game {} has already ended: there is no seat to hand over",
                request.game_id
            )))
        }
        Err(error) => Err(error),
    }
}
