//! The shared core of the service: a replica's [`Tabula`] (the game cache and the parts of the
//! store, each handed only to what uses it, and the service's settings), and the checks every
//! entry point shares. The RPC handlers (one file each), the server's own entries
//! (`table_entry.rs`) and the background workers (`workers.rs`) build on it; it imports none of
//! them: the workers that act on new entries register with it as [`EntryObserver`]s.

use std::sync::Arc;

use super::cache::{Game, GameCache};
use super::error::{self, ServiceError, ServiceResult};
use super::observer::{Commit, EntryObserver};
use super::options::ServiceOptions;
use crate::store::{BotTurnQueue, DeadlineSchedule, GameListing, RetentionIndex, Store};

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
    /// The tenants and their API keys (see `tenants.rs`).
    pub(super) tenants: Arc<super::tenants::Tenants>,
    /// The tenants' quota counting (see `quotas.rs`).
    pub(super) quotas: Arc<super::quotas::Quotas>,
    /// Which games have notifications to deliver (see `webhooks.rs`).
    pub(super) outbox: Arc<dyn crate::store::WebhookOutbox>,
    /// The games waiting for each tenant's players.
    pub(super) inbox: Arc<dyn crate::store::TurnInbox>,
    /// Each tenant's stream of notifications.
    pub(super) events: Arc<dyn crate::store::TenantEvents>,
    /// How this replica calls webhooks.
    pub(super) webhook_sender: Arc<super::webhooks::WebhookSender>,
    /// What signs the games' commitments, and the public keys published.
    pub(super) signing: Arc<crate::signing::SigningKeys>,
    pub(super) options: ServiceOptions,
    /// The workers told of every new entry (see [`EntryObserver`]); set once, when the workers
    /// start (a core without workers, as some tests build, tells nobody).
    observers: std::sync::OnceLock<Vec<Arc<dyn EntryObserver>>>,
    /// Log replays (VerifyLog, ReplayLog) running at once: one per core. Each holds a request of
    /// up to the size limit and a blocking thread, so callers cannot make the replica hold more.
    pub(super) replays: tokio::sync::Semaphore,
}

impl Tabula {
    /// Who the bearer token of `metadata` says the caller is (see `tenants.rs`).
    pub(super) fn caller(
        &self,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<super::tenants::Caller> {
        let operator = self
            .options
            .operator
            .as_ref()
            .map(|operator| &operator.token);
        self.tenants.caller(metadata, operator)
    }

    /// Whether game `game_id` still runs, for the repair of a tenant's running games: a game that
    /// finished or left the store does not; one that cannot be read now is taken to.
    pub(super) async fn is_running(&self, game_id: &str) -> bool {
        match self.cache.current(game_id).await {
            Ok(game) => !game.is_finished(),
            Err(ServiceError::NotFound(_)) => false,
            Err(_) => true,
        }
    }

    /// The write-ahead mark of the notifications' outbox (see `webhooks.rs`): before an entry at
    /// `version` of a tenant's game is appended (or the game created, version 0), the game is
    /// marked as having notifications to deliver (its webhooks, and its players' turn inboxes). A
    /// failure here fails the commit before anything is appended, so no committed entry goes
    /// unmarked. Games of no tenant have neither, and cost nothing here.
    pub(super) async fn mark_for_notifications(
        &self,
        tenant: Option<&str>,
        game_id: &str,
        version: u64,
    ) -> ServiceResult<()> {
        if tenant.is_none() {
            return Ok(());
        }
        Ok(self
            .outbox
            .mark_pending(game_id, version, crate::store::unix_millis())
            .await?)
    }

    /// The tenants' quota counting, for the workers.
    pub(super) fn quotas(&self) -> &Arc<super::quotas::Quotas> {
        &self.quotas
    }

    /// The tenants, for `serve` (which declares the tenants file's) and the workers.
    pub fn tenants(&self) -> &Arc<super::tenants::Tenants> {
        &self.tenants
    }

    /// The caller of a game RPC as a viewer of `game`, as [`super::tenants::Tenants::viewer`]
    /// says. In a game with open seats, a token refused by this replica's copy is checked again
    /// against the log: the join that handed it out may be newer than the copy.
    pub(super) async fn viewer_of(
        &self,
        game: &Game,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<crate::games::Viewer> {
        match self.tenants.viewer(&game.meta, &*game.state, metadata) {
            Err(ServiceError::PermissionDenied(_)) if game.state.has_open_seating() => {
                let current = self.cache.current(&game.meta.game_id).await?;
                self.tenants
                    .viewer(&current.meta, &*current.state, metadata)
            }
            other => other,
        }
    }

    /// The seat the caller's token grants in `game`, as [`super::tenants::Tenants::required_seat`]
    /// says, with the same second look as [`Tabula::viewer_of`] for a game with open seats.
    pub(super) async fn seat_of(
        &self,
        game: &Game,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<crate::games::Seat> {
        match self
            .tenants
            .required_seat(&game.meta, &*game.state, metadata)
        {
            Err(ServiceError::PermissionDenied(_)) if game.state.has_open_seating() => {
                let current = self.cache.current(&game.meta.game_id).await?;
                self.tenants
                    .required_seat(&current.meta, &*current.state, metadata)
            }
            other => other,
        }
    }

    /// A slot in the `observe_streams` quota of the tenant owning `meta`'s game, held by a stream
    /// on the game while it is open (see `quotas.rs`); `None` when the game has no tenant or the
    /// tenant no such quota.
    pub(super) async fn admit_stream(
        &self,
        meta: &crate::store::GameMeta,
    ) -> ServiceResult<Option<super::quotas::StreamSlot>> {
        let Some(tenant) = &meta.tenant else {
            return Ok(None);
        };
        match self.tenants.limits(tenant).observe_streams {
            Some(limit) => Ok(Some(self.quotas.admit_stream(tenant, limit).await?)),
            None => Ok(None),
        }
    }

    /// A replica's service over `store`, each part of which goes only to what uses it.
    pub fn new(store: Arc<dyn Store>, options: ServiceOptions) -> Arc<Self> {
        let cache = GameCache::new(
            store.clone(),
            options.cache_capacity,
            options.snapshot_every,
        )
        .with_archive(options.archive.clone());
        let signing = options.signing.clone().unwrap_or_else(|| {
            let generated = crate::signing::SigningKeys::generate()
                .unwrap_or_else(|error| panic!("no randomness for a signing key: {error}"));
            tracing::warn!(
                key_id = generated.signing_key_id(),
                "no signing key configured (--signing-key-file, TABULA_SIGNING_KEY): games are \
                 signed with a key generated at start, which only this process publishes; give \
                 every replica of a deployment the same key"
            );
            Arc::new(generated)
        });
        Arc::new(Tabula {
            signing,
            cache,
            listing: store.clone(),
            deadlines: store.clone(),
            bot_turns: store.clone(),
            tenants: Arc::new(super::tenants::Tenants::new(store.clone())),
            quotas: Arc::new(super::quotas::Quotas::new(store.clone())),
            outbox: store.clone(),
            inbox: store.clone(),
            events: store.clone(),
            webhook_sender: Arc::new(super::webhooks::WebhookSender::new(
                options.webhooks.allow_private,
                options.webhooks.timeout,
                options.webhooks.per_endpoint,
            )),
            retained: store,
            options,
            observers: std::sync::OnceLock::new(),
            replays: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get),
            ),
        })
    }

    /// The service's settings.
    pub fn options(&self) -> &ServiceOptions {
        &self.options
    }

    /// Registers the workers to tell of every new entry (the workers do, when they start; see
    /// `workers.rs`). Only the first registration counts: a replica runs one set of workers.
    pub(super) fn observe_entries(&self, observers: Vec<Arc<dyn EntryObserver>>) {
        if self.observers.set(observers).is_err() {
            tracing::warn!("the workers were started twice on one replica; the first set stays");
        }
    }

    fn observers(&self) -> &[Arc<dyn EntryObserver>] {
        self.observers.get().map_or(&[], Vec::as_slice)
    }

    /// Tells the workers of an entry this replica committed (the commit path's last effect, and
    /// CreateGame for a new game's entry 0).
    pub(super) fn entry_committed(&self, commit: &Commit<'_>) {
        for observer in self.observers() {
            observer.committed(commit);
        }
    }

    /// Tells the workers of an entry another replica committed (Observe streams learn of them).
    pub(super) fn entry_followed(&self, game: &Game) {
        for observer in self.observers() {
            observer.followed(game);
        }
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
