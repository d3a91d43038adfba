//! `EndGame` (operator API): ends a running game with the table's abort entry, which records the
//! operator's reason in the log (see [`crate::hosting`]'s table entries). The entry is appended by
//! the server through the same conditional append as a move ([`Tabula::append_table_entry`]): a
//! move that gets in first is kept and the abort follows it, and a retry with the same request id
//! answers the first result instead of aborting twice. As any entry that ends a game, it also
//! moves the game to the finished games of the game index.

use super::error::{ServiceError, ServiceResult};
use super::table_entry::OperatorEntry;
use super::tabula::{Tabula, check_game_id};
use super::tenants::Caller;
use crate::hosting::MAX_ABORT_REASON_LEN;
use crate::proto::v1 as pb;

pub(super) async fn end_game(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::EndGameRequest,
) -> ServiceResult<pb::EndGameResponse> {
    check_game_id(&request.game_id)?;
    check_reason(&request.reason)?;
    tabula.operated_tenant(caller, &request.game_id).await?;
    let abort = pb::TableAction {
        kind: Some(pb::table_action::Kind::Abort(pb::table_action::Abort {
            reason: request.reason,
        })),
    };
    let entry = OperatorEntry {
        what: "an abort",
        when_over: "there is nothing to end",
    };
    let (version, status) = tabula
        .append_operator_entry(&request.game_id, abort, request.request_id, entry)
        .await?;
    Ok(pb::EndGameResponse {
        version,
        status: Some(status),
    })
}

/// A reason is required, bounded and plain text (it goes into the log every seat can read).
fn check_reason(reason: &str) -> ServiceResult<()> {
    if reason.trim().is_empty() {
        return Err(ServiceError::InvalidArgument(
            "EndGameRequest.reason is required: say why the game is ended (it is recorded in the \
             game's log)"
                .into(),
        ));
    }
    if reason.len() > MAX_ABORT_REASON_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "reason is {} bytes long; the limit is {MAX_ABORT_REASON_LEN} bytes",
            reason.len()
        )));
    }
    if let Some(bad) = reason.chars().find(|c| c.is_control()) {
        return Err(ServiceError::InvalidArgument(format!(
            "reason contains the control character U+{:04X}; send one line of plain text",
            u32::from(bad)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_required_bounded_and_plain() {
        assert!(check_reason("player left the table").is_ok());
        assert!(check_reason(&"x".repeat(MAX_ABORT_REASON_LEN)).is_ok());
        for refused in ["", "   ", "two\nlines"] {
            assert!(check_reason(refused).is_err(), "{refused:?}");
        }
        let long = check_reason(&"x".repeat(MAX_ABORT_REASON_LEN + 1)).expect_err("too long");
        assert!(long.to_string().contains("257 bytes"), "{long}");
    }
}
