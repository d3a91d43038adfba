//! `ExportLogUnredacted` (operator API): a game's log with every seat's secrets, while it runs
//! too, for whoever operates the game (the operator, or the owning tenant's key): a backend
//! reviewing a disputed game, or support looking at what each player held.
//!
//! It is `ExportLog` as [`Viewer::AllSeats`] sees it: each seat's private information (hands,
//! hidden money, face-down shares) as the game dealt it so far, and never what no seat knows (the
//! seed, so the deck's, bag's and dice's future stays on the server until the game ends). The
//! engines' random-play tests prove that this viewer's redaction depends on nothing hidden from
//! every seat; `tests/hidden_information.rs` proves the service applies it.

use super::error::ServiceResult;
use super::game_log::game_log;
use super::tabula::Tabula;
use super::tenants::Caller;
use crate::games::Viewer;
use crate::proto::v1 as pb;

pub(super) async fn export_log_unredacted(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::ExportLogUnredactedRequest,
) -> ServiceResult<pb::ExportLogUnredactedResponse> {
    // Ownership first: another tenant's game answers as a missing one before its log is read.
    tabula.operated_tenant(caller, &request.game_id).await?;
    let (game, entries) = tabula.cache.history(&request.game_id).await?;
    Ok(pb::ExportLogUnredactedResponse {
        log: Some(game_log(game, &entries, Viewer::AllSeats, &tabula.signing)?),
    })
}
