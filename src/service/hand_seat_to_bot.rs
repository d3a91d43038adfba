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

use super::error::{ServiceError, ServiceResult};
use super::table_entry::OperatorEntry;
use super::tabula::{Tabula, check_game_id};
use super::tenants::Caller;
use crate::proto::v1 as pb;

pub(super) async fn hand_seat_to_bot(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::HandSeatToBotRequest,
) -> ServiceResult<pb::HandSeatToBotResponse> {
    check_game_id(&request.game_id)?;
    let bot = request.bot.ok_or_else(|| {
        ServiceError::InvalidArgument(
            "HandSeatToBotRequest.bot is required: name the seat and the bot's kind".into(),
        )
    })?;
    let seat = bot.seat;
    // The new bot seat counts in its game's tenant's quota (see `quotas.rs`), once the caller
    // may operate the game (another tenant learns nothing of it, not even its quota).
    let owner = tabula.operated_tenant(caller, &request.game_id).await?;
    if let Some(tenant) = &owner {
        let limit = tabula.tenants.limits(tenant).bot_seats.unwrap_or(u64::MAX);
        tabula
            .quotas
            .admit_bot_seat(tenant, &request.game_id, seat, limit, |id| async move {
                tabula.is_running(&id).await
            })
            .await?;
    }
    let hand = pb::TableAction {
        kind: Some(pb::table_action::Kind::HandToBot(
            pb::table_action::HandToBot { bot: Some(bot) },
        )),
    };
    let entry = OperatorEntry {
        what: "a hand-over",
        when_over: "there is no seat to hand over",
    };
    let handed = tabula
        .append_operator_entry(&request.game_id, hand, request.request_id, entry)
        .await;
    // A hand-over that did not happen holds no place; one already made keeps its own.
    if let (Err(_), Some(tenant)) = (&handed, &owner)
        && !tabula
            .cache
            .current(&request.game_id)
            .await
            .is_ok_and(|game| game.state.is_bot_seat(seat))
        && let Err(error) = tabula
            .quotas
            .leave_bot_seat(tenant, &request.game_id, seat)
            .await
    {
        tracing::warn!(%error, "a refused hand-over stays counted until the next repair");
    }
    let (version, status) = handed?;
    Ok(pb::HandSeatToBotResponse {
        version,
        status: Some(status),
    })
}
