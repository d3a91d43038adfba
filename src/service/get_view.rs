//! `GetView`: the caller's current view and, on its turn, its legal actions.

use tonic::metadata::MetadataMap;

use super::{ServiceResult, Tabula, auth, check_game_id};
use crate::games::Viewer;
use crate::proto::v1 as pb;

pub(super) async fn get_view(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::GetViewRequest,
) -> ServiceResult<pb::GetViewResponse> {
    check_game_id(&request.game_id)?;
    let game = tabula.games.current(&request.game_id).await?;
    let viewer = auth::viewer(&game.meta, metadata)?;
    tracing::Span::current().record("version", game.version);
    Ok(pb::GetViewResponse {
        version: game.version,
        view: Some(game.state.view(viewer)),
        status: Some(game.state.status()),
        legal_actions: game.state.legal_actions(viewer),
        seat: match viewer {
            Viewer::Seat(seat) => Some(seat),
            Viewer::Spectator => None,
        },
        game: game.meta.kind,
    })
}
