//! How a game comes to be, whoever asks for it (CreateGame, a rematch): signed, indexed, counted
//! in its tenant's quotas, stored, and told to the workers.

use super::commit::{Commit, Proposer};
use super::error::{ServiceError, ServiceResult};
use super::tabula::Tabula;
use crate::proto::v1 as pb;
use crate::store::GameMeta;

/// Signs, indexes and stores a new game, counting it in its tenant's quotas, and tells the workers
/// of it: the one way a game comes to be (CreateGame, a rematch). `state` is the game right after
/// setup under `meta`'s config and seed. The meta's commitment is signed here.
pub(super) async fn store_new_game(
    tabula: &Tabula,
    mut meta: GameMeta,
    mut state: Box<dyn crate::hosting::GameState>,
) -> ServiceResult<super::cache::Game> {
    let game_id = meta.game_id.clone();
    meta.signed_commitment = super::commitment::sign(&tabula.signing, &meta, state.seat_count());
    state.start_clock(meta.created_at_ms);
    // Indexed before the game exists, so a game never runs unindexed (see the stores).
    if let Some((_, deadline_ms)) = state.deadline() {
        tabula
            .deadlines
            .set_deadline(&meta.game_id, 0, Some(deadline_ms))
            .await?;
    }
    // A tenant's quotas (see `quotas.rs`): its creations per minute, then its running games,
    // which this game joins now and leaves when it finishes (or if it is never stored).
    let game = if let Some(tenant) = meta.tenant.clone() {
        let limits = tabula.tenants.limits(&tenant);
        if let Some(limit) = limits.games_per_minute {
            tabula.quotas.admit_creation(&tenant, limit).await?;
        }
        tabula
            .quotas
            .admit_active_game(
                &tenant,
                &game_id,
                limits.active_games.unwrap_or(u64::MAX),
                |id| async move { tabula.is_running(&id).await },
            )
            .await?;
        let bots: Vec<u32> = (0..state.seat_count())
            .filter(|seat| state.is_bot_seat(*seat))
            .collect();
        let mut admitted = Ok(());
        for seat in &bots {
            admitted = tabula
                .quotas
                .admit_bot_seat(
                    &tenant,
                    &game_id,
                    *seat,
                    limits.bot_seats.unwrap_or(u64::MAX),
                    |id| async move { tabula.is_running(&id).await },
                )
                .await;
            if admitted.is_err() {
                break;
            }
        }
        let created = match admitted {
            Ok(()) => match tabula
                .mark_for_notifications(Some(&tenant), &game_id, 0)
                .await
            {
                Ok(()) => tabula.cache.create(meta, state).await,
                Err(error) => Err(error),
            },
            Err(refused) => Err(refused),
        };
        // A game never stored leaves the quotas; one whose id was taken is another's (a
        // rematch two seats created at once), which stays counted.
        let taken = matches!(
            created,
            Err(ServiceError::Store(
                crate::store::StoreError::AlreadyExists(_)
            ))
        );
        if created.is_err()
            && !taken
            && let Err(error) = tabula.quotas.game_over(&tenant, &game_id, bots).await
        {
            tracing::warn!(%error, "a game never stored stays counted until the next repair");
        }
        let game = created?;
        crate::metrics::tenant_game_created(&tenant);
        game
    } else {
        tabula.cache.create(meta, state).await?
    };
    tabula.entry_committed(&Commit {
        game: &game,
        before: None,
        proposer: Proposer::Server,
    });
    Ok(game)
}

/// Refuses a game whose table uses what 1.0.0 replicas cannot serve while the store may still
/// have them (layout 1, docs/compatibility.md): a 1.0.0 replica could not replay a join or an
/// undo, would let named seats play before the open ones are taken, and would show spectators a
/// delayed game live.
pub(super) fn check_releases(tabula: &Tabula, config: &pb::GameConfig) -> ServiceResult<()> {
    let Some(table) = &config.table else {
        return Ok(());
    };
    let feature = if !table.open_seats.is_empty() {
        "open seats"
    } else if table.undo != 0 {
        "an undo policy"
    } else if table.spectator_delay.is_some() {
        "a spectator delay"
    } else {
        return Ok(());
    };
    if tabula.cache.serves_only_current_releases() {
        return Ok(());
    }
    Err(ServiceError::FailedPrecondition(format!(
        "{feature} needs every replica at release 1.1.0 or later: this store still admits 1.0.0 \
         replicas (layout 1); the operator runs `tabula upgrade-store` once none runs"
    )))
}
