//! `ExportLog`: the game's log as the caller may see it. While the game runs: the actions, the
//! events redacted for the caller, and no seed. Once it has ended, everything is public: the full
//! events and the seed, so anyone can re-execute the log (`VerifyLog`, `tabula verify`).

use tonic::metadata::MetadataMap;

use super::create_game::seed_commitment;
use super::games::{Game, decode_action, decode_config, initial_state};
use super::{ServiceResult, Tabula, auth, check_game_id};
use crate::proto::v1 as pb;

pub(super) async fn export_log(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::ExportLogRequest,
) -> ServiceResult<pb::ExportLogResponse> {
    check_game_id(&request.game_id)?;
    let (latest, _) = tabula.games.get(&request.game_id).await?;
    let viewer = auth::viewer(&latest.meta, metadata)?;
    let meta = latest.meta.clone();
    let entries = tabula.games.store().entries_after(&meta.game_id, 0).await?;

    // Replay to recover each entry's events: the log stores actions only.
    let mut game = Game {
        meta: meta.clone(),
        state: initial_state(&meta)?,
        version: 0,
    };
    let mut replayed = Vec::with_capacity(entries.len());
    for entry in &entries {
        let events = game.apply_entry(entry)?;
        replayed.push((entry, events));
    }
    let complete = game.state.is_finished();
    tracing::Span::current().record("version", game.version);
    let log_entries = replayed
        .into_iter()
        .map(|(entry, events)| {
            Ok(pb::LogEntry {
                version: entry.version,
                seat: entry.seat,
                action: Some(decode_action(&entry.action)?),
                request_id: entry.request_id.clone(),
                events: if complete {
                    events
                } else {
                    game.state.redact(&events, viewer)
                },
            })
        })
        .collect::<ServiceResult<Vec<_>>>()?;
    Ok(pb::ExportLogResponse {
        log: Some(pb::GameLog {
            game_id: meta.game_id.clone(),
            game: meta.kind,
            rules_version: meta.rules_version.clone(),
            config: Some(decode_config(&meta)?),
            seed_commitment: seed_commitment(&meta.seed).to_vec(),
            seed: if complete {
                meta.seed.0.to_vec()
            } else {
                Vec::new()
            },
            entries: log_entries,
            complete,
        }),
    })
}
