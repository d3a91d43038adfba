//! The shared core of the service: a replica's [`Tabula`] (the game cache and the parts of the
//! store, each handed only to what uses it, and the service's settings), and the checks every
//! entry point shares. The RPC handlers (one file each), the server's own entries
//! (`table_entry.rs`) and the background workers (`workers.rs`) build on it; it imports none of
//! them but the bot workers' state it holds for the commit path (see `commit.rs`).

use std::sync::Arc;

use super::bots::{self, BotOptions};
use super::cache::GameCache;
use super::error::{self, ServiceError, ServiceResult};
use super::operator::OperatorOptions;
use super::retention::RetentionOptions;
use super::sweeper::SweeperOptions;
use crate::store::{BotTurnQueue, DeadlineSchedule, GameListing, RetentionIndex, Store};

/// Service settings that are not about the store.
#[derive(Clone, Debug)]
pub struct ServiceOptions {
    /// Accept client-chosen seeds in CreateGame (tests, reproducible tournaments).
    pub allow_client_seed: bool,
    /// How many games this replica keeps rebuilt in memory.
    pub cache_capacity: usize,
    /// Store a snapshot every this many versions (0: never).
    pub snapshot_every: u64,
    /// The operator's token and what it guards; `None`: no operator API (`AdminService` is not
    /// served) and anyone may create games.
    pub operator: Option<OperatorOptions>,
    /// How this replica plays bot seats (see `bots.rs`).
    pub bots: BotOptions,
    /// Where finished games go before they leave the store, and where the service reads games
    /// the store no longer has (`--archive`); `None`: no archive.
    pub archive: Option<Arc<crate::archive::Archive>>,
    /// The retention task `serve` starts (see [`retention`]); `None`: no task (tests and
    /// benchmarks that run passes themselves).
    pub retention: Option<RetentionOptions>,
    /// How this replica sweeps for expired turn clocks (see [`sweeper`]).
    pub sweeper: SweeperOptions,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        ServiceOptions {
            allow_client_seed: false,
            cache_capacity: 10_000,
            snapshot_every: 64,
            operator: None,
            bots: BotOptions::default(),
            archive: None,
            retention: None,
            sweeper: SweeperOptions::default(),
        }
    }
}

/// Shared by every request on this replica: the game cache (and through it the store) and the
/// service's settings.
pub struct Tabula {
    /// The games, through the store's logs: what every RPC on a game reads and appends to.
    pub(super) cache: GameCache,
    /// The game index, for the operator's listings.
    pub(super) listing: Arc<dyn GameListing>,
    /// The deadline index of clocked games (creation indexes a game's first deadline; the
    /// sweeper reads and corrects it).
    pub(super) deadlines: Arc<dyn DeadlineSchedule>,
    /// The pending bot turns.
    pub(super) bot_turns: Arc<dyn BotTurnQueue>,
    /// What retention reads and removes.
    pub(super) retained: Arc<dyn RetentionIndex>,
    pub(super) options: ServiceOptions,
    /// This replica's bot workers.
    pub(super) bots: bots::BotWorkers,
    /// The `Arc` this replica's service lives in, for the background tasks it starts.
    pub(super) me: std::sync::Weak<Tabula>,
    /// Log replays (VerifyLog, ReplayLog) running at once: one per core. Each holds a request of
    /// up to the size limit and a blocking thread, so callers cannot make the replica hold more.
    pub(super) replays: tokio::sync::Semaphore,
}

impl Tabula {
    /// A replica's service over `store`, each part of which goes only to what uses it.
    pub fn new(store: Arc<dyn Store>, options: ServiceOptions) -> Arc<Self> {
        let cache = GameCache::new(
            store.clone(),
            options.cache_capacity,
            options.snapshot_every,
        )
        .with_archive(options.archive.clone());
        let bots = bots::BotWorkers::new(options.bots.clone());
        Arc::new_cyclic(|me| Tabula {
            cache,
            listing: store.clone(),
            deadlines: store.clone(),
            bot_turns: store.clone(),
            retained: store,
            options,
            bots,
            me: me.clone(),
            replays: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get),
            ),
        })
    }

    /// The service's settings.
    pub fn options(&self) -> &ServiceOptions {
        &self.options
    }
}

/// The longest game id the service accepts (ids it generates are 32 hex digits).
pub const MAX_GAME_ID_LEN: usize = 64;
/// The longest request id the service accepts.
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// Whether `game_id` has the form of a game id: 1 to [`MAX_GAME_ID_LEN`] ASCII letters, digits,
/// `-` or `_`.
pub(crate) fn is_game_id(game_id: &str) -> bool {
    !game_id.is_empty()
        && game_id.len() <= MAX_GAME_ID_LEN
        && game_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Game ids are generated by the server; anything else is refused before it reaches the store
/// (ids become Redis keys, so a stray `}` must never get that far). The refusal quotes at most
/// the start of what was sent: a client's input is never echoed unbounded.
pub(super) fn check_game_id(game_id: &str) -> ServiceResult<()> {
    if is_game_id(game_id) {
        Ok(())
    } else {
        Err(ServiceError::InvalidArgument(format!(
            "game_id {} is not a game id (1–{MAX_GAME_ID_LEN} letters, digits, '-' or '_')",
            error::quote(game_id)
        )))
    }
}

impl Tabula {
    /// Runs the log replay `work` on the blocking pool, in the caller's span: re-executing a log
    /// of up to the request size limit takes milliseconds of CPU, which must not stall the async
    /// workers that carry every other call and stream. At most one replay per core runs at once;
    /// past that the call is refused at once (RESOURCE_EXHAUSTED) rather than queued.
    pub(super) async fn replay_off_the_workers<T, Work>(&self, work: Work) -> ServiceResult<T>
    where
        T: Send + 'static,
        Work: FnOnce() -> ServiceResult<T> + Send + 'static,
    {
        let Ok(_permit) = self.replays.try_acquire() else {
            return Err(ServiceError::Busy(
                "this replica is replaying as many logs as it has cores; retry shortly".into(),
            ));
        };
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || span.in_scope(work))
            .await
            .map_err(|error| ServiceError::Internal(format!("the replay stopped: {error}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    #[tokio::test]
    async fn replays_past_one_per_core_are_refused_at_once_not_queued() {
        let tabula = Tabula::new(Arc::new(MemoryStore::new()), ServiceOptions::default());
        let cores = u32::try_from(tabula.replays.available_permits()).expect("a few cores");
        let running = tabula
            .replays
            .try_acquire_many(cores)
            .expect("every permit");
        let refused = tabula
            .replay_off_the_workers(|| Ok(()))
            .await
            .expect_err("every core is replaying");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused}");
        drop(running);
        let replayed = tabula.replay_off_the_workers(|| Ok(7)).await;
        assert_eq!(replayed.expect("a core is free again"), 7);
    }
}
