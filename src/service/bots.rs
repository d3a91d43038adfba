//! The bot workers: how a replica plays the seats of its games that bots play (issue #15).
//!
//! Not an RPC. Bots think off the request path, in a bounded pool: at most
//! [`BotOptions::threads`] decisions run at once on this replica (a semaphore in front of
//! `spawn_blocking`), each cut short at [`BotOptions::think_time`], so a human's Act never waits
//! for a bot and a replica's CPU spent on bots is capped by the pool size.
//!
//! # Who plays a bot's turn
//!
//! - **The appender.** The replica that appended the entry after which a bot seat must act (a
//!   human's Act, a bot's own move, a table entry, or the creation of a game whose first seat is a
//!   bot) records the turn as pending in the store ([`BotTurnQueue::mark_bot_turn`], in the background:
//!   never on the Act's path) and plays it at once.
//! - **The followers.** A replica that follows the game for Observe streams learns of each entry
//!   from the same notifications and wakes its workers too ([`EntryObserver::followed`]).
//! - **The sweep.** A turn still pending [`BotOptions::grace`] after it was recorded (its replica
//!   died, or had no bot threads) is claimed by whichever replica sweeps first
//!   ([`BotTurnQueue::claim_due_bot_turns`], every second), so a bot seat never stalls.
//!
//! All of them may try the same turn; they append through the ordinary conditional append, at
//! the version the bot decided at and with the request id `tabula-bot:<version>` (request ids
//! are the seat's: no human has this seat, and Act refuses that prefix), so exactly one move is
//! appended: the others find the log moved on (or their request id used) and drop theirs.
//!
//! A decision's randomness comes from SHA-256 of the game's seed, the version and the seat: two
//! replicas deciding the same turn with the iteration budget alone decide the same move, and the
//! bot still reads the game only through its seat's information set (see [`crate::bots`]).
//!
//! The workers build on the core: they hold the replica's [`Tabula`] (weakly: the core holds
//! them as its [`EntryObserver`]s) and commit through its one commit path.
//!
//! [`BotTurnQueue::mark_bot_turn`]: crate::store::BotTurnQueue::mark_bot_turn
//! [`BotTurnQueue::claim_due_bot_turns`]: crate::store::BotTurnQueue::claim_due_bot_turns

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use super::cache::Game;
use super::commit::{Commit, Committed, EntryObserver, Proposal, Proposer, bot_request_id};
use super::error::{ServiceError, ServiceResult};
use super::options::BotOptions;
use super::stop::StopSignal;
use super::tabula::Tabula;
use crate::games::{Seat, Seed};
use crate::outage::{OUTAGE_REPORT_EVERY, Outage, OutageReport};
use crate::store::{BotTurn, unix_millis};

/// The most games a replica queues for its bot workers; more wait in the store's pending turns
/// for the sweep (each queued game is one small task, but their number must not be unbounded).
const MAX_QUEUED_GAMES: usize = 4096;

/// The most pending turns one sweep claims.
const SWEEP_BATCH: usize = 64;

/// How often a replica sweeps the pending bot turns.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The most moves in a row one wake-up plays for a game (an all-bot game plays itself in chunks
/// of this many; the next chunk is picked up by the sweep or the next wake-up).
const MAX_MOVES_PER_WAKE: usize = 100_000;

/// This replica's bot workers: the pool's permits and the games being played.
pub(super) struct BotWorkers {
    /// The replica's core, which holds these workers as an [`EntryObserver`] (hence weak).
    tabula: Weak<Tabula>,
    /// The `Arc` these workers live in, for the tasks they start.
    me: Weak<BotWorkers>,
    options: BotOptions,
    permits: Arc<Semaphore>,
    /// Games a task is playing → whether it was woken again meanwhile (then it looks again).
    playing: Mutex<HashMap<String, bool>>,
}

impl BotWorkers {
    /// The bot workers of `tabula`'s replica, as its options say (they play nothing until told
    /// of an entry: see [`Workers::start`](super::workers::Workers::start)).
    pub(super) fn new(tabula: &Arc<Tabula>) -> Arc<Self> {
        let options = tabula.options().bots.clone();
        Arc::new_cyclic(|me| BotWorkers {
            tabula: Arc::downgrade(tabula),
            me: me.clone(),
            permits: Arc::new(Semaphore::new(options.threads)),
            options,
            playing: Mutex::default(),
        })
    }

    /// Takes `game_id` on: false when a task already plays it (it is told to look again) or
    /// the queue is full.
    fn start(&self, game_id: &str) -> bool {
        let mut playing = self.playing.lock();
        if let Some(again) = playing.get_mut(game_id) {
            *again = true;
            return false;
        }
        if playing.len() >= MAX_QUEUED_GAMES {
            return false;
        }
        playing.insert(game_id.to_owned(), false);
        true
    }

    /// Whether the task playing `game_id` should look again (else it is done, and forgotten).
    fn again(&self, game_id: &str) -> bool {
        let mut playing = self.playing.lock();
        match playing.get_mut(game_id) {
            Some(again) if *again => {
                *again = false;
                true
            }
            _ => {
                playing.remove(game_id);
                false
            }
        }
    }
}

/// The seed of the bot decision at `version` for `seat`: from the game's seed, so replicas agree.
fn decision_seed(game_seed: &Seed, version: u64, seat: Seat) -> Seed {
    let mut hasher = Sha256::new();
    hasher.update(b"tabula-bot-decision/1");
    hasher.update(game_seed.0);
    hasher.update(version.to_be_bytes());
    hasher.update(seat.to_be_bytes());
    Seed(hasher.finalize().into())
}

/// What became of one bot decision.
enum Played {
    /// The move is in the log; the game after it.
    Appended(Game),
    /// The log had moved on (another replica played the turn, or a table entry came first).
    Overtaken,
}

impl EntryObserver for BotWorkers {
    /// After this replica appended the entry that led to the game (or created it): if a bot seat
    /// must act now, records the turn in the store (so any replica plays it should this one die)
    /// and plays it. The bot worker that committed a bot's move records the next turn itself,
    /// before it clears the one it played (so a pending turn always names the game).
    fn committed(&self, commit: &Commit<'_>) {
        if commit.proposer == Proposer::Bot || commit.game.state.bot_to_act(None).is_none() {
            return;
        }
        let Some(workers) = self.me.upgrade() else {
            return;
        };
        let turn = BotTurn {
            game_id: commit.game.meta.game_id.clone(),
            version: commit.game.version,
        };
        tokio::spawn(async move {
            workers.mark_turn(&turn).await;
            workers.play_bots(turn.game_id);
        });
    }

    /// Wakes the workers for the game if a bot seat must act in it (the appending replica has
    /// already recorded the turn).
    fn followed(&self, game: &Game) {
        if game.state.bot_to_act(None).is_some() {
            self.play_bots(game.meta.game_id.clone());
        }
    }
}

impl BotWorkers {
    async fn mark_turn(&self, turn: &BotTurn) {
        let due = unix_millis() + self.options.grace().as_millis() as u64;
        let Some(tabula) = self.tabula.upgrade() else {
            return;
        };
        if let Err(error) = tabula.bot_turns.mark_bot_turn(turn, due).await {
            // The appender still plays it; only the fallback is missing.
            tracing::warn!(game_id = %turn.game_id, %error, "bot turn not recorded");
        }
    }

    async fn clear_turn(&self, turn: &BotTurn) {
        let Some(tabula) = self.tabula.upgrade() else {
            return;
        };
        if let Err(error) = tabula.bot_turns.clear_bot_turn(turn).await {
            // Harmless: the sweep finds the turn played and clears it later.
            tracing::warn!(game_id = %turn.game_id, %error, "bot turn not cleared");
        }
    }

    /// Plays the bot seats of `game_id` on this replica, in the background, until a human seat
    /// must act or the game ends. At most one task per game per replica.
    fn play_bots(&self, game_id: String) {
        if self.options.threads == 0 || !self.start(&game_id) {
            return;
        }
        let Some(workers) = self.me.upgrade() else {
            self.again(&game_id);
            return;
        };
        tokio::spawn(async move {
            loop {
                if let Err(error) = workers.play_game(&game_id).await {
                    // The turn stays pending in the store: the sweep tries again later.
                    tracing::warn!(%game_id, %error, "bot move not played");
                }
                if !workers.again(&game_id) {
                    break;
                }
            }
        });
    }

    /// The replica's core, unless it is gone (the replica is shutting down).
    fn core(&self) -> ServiceResult<Arc<Tabula>> {
        self.tabula
            .upgrade()
            .ok_or_else(|| ServiceError::Internal("the replica is shutting down".into()))
    }

    async fn play_game(&self, game_id: &str) -> ServiceResult<()> {
        let tabula = self.core()?;
        let mut game = tabula.cache.current(game_id).await?;
        for _ in 0..MAX_MOVES_PER_WAKE {
            let Some((seat, mut bot)) = game.state.bot_to_act(Some(self.options.think_time)) else {
                return Ok(());
            };
            // A searching bot's thinking counts in its game's tenant's quota (see `quotas.rs`):
            // past it, the bot still moves, with what is left of the budget.
            let tenant = game.meta.tenant.clone();
            if let Some(tenant) = &tenant
                && matches!(bot, crate::bots::Bot::Search(_))
                && let Some(limit) = tabula.tenants.limits(tenant).bot_think_ms_per_minute
            {
                let budget = tabula
                    .quotas
                    .bot_budget(tenant, self.options.think_time, limit)
                    .await?;
                if let Some((_, limited)) = game.state.bot_to_act(Some(budget)) {
                    bot = limited;
                }
            }
            let turn = BotTurn {
                game_id: game_id.to_owned(),
                version: game.version,
            };
            let permit = self
                .permits
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| ServiceError::Internal("the bot pool is closed".into()))?;
            let state = game.state.clone();
            let seed = decision_seed(&game.meta.seed, game.version, seat);
            let started = std::time::Instant::now();
            let decided = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                state.bot_action(seat, &bot, &seed)
            })
            .await
            .map_err(|e| ServiceError::Internal(format!("a bot decision panicked: {e}")))?;
            let action = decided.map_err(|e| {
                ServiceError::Internal(format!("game {game_id}: the bot of seat {seat}: {e}"))
            })?;
            tracing::debug!(%game_id, seat, version = game.version, thought = ?started.elapsed(), "bot decided");
            if let Some(tenant) = &tenant {
                crate::metrics::tenant_bot_time(tenant, started.elapsed());
            }
            match append_bot_move(&tabula, &game, seat, action).await? {
                Played::Appended(next) => {
                    // The next turn is recorded before this one is forgotten: a bot turn is
                    // always pending somewhere until a human must act.
                    if next.state.bot_to_act(None).is_some() {
                        self.mark_turn(&BotTurn {
                            game_id: game_id.to_owned(),
                            version: next.version,
                        })
                        .await;
                    }
                    self.clear_turn(&turn).await;
                    game = next;
                }
                Played::Overtaken => {
                    self.clear_turn(&turn).await;
                    game = tabula.cache.current(game_id).await?;
                }
            }
        }
        Ok(())
    }

    /// Claims the bot turns due in the store and plays them, every second, until told to stop
    /// (see `workers.rs`). A replica without bot threads does not sweep: the others do.
    pub(super) async fn sweep_bot_turns(self: Arc<Self>, mut stop: StopSignal) {
        if self.options.threads == 0 {
            return;
        }
        let grace = self.options.grace().as_millis() as u64;
        // While the store is down every sweep fails: log the streak's changes, not each sweep.
        let mut outage = Outage::default();
        while stop.pause(SWEEP_EVERY).await {
            let Ok(tabula) = self.core() else {
                return;
            };
            let now = unix_millis();
            let claimed = match tabula
                .bot_turns
                .claim_due_bot_turns(now, now + grace, SWEEP_BATCH)
                .await
            {
                Ok(claimed) => {
                    if let Some(OutageReport::BackUp { down_for, failures }) =
                        outage.success(Instant::now())
                    {
                        tracing::info!(
                            failures,
                            "bot-turn sweeps work again after {down_for:.1?}; {failures} failed \
                             meanwhile"
                        );
                    }
                    claimed
                }
                Err(error) => {
                    match outage.failure(Instant::now()) {
                        Some(OutageReport::Down) => tracing::warn!(
                            %error,
                            "bot turns not swept; retried every second, logged again every {}s \
                             while sweeps fail",
                            OUTAGE_REPORT_EVERY.as_secs()
                        ),
                        Some(OutageReport::StillDown { down_for, failures }) => tracing::warn!(
                            %error,
                            failures,
                            "bot-turn sweeps still failing after {down_for:.1?}: {failures} \
                             failed so far"
                        ),
                        _ => tracing::debug!(%error, "bot turns not swept"),
                    }
                    continue;
                }
            };
            for turn in claimed {
                self.settle_swept(turn).await;
            }
        }
    }

    /// A swept turn: played here if the game still waits for it, forgotten if it is over.
    async fn settle_swept(&self, turn: BotTurn) {
        let Ok(tabula) = self.core() else {
            return;
        };
        let game = match tabula.cache.current(&turn.game_id).await {
            Ok(game) => game,
            Err(ServiceError::NotFound(_)) => {
                self.clear_turn(&turn).await;
                return;
            }
            Err(error) => {
                tracing::warn!(game_id = %turn.game_id, %error, "swept bot turn not loaded");
                return;
            }
        };
        if game.version == turn.version && game.state.bot_to_act(None).is_some() {
            tracing::info!(game_id = %turn.game_id, version = turn.version, "playing a swept bot turn");
            self.play_bots(turn.game_id);
        } else {
            // Played already, or a recorded turn whose append never landed (it is past its
            // grace): nothing waits for it.
            self.clear_turn(&turn).await;
        }
    }
}

/// Commits `seat`'s move if the log is still at `game.version`.
async fn append_bot_move(
    tabula: &Tabula,
    game: &Game,
    seat: Seat,
    action: crate::proto::v1::Action,
) -> ServiceResult<Played> {
    let request_id = bot_request_id(game.version);
    let proposal = Proposal {
        proposer: Proposer::Bot,
        seat,
        action: &action,
        request_id: &request_id,
        at_version: Some(game.version),
    };
    let mut next = game.clone();
    // Stamped with the server's time like any move, for the turn clock (never read by rules).
    match tabula.commit(&mut next, &proposal, unix_millis()).await? {
        Committed::Appended => Ok(Played::Appended(next)),
        Committed::Refused(error) => Err(ServiceError::Internal(format!(
            "game {}: the engine refused the bot's move at version {}: {error}",
            game.meta.game_id, game.version
        ))),
        Committed::Overtaken | Committed::Duplicate { .. } => Ok(Played::Overtaken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_seeds_differ_by_version_and_seat_and_repeat() {
        let seed = Seed::from_u64(7);
        assert_eq!(decision_seed(&seed, 3, 1), decision_seed(&seed, 3, 1));
        assert_ne!(decision_seed(&seed, 3, 1), decision_seed(&seed, 4, 1));
        assert_ne!(decision_seed(&seed, 3, 1), decision_seed(&seed, 3, 2));
        assert_ne!(decision_seed(&seed, 3, 1), seed);
    }

    #[test]
    fn the_grace_covers_two_decisions() {
        let options = BotOptions {
            threads: 1,
            think_time: Duration::from_millis(500),
        };
        assert!(options.grace() > options.think_time * 2);
    }
}
