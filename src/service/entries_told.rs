//! What a run of entries of a tenant's game tells its turn inbox, event stream and webhooks: the
//! notifications each entry causes, derived from the game's states before and after it
//! (`webhooks::notifications_at`), taken from the cache's steps when it kept them
//! (`cache::Cached`), else from the game's log, read and replayed. The delivery worker
//! (`webhook_delivery.rs`) sends what this module tells.

use super::cache::{Game, GameCache};
use super::error::{ServiceError, ServiceResult};
use super::webhooks::{Notification, notifications_at};
use crate::games::Seat;
use crate::hosting::GameState;
use crate::store::GameMeta;

/// The notifications of versions `from..=current.version` of a game, in version order, and
/// the last of these versions at which a decision on the clock started (the seat to act, or
/// the start of its decision, changed), if any.
pub(super) async fn notifications(
    cache: &GameCache,
    current: &Game,
    from: u64,
) -> ServiceResult<Told> {
    let game_id = current.meta.game_id.as_str();
    let to = current.version;
    let first = from.saturating_sub(1);
    // The common pass: the entries this replica has just committed or followed. The games
    // before and after each are the cache's steps (`cache::Cached`): neither the log is read
    // again nor an entry applied again.
    if let Some(chain) = cache.steps(game_id, first, to) {
        crate::metrics::webhook_pass(true, chain.len().saturating_sub(1));
        return told_by_chain(&chain, from);
    }
    // A pass that lags further than the cache's steps (or runs on a replica that did not
    // step through the entries): the game before them, replayed, and the entries after it.
    let mut game: Game = cache.at_version(game_id, first).await?;
    let entries = cache.entries_after(game_id, game.version).await?;
    let mut chain = Vec::with_capacity(entries.len() + 1);
    for entry in entries.iter().take_while(|entry| entry.version <= to) {
        let before = game.clone();
        game.apply_entry(entry)?;
        chain.push(before);
    }
    chain.push(game);
    crate::metrics::webhook_pass(false, chain.len().saturating_sub(1));
    told_by_chain(&chain, from)
}

/// The decision on the clock in `state`, if one is on it: its deadline (the seat and when) and
/// when it started.
fn decision(state: &dyn GameState) -> Option<((Seat, u64), u64)> {
    state.deadline().zip(state.decision_started_ms())
}

/// The notifications of a run of versions, each with its version, in version order, and the last
/// of these versions at which a decision on the clock started, if any.
type Told = (Vec<(u64, Notification)>, Option<u64>);

/// The notifications of versions `from..` of a game, told from `chain`: the games at every
/// version from `from - 1` (or 0) on, each after the first the one before it with its entry
/// applied (its `last`). With the last of these versions at which a decision on the clock
/// started, if any.
fn told_by_chain(chain: &[Game], from: u64) -> ServiceResult<Told> {
    let mut notifications = Vec::new();
    let mut decision_started = None;
    if from == 0
        && let Some(created) = chain.first()
    {
        // The game's creation: version 0, which has no entry.
        if decision(&*created.state).is_some() {
            decision_started = Some(0);
        }
        let created_at_ms = created.meta.created_at_ms;
        for notification in
            notifications_at(&created.meta, None, &*created.state, None, 0, created_at_ms)
        {
            notifications.push((0, notification));
        }
    }
    for pair in chain.windows(2) {
        let [before, after] = pair else { continue };
        let applied = after.last.as_ref().ok_or_else(|| {
            ServiceError::Internal(format!(
                "game {}: version {} without its entry",
                after.meta.game_id, after.version
            ))
        })?;
        told_by_entry(
            &after.meta,
            &*before.state,
            &*after.state,
            applied.as_ref(),
            after.version,
            &mut notifications,
            &mut decision_started,
        );
    }
    Ok((notifications, decision_started))
}

/// Adds to `notifications` what the entry `applied`, which took the game from `before` to
/// `after` at `version`, tells; and notes `version` in `decision_started` when a decision on the
/// clock started with it.
fn told_by_entry(
    meta: &GameMeta,
    before: &dyn GameState,
    after: &dyn GameState,
    applied: &super::cache::Applied,
    version: u64,
    notifications: &mut Vec<(u64, Notification)>,
    decision_started: &mut Option<u64>,
) {
    let now_deciding = decision(after);
    if now_deciding.is_some() && now_deciding != decision(before) {
        *decision_started = Some(version);
    }
    for notification in notifications_at(
        meta,
        Some(before),
        after,
        Some(&applied.action),
        version,
        applied.server_time_ms,
    ) {
        notifications.push((version, notification));
    }
}
