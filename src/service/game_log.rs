//! A game's log as one viewer may see it: what `ExportLog` (the caller's view) and
//! `ExportLogUnredacted` (all the seats' view) send. The log stores actions only; the events come
//! from replaying it, and what the viewer may see of both depends on whether the game has ended
//! ([`Disclosure`]).

use super::cache::{Game, decode_config};
use super::disclosure::Disclosure;
use super::error::ServiceResult;
use super::players;
use super::verify::seed_commitment;
use crate::games::Viewer;
use crate::hosting::SYSTEM_SEAT;
use crate::proto::v1 as pb;
use crate::signing::SigningKeys;
use crate::store::LogEntry;

/// The log of `game` (its state at version 0) made of `entries`, as `viewer` may see it; a
/// finished game's final head signed with `signing`.
pub(super) fn game_log(
    mut game: Game,
    entries: &[LogEntry],
    viewer: Viewer,
    signing: &SigningKeys,
) -> ServiceResult<pb::GameLog> {
    let opening = game.state.opening_events();

    // Replay to recover each entry's events (the log stores actions only). What the caller may see
    // depends on whether the game has ended, known only once the whole log is replayed.
    let mut replayed = Vec::with_capacity(entries.len());
    for entry in entries {
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
            // Public while the game runs too: the commitment is keyed with the secret seed.
            action_commitment: applied
                .link
                .map(|link| link.action_commitment.to_vec())
                .unwrap_or_default(),
            head: applied
                .link
                .map(|link| link.head.to_vec())
                .unwrap_or_default(),
        })
        .collect();
    let meta = &game.meta;
    Ok(pb::GameLog {
        game_id: meta.game_id.clone(),
        game: meta.kind as i32,
        rules_version: meta.rules_version.clone(),
        config: Some(decode_config(meta)?),
        seed_commitment: seed_commitment(&meta.seed).to_vec(),
        // The seed is the RNG's whole future: no viewer gets it before the end, not even
        // `Viewer::AllSeats`.
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
        signed_commitment: super::commitment::signed(meta),
        // Signed when a finished game's log is exported: Ed25519 signatures are deterministic, so
        // every export under one key carries the same bytes, and nothing is stored for it.
        signed_final_head: match game.head {
            Some(head) if complete => Some(super::commitment::sign_final_head(
                signing,
                &meta.game_id,
                game.version,
                &head,
            )),
            _ => None,
        },
    })
}
