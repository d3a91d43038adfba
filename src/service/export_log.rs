//! `ExportLog`: the game's log as the caller may see it. While the game runs: the opening events,
//! the actions and events redacted for the caller, and no seed. Once it has ended, everything is
//! public: the full actions and events and the seed, so anyone can re-execute the log
//! (`VerifyLog`, `tabula verify`).

use tonic::metadata::MetadataMap;

use super::error::ServiceResult;
use super::game_log::game_log;
use super::tabula::{Tabula, check_game_id};
use crate::proto::v1 as pb;

pub(super) async fn export_log(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::ExportLogRequest,
) -> ServiceResult<pb::ExportLogResponse> {
    check_game_id(&request.game_id)?;
    let (game, entries) = tabula.cache.history(&request.game_id).await?;
    let viewer = tabula.tenants.viewer(&game.meta, metadata)?;
    Ok(pb::ExportLogResponse {
        log: Some(game_log(game, &entries, viewer, &tabula.signing)?),
    })
}
