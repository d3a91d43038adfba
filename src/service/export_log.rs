//! `ExportLog`: the game's log as the caller may see it. While the game runs: the opening events,
//! the actions and events redacted for the caller, and no seed. Once it has ended, everything is
//! public: the full actions and events and the seed, so anyone can re-execute the log
//! (`VerifyLog`, `tabula verify`).

use tonic::metadata::MetadataMap;

use super::cache::decode_config;
use super::disclosure::Disclosure;
use super::error::ServiceResult;
use super::players;
use super::tabula::{Tabula, check_game_id};
use super::verify::seed_commitment;
use crate::hosting::SYSTEM_SEAT;
use crate::proto::v1 as pb;

pub(super) async fn export_log(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::ExportLogRequest,
) -> ServiceResult<pb::ExportLogResponse> {
    check_game_id(&request.game_id)?;
    let (mut game, entries) = tabula.cache.history(&request.game_id).await?;
    let viewer = tabula.tenants.viewer(&game.meta, metadata)?;
    let opening = game.state.opening_events();

    // Replay to recover each entry's events (the log stores actions only). What the caller may see
    // depends on whether the game has ended, known only once the whole log is replayed.
    let mut replayed = Vec::with_capacity(entries.len());
    for entry in &entries {
        let applied = game.apply_entry(entry)?;
        replayed.push((entry, applied));
    }
    let complete = game.is_finished();
    tracing::Span::current().record("version", game.version);
    let disclosure = Disclosure::with_end(viewer, complete);
    let log_entries = replayed
        .into_iter()
        .map(|(entry, applied)| pb::LogEntry {
            version: entry.version,
            seat: entry.seat,
            action: Some(disclosure.action(&game, entry.seat, &applied.action)),
            request_id: entry.request_id.clone(),
            events: disclosure.events(&game, &applied.events),
            system: entry.seat == SYSTEM_SEAT,
            server_time_ms: entry.server_time_ms,
        })
        .collect();
    let meta = &game.meta;
    Ok(pb::ExportLogResponse {
        log: Some(pb::GameLog {
            game_id: meta.game_id.clone(),
            game: meta.kind as i32,
            rules_version: meta.rules_version.clone(),
            config: Some(decode_config(meta)?),
            seed_commitment: seed_commitment(&meta.seed).to_vec(),
            seed: if complete {
                meta.seed.0.to_vec()
            } else {
                Vec::new()
            },
            opening_events: disclosure.events(&game, &opening),
            entries: log_entries,
            complete,
            players: players::to_proto(&meta.players),
            created_by: meta.created_by.clone(),
        }),
    })
}
