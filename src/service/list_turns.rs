//! `ListTurns` (operator API): a tenant's turn inbox, the games where one of its players must act
//! now, by `Player.external_id`, the longest waiting first. The inbox is derived from the logs by
//! the notification workers (`webhook_delivery.rs`) into the store (`crate::store::TurnInbox`).

use super::error::{ServiceError, ServiceResult};
use super::listing::timestamp;
use super::tabula::{Tabula, check_game_id};
use super::tenants::Caller;
use crate::proto::v1 as pb;

const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 500;
/// The longest external id a player has (`Player.external_id`).
const MAX_EXTERNAL_ID_LEN: usize = 128;

pub(super) async fn list_turns(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::ListTurnsRequest,
) -> ServiceResult<pb::ListTurnsResponse> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    if request.external_id.is_empty() || request.external_id.len() > MAX_EXTERNAL_ID_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "external_id must be 1 to {MAX_EXTERNAL_ID_LEN} bytes: the player's \
             Player.external_id"
        )));
    }
    let limit = match request.page_size {
        0 => DEFAULT_PAGE_SIZE,
        size => (size as usize).min(MAX_PAGE_SIZE),
    };
    let after = if request.page_token.is_empty() {
        None
    } else {
        Some(decode_token(&request.page_token)?)
    };
    // One more than the page: whether a next page exists.
    let mut turns = tabula
        .inbox
        .waiting_turns(&tenant, &request.external_id, after, limit + 1)
        .await?;
    let more = turns.len() > limit;
    turns.truncate(limit);
    let next_page_token = match (more, turns.last()) {
        (true, Some(last)) => format!("{}.{}", last.since_ms, last.game_id),
        _ => String::new(),
    };
    Ok(pb::ListTurnsResponse {
        turns: turns
            .into_iter()
            .map(|turn| pb::WaitingTurn {
                game_id: turn.game_id,
                seat: turn.seat,
                version: turn.version,
                waiting_since: Some(timestamp(turn.since_ms)),
                deadline: turn.deadline_ms.map(timestamp),
            })
            .collect(),
        next_page_token,
    })
}

/// `<since ms>.<game id>`, as `list_turns` writes it.
fn decode_token(token: &str) -> ServiceResult<(u64, String)> {
    let bad = || {
        ServiceError::InvalidArgument(
            "page_token is not a ListTurns page token: send back next_page_token as it came".into(),
        )
    };
    let (since, game_id) = token.split_once('.').ok_or_else(bad)?;
    let since = since.parse().map_err(|_| bad())?;
    check_game_id(game_id).map_err(|_| bad())?;
    Ok((since, game_id.to_owned()))
}
