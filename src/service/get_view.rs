//! `GetView`: the caller's view and, on its turn, its legal actions; or, given a version, the view
//! the caller had then (time travel for replay UIs: it shows nothing the caller did not see then).

use tonic::metadata::MetadataMap;

use super::cache::Game;
use super::error::{ServiceError, ServiceResult};
use super::players;
use super::tabula::{Tabula, check_game_id};
use crate::games::Viewer;
use crate::proto::v1 as pb;
use crate::store::unix_millis;

pub(super) async fn get_view(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::GetViewRequest,
) -> ServiceResult<pb::GetViewResponse> {
    check_game_id(&request.game_id)?;
    // One read of the game serves both the caller's credentials (its meta) and the answer: a
    // separate meta lookup would cost a cold replica a second store round trip.
    let current = match request.min_version {
        Some(_) if request.version.is_some() => {
            return Err(ServiceError::InvalidArgument(
                "GetViewRequest: set version (a past view) or min_version (a current one at \
                 least that far), not both"
                    .into(),
            ));
        }
        Some(min_version) => tabula.cache.at_least(&request.game_id, min_version).await?,
        None => tabula.cache.current(&request.game_id).await?,
    };
    // The caller's credentials before anything about the game: a stranger learns nothing of it.
    let viewer = tabula.viewer_of(&current, metadata).await?;
    // A delayed spectator is served the game as it was at the version it may see (`delay.rs`).
    let (visible, delay) =
        super::delay::visible_version(&tabula.cache, &current, viewer, unix_millis()).await?;
    if let Some(delay) = delay {
        if let Some(version) = request.min_version.or(request.version)
            && version > visible
        {
            return Err(delay.not_yet(&request.game_id, version));
        }
    } else if let Some(min_version) = request.min_version
        && current.version < min_version
    {
        return Err(ServiceError::OutOfRange(format!(
            "game {} is at version {}; min_version {min_version} is ahead of it",
            request.game_id, current.version
        )));
    }
    let (game, is_current) = match request.version.or(delay.map(|_| visible)) {
        Some(version) if version != current.version => (
            tabula.cache.at_version(&request.game_id, version).await?,
            false,
        ),
        _ => (current, true),
    };
    tracing::Span::current().record("version", game.version);
    let links = super::seating::links(&tabula.cache, &game).await?;
    Ok(answer(
        &game,
        viewer,
        Shape {
            omit_view: request.omit_view,
            narrate: request.narrate,
            is_current,
            whole: true,
        },
        links,
    ))
}

/// What a view answer holds beyond the game and the viewer.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    /// Leave the view out (`omit_view`).
    pub(super) omit_view: bool,
    /// Fill in the labels of the legal actions.
    pub(super) narrate: bool,
    /// `game` is the current version: its legal actions and clock are listed.
    pub(super) is_current: bool,
    /// Also what seldom changes (the players, the signed commitment, the links), which a stream
    /// sends once (`Play`'s first message).
    pub(super) whole: bool,
}

/// `viewer`'s answer about `game`: GetView's, and each `turn` message of a Play stream.
pub(super) fn answer(
    game: &Game,
    viewer: Viewer,
    shape: Shape,
    links: Option<pb::GameLinks>,
) -> pb::GetViewResponse {
    let mut response = pb::GetViewResponse {
        links,
        version: game.version,
        // A client asking only whose turn it is and what it may do (`omit_view`) is spared the
        // view: the server neither builds nor encodes it.
        view: (!shape.omit_view).then(|| game.state.view(viewer)),
        status: Some(game.state.status()),
        legal_actions: if shape.is_current {
            game.state.legal_actions(viewer)
        } else {
            Vec::new()
        },
        seat: match viewer {
            Viewer::Seat(seat) => Some(seat),
            Viewer::Spectator | Viewer::AllSeats => None,
        },
        game: game.meta.kind as i32,
        players: if shape.whole {
            players::of_game(&game.meta, &*game.state)
        } else {
            Vec::new()
        },
        signed_commitment: if shape.whole {
            super::commitment::signed(&game.meta)
        } else {
            None
        },
        // The clock now; a past version's clock would show time that has since run on.
        clock: if shape.is_current {
            game.state.clock_state(unix_millis())
        } else {
            None
        },
    };
    if shape.narrate {
        super::narration::narrate(game, viewer, &mut [], &mut response.legal_actions);
    }
    response
}
