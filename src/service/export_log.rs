//! `ExportLog`: the game's log as the caller may see it. While the game runs: the opening events,
//! the actions and events redacted for the caller, and no seed. Once it has ended, everything is
//! public: the full actions and events and the seed, so anyone can re-execute the log
//! (`VerifyLog`, `tabula verify`).

use tonic::metadata::MetadataMap;

use super::delay::SpectatorDelay;
use super::error::ServiceResult;
use super::game_log::game_log;
use super::players;
use super::tabula::{Tabula, check_game_id};
use crate::games::Viewer;
use crate::proto::v1 as pb;
use crate::store::unix_millis;

pub(super) async fn export_log(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::ExportLogRequest,
) -> ServiceResult<pb::ExportLogResponse> {
    check_game_id(&request.game_id)?;
    // Who asks is settled on the game as this replica holds it (usually cached) before the whole
    // log is read: a caller refused (another tenant's key, a wrong token) never makes the replica
    // read a log.
    let current = tabula.cache.current(&request.game_id).await?;
    let viewer = tabula.viewer_of(&current, metadata).await?;
    let (game, mut entries) = tabula.cache.history(&request.game_id).await?;
    // A delayed spectator gets the log up to the version it may see (`delay.rs`), while the game
    // runs.
    if viewer == Viewer::Spectator
        && let Some(delay) = SpectatorDelay::for_viewer(&current, viewer)
    {
        let now = unix_millis();
        let last = entries.len();
        let shown = entries
            .iter()
            .enumerate()
            .rev()
            .find(|(index, entry)| delay.shows(entry, (last - 1 - index) as u64, now))
            .map_or(0, |(index, _)| index + 1);
        entries.truncate(shown);
    }
    // Sentences are written from the events as the log shows them to this viewer.
    let narrator = request.narrate.then(|| {
        (
            game.state.clone(),
            game.state
                .names(&players::of_game(&game.meta, &*game.state)),
        )
    });
    let mut log = game_log(game, &entries, viewer, &tabula.signing)?;
    if let Some((state, names)) = narrator {
        let events = log.opening_events.iter_mut().chain(
            log.entries
                .iter_mut()
                .flat_map(|entry| entry.events.iter_mut()),
        );
        for event in events {
            event.text = state.event_text(event, &names).unwrap_or_default();
        }
    }
    Ok(pb::ExportLogResponse { log: Some(log) })
}
