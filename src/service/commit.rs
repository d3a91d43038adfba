//! The one way an entry gets into a game's log: a player's move (Act), a server table entry
//! (a timeout, an abort, a hand-over to a bot) and a bot's move all commit through
//! [`Tabula::commit`], and everything that follows a commit on this replica is declared once, in
//! [`AFTER_COMMIT`].
//!
//! A commit is one attempt: apply the action to the game at version v (the speculative apply: the
//! one deep copy of the state an entry costs), build the entry from what the apply says (does it
//! end the game, how the turn-clock deadline moves), and append it "if the log is still at v".
//! The outcome is typed ([`Committed`]); each caller keeps only its own policy around it (when a
//! refusal may come from a stale cache, how often to retry, what a lost race means to it).

use std::sync::Arc;

use prost::Message;

use super::cache::{Applied, Game, deadline_change};
use super::error::{ServiceError, ServiceResult};
pub(super) use super::observer::{Commit, EntryObserver, Proposer};
use super::tabula::{MAX_REQUEST_ID_LEN, Tabula};
use crate::games::Seat;
use crate::proto::v1 as pb;
use crate::store::{Append, LogEntry, NewEntry, RetryScope};

/// An entry to commit: who acts, what, and under which request id.
pub(super) struct Proposal<'a> {
    /// Who proposes it.
    pub proposer: Proposer,
    /// The seat the entry is logged for ([`crate::hosting::SYSTEM_SEAT`] for the server).
    pub seat: Seat,
    /// The action.
    pub action: &'a pb::Action,
    /// The request id that makes retries idempotent (empty: none).
    pub request_id: &'a str,
    /// The version its sender proposed it at, when the sender named one (a client's
    /// `expected_version`, a bot's decision, a timeout's clock): a retry is then proposed at the
    /// same version and recognised right after it, without the store indexing the request id
    /// ([`RetryScope`]).
    pub at_version: Option<u64>,
}

impl Proposal<'_> {
    /// How the store recognises a retry of this proposal.
    fn retry_scope(&self) -> RetryScope {
        match self.at_version {
            Some(_) => RetryScope::AtVersion,
            None => RetryScope::AnyVersion,
        }
    }
}

/// What became of one commit attempt. The game passed to [`Tabula::commit`] is updated to match.
#[derive(Debug)]
pub(super) enum Committed {
    /// The entry is in the log: the game is now the game right after it (its `last` holds the
    /// action and what it did), and every effect of [`AFTER_COMMIT`] has run.
    Appended,
    /// The rules refuse the action at the game's version. That version may be stale (a cached
    /// game): whether to catch up and try again is the caller's decision.
    Refused(ServiceError),
    /// The log had moved past the game's version: nothing was appended, and the game has caught
    /// up with the log (the missed entries came with the store's answer, or, for a game that has
    /// left the store, from the archive).
    Overtaken,
    /// The seat's request id was already appended, at `version`: nothing was appended.
    Duplicate {
        /// The version the request id appended.
        version: u64,
    },
}

/// Something that happens on this replica after every entry it commits.
type Effect = fn(&Tabula, &Commit<'_>);

/// The prefix of the request ids of bots' moves, which Act refuses from clients: a bot's move
/// decided at version v is proposed under `tabula-bot:<v>` on every replica, so replicas that
/// decide the same turn append it once between them.
pub const BOT_REQUEST_PREFIX: &str = "tabula-bot:";

/// The request id of a bot's move decided at `version`.
pub(super) fn bot_request_id(version: u64) -> String {
    format!("{BOT_REQUEST_PREFIX}{version}")
}

/// Everything that follows a commit on this replica, in order. A feature that must happen after
/// every append adds one line here, and nowhere else.
const AFTER_COMMIT: [(&str, Effect); 5] = [
    ("count a finished game and a tenant's Act", count_finish),
    (
        "free a finished game's place among its tenant's running games",
        leave_running_games,
    ),
    ("save a snapshot every so many versions", snapshot),
    ("keep the new state in the cache", remember),
    (
        "tell the workers that watch entries (bot seats)",
        tell_observers,
    ),
];

fn count_finish(_: &Tabula, commit: &Commit<'_>) {
    let tenant = commit.game.meta.tenant.as_deref();
    if let Some(tenant) = tenant
        && commit.proposer == Proposer::Player
    {
        crate::metrics::tenant_act(tenant);
    }
    if commit.game.is_finished() {
        crate::metrics::game_finished(commit.game.meta.kind);
        if let Some(tenant) = tenant {
            crate::metrics::tenant_game_finished(tenant);
        }
    }
}

fn leave_running_games(tabula: &Tabula, commit: &Commit<'_>) {
    if commit.game.is_finished()
        && let Some(tenant) = commit.game.meta.tenant.clone()
    {
        let quotas = tabula.quotas.clone();
        let game_id = commit.game.meta.game_id.clone();
        let state = &commit.game.state;
        let bots: Vec<u32> = (0..state.seat_count())
            .filter(|seat| state.is_bot_seat(*seat))
            .collect();
        tokio::spawn(async move {
            if let Err(error) = quotas.game_over(&tenant, &game_id, bots).await {
                // The set keeps the game until a refused creation repairs it (see `quotas.rs`).
                tracing::warn!(%tenant, %game_id, %error, "finished game still counted as running");
            }
        });
    }
}

fn snapshot(tabula: &Tabula, commit: &Commit<'_>) {
    tabula.cache.maybe_snapshot(commit.game);
}

fn remember(tabula: &Tabula, commit: &Commit<'_>) {
    match commit.before {
        // The step is kept too, for a tenant's game (`cache::Cached`).
        Some(before) => tabula.cache.remember_step(before, commit.game.clone()),
        None => tabula.cache.remember(commit.game.clone()),
    }
}

fn tell_observers(tabula: &Tabula, commit: &Commit<'_>) {
    tabula.entry_committed(commit);
}

impl Tabula {
    /// One attempt to commit `proposal` to `game` at `game.version`, stamped with the server time
    /// `now_ms` (see the module docs). `game` is updated to what the outcome says.
    pub(super) async fn commit(
        &self,
        game: &mut Game,
        proposal: &Proposal<'_>,
        now_ms: u64,
    ) -> ServiceResult<Committed> {
        let mut next = game.state.clone_box();
        let events = match next.apply_at(proposal.seat, proposal.action, now_ms) {
            Ok(events) => events,
            Err(error) => return Ok(Committed::Refused(error.into())),
        };
        let action = proposal.action.encode_to_vec();
        // The entry's link in the hash chain, stored with it (see `crate::chain`).
        let link = game.next_link(proposal.seat, now_ms, &action);
        let entry = NewEntry {
            seat: proposal.seat,
            action,
            request_id: proposal.request_id.to_owned(),
            retry: proposal.retry_scope(),
            // The store records the end of a game with the entry that ends it (the game index).
            finishes: next.is_finished(),
            server_time_ms: now_ms,
            head: link.map(|link| link.head),
            deadline: deadline_change(&*game.state, &*next),
        };
        self.mark_for_notifications(
            game.meta.tenant.as_deref(),
            &game.meta.game_id,
            game.version + 1,
        )
        .await?;
        match self.cache.append(game, &entry).await? {
            Append::Appended { version } => {
                let after = Game {
                    meta: game.meta.clone(),
                    state: Arc::from(next),
                    version,
                    head: link.map(|link| link.head),
                    // Kept with the state, so this replica's Observe streams reuse it (no
                    // re-apply).
                    last: Some(Arc::new(Applied {
                        seat: proposal.seat,
                        action: proposal.action.clone(),
                        events,
                        server_time_ms: now_ms,
                        link,
                    })),
                };
                let before = std::mem::replace(game, after);
                let commit = Commit {
                    game,
                    before: Some(&before),
                    proposer: proposal.proposer,
                };
                for (_, effect) in AFTER_COMMIT {
                    effect(self, &commit);
                }
                Ok(Committed::Appended)
            }
            Append::Conflict { current, missing } => {
                game.advance(&missing)?;
                if game.version != current {
                    return Err(ServiceError::Internal(format!(
                        "game {}: the store reports version {current} but sent entries up to {}",
                        game.meta.game_id, game.version
                    )));
                }
                self.cache.remember(game.clone());
                Ok(Committed::Overtaken)
            }
            Append::Duplicate { version } => Ok(Committed::Duplicate { version }),
            Append::UnknownGame => {
                // Retention removed the game since this replica read it (it had finished): it
                // is read again from the archive, never answered from the stale copy.
                *game = self.cache.moved_out(&game.meta.game_id).await?;
                Ok(Committed::Overtaken)
            }
        }
    }

    /// The entry a request id appended at `version`, checked to be the same entry as the one
    /// proposed again (a retry); another entry under the same id is the caller's mistake.
    pub(super) async fn logged_request(
        &self,
        game_id: &str,
        proposal: &Proposal<'_>,
        version: u64,
    ) -> ServiceResult<LogEntry> {
        let entries = self
            .cache
            .entries_after(game_id, version.saturating_sub(1))
            .await?;
        same_request(entries, game_id, proposal, version)
    }
}

/// The entry at `version`, the first of `entries` (the log from there on), checked to be the
/// entry `proposal` would append: a retry of it. Another entry under the same request id is the
/// caller's mistake.
pub(super) fn same_request(
    entries: Vec<LogEntry>,
    game_id: &str,
    proposal: &Proposal<'_>,
    version: u64,
) -> ServiceResult<LogEntry> {
    let logged = entries
        .into_iter()
        .next()
        .filter(|logged| logged.version == version)
        .ok_or_else(|| {
            ServiceError::Internal(format!("game {game_id}: version {version} missing"))
        })?;
    if logged.seat != proposal.seat || logged.action != proposal.action.encode_to_vec() {
        return Err(request_id_reused(proposal, version));
    }
    Ok(logged)
}

/// The refusal of a request id already used, at `version`, for another entry.
fn request_id_reused(proposal: &Proposal<'_>, version: u64) -> ServiceError {
    let whose = match proposal.proposer {
        Proposer::Server => "the server",
        Proposer::Player | Proposer::Bot => "this seat",
    };
    // Bounded echo: request ids are at most MAX_REQUEST_ID_LEN bytes.
    ServiceError::InvalidArgument(format!(
        "request_id {:?} was already used by {whose} for a different action (version \
         {version}); use a new request id for a new action",
        proposal.request_id
    ))
}

/// Refuses a request id longer than [`MAX_REQUEST_ID_LEN`] (every appended entry's request id is
/// stored with it and indexed for retries).
pub(super) fn check_request_id(request_id: &str) -> ServiceResult<()> {
    if request_id.len() > MAX_REQUEST_ID_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "request_id is {} bytes long; the limit is {MAX_REQUEST_ID_LEN} bytes",
            request_id.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_effect_after_a_commit_is_named_once() {
        let mut names: Vec<_> = AFTER_COMMIT.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), AFTER_COMMIT.len());
    }

    #[test]
    fn request_ids_past_the_limit_are_refused_with_the_limit() {
        assert!(check_request_id(&"r".repeat(MAX_REQUEST_ID_LEN)).is_ok());
        let refused = check_request_id(&"r".repeat(MAX_REQUEST_ID_LEN + 1)).expect_err("too long");
        assert!(
            refused
                .to_string()
                .contains(&MAX_REQUEST_ID_LEN.to_string())
        );
    }
}
