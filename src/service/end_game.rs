//! `EndGame` (operator API): ends a running game with an entry in its log that records why.
//!
//! The entry itself is the table's abort action, which is not in this build yet; until it is,
//! the call checks everything it can (the operator token, at the gate; the game id; the reason;
//! that the game exists and still runs) and then answers UNIMPLEMENTED, leaving the game as it is.
//! Once the abort entry exists, appending it here is an ordinary append through the cache with
//! `finishes` set, which also moves the game to the index's finished games.

use super::{ServiceError, ServiceResult, Tabula, check_game_id};
use crate::proto::v1 as pb;

/// The longest reason accepted, in bytes: it is stored in the game's log.
pub const MAX_REASON_LEN: usize = 256;

pub(super) async fn end_game(
    tabula: &Tabula,
    request: pb::EndGameRequest,
) -> ServiceResult<pb::EndGameResponse> {
    check_game_id(&request.game_id)?;
    check_reason(&request.reason)?;
    let game = tabula.cache.current(&request.game_id).await?;
    if game.is_finished() {
        return Err(ServiceError::FailedPrecondition(format!(
            "game {} has already ended (at version {}): there is nothing to end",
            request.game_id, game.version
        )));
    }
    Err(ServiceError::Unimplemented(format!(
        "EndGame is not available in this build: the entry that ends a game (the table's abort \
         action) is not in it yet. Game {} was left as it is.",
        request.game_id
    )))
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
    if reason.len() > MAX_REASON_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "reason is {} bytes long; the limit is {MAX_REASON_LEN} bytes",
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
        assert!(check_reason(&"x".repeat(MAX_REASON_LEN)).is_ok());
        for refused in ["", "   ", "two\nlines"] {
            assert!(check_reason(refused).is_err(), "{refused:?}");
        }
        let long = check_reason(&"x".repeat(MAX_REASON_LEN + 1)).expect_err("too long");
        assert!(long.to_string().contains("257 bytes"), "{long}");
    }
}
