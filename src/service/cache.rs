//! The game cache: the service's one way to the games' logs ([`GameLog`]; the store's other
//! parts, the indexes, go straight to their one user each: see `tabula.rs`).
//!
//! Handlers never read or append to a log themselves; they ask the cache for a game (rebuilt from
//! its log, or kept from an earlier request) and append through it. The cache is bounded (LRU) and
//! holds each game as a shared, immutable state ([`Game`] clones are reference counts), so a warm
//! read copies nothing and a move deep-copies the state exactly once: the speculative apply that
//! validates it.
//!
//! A replica may cache states but never owns them: a cached state can be stale at any moment
//! (another replica may have appended), so every append names the version the move was validated
//! against and the store refuses it if the log moved on. What the cache saves is the replay.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::Arc;

use lru::LruCache;
use prost::Message;
use tokio::sync::broadcast;

use super::error::{ServiceError, ServiceResult};
use crate::archive::{Archive, ArchivedGame};
use crate::chain::{self, Hash, Link};
use crate::games::Seat;
use crate::hosting::{self, GameState, HostError};
use crate::metrics;
use crate::proto::v1 as pb;
use crate::store::{Append, DeadlineChange, GameLog, GameMeta, LogEntry, NewEntry, Snapshot};

/// One game as this replica knows it: its meta and its state at `version`. Cloning is cheap (three
/// reference counts: meta, state, last entry); changing the state copies it only if it is shared.
#[derive(Clone, Debug)]
pub struct Game {
    /// What never changes about the game.
    pub meta: Arc<GameMeta>,
    /// The state at `version`, shared with the cache and other requests.
    pub state: Arc<dyn GameState>,
    /// How many actions the state has applied.
    pub version: u64,
    /// The entry that led to `version` and the events it produced, when this replica applied it
    /// (not after a rebuild from a snapshot). Observe streams reuse it instead of applying the
    /// entry again, one apply per replica however many streams follow the game.
    pub last: Option<Arc<Applied>>,
    /// The head of the game's hash chain at `version` (`crate::chain`); `None` for a game without
    /// a signed commitment (created before the chain existed).
    pub head: Option<Hash>,
}

/// Where a game's hash chain starts: at its signed commitment; `None` without one.
pub fn chain_start(meta: &GameMeta) -> Option<Hash> {
    if meta.signed_commitment.is_empty() {
        return None;
    }
    // One that does not decode is reported where it is shown (`commitment::signed`).
    let signed = pb::SignedCommitment::decode(meta.signed_commitment.as_slice()).ok()?;
    Some(chain::genesis(&signed.commitment))
}

/// One log entry applied to a game: the action it carried (decoded once) and the unredacted events
/// it produced.
#[derive(Debug)]
pub struct Applied {
    /// The seat that acted.
    pub seat: Seat,
    /// What it did.
    pub action: pb::Action,
    /// What happened, unredacted.
    pub events: Vec<pb::Event>,
    /// When the entry was logged (server clock, ms since the Unix epoch; 0 when unknown).
    pub server_time_ms: u64,
    /// Its link in the hash chain, for a game with one.
    pub link: Option<Link>,
}

impl Game {
    /// The game right after setup (version 0).
    pub fn initial(meta: Arc<GameMeta>) -> ServiceResult<Game> {
        let mut state =
            hosting::setup_under(&decode_config(&meta)?, &meta.seed, &meta.rules_version)?;
        state.start_clock(meta.created_at_ms);
        Ok(Game {
            head: chain_start(&meta),
            meta,
            state: Arc::from(state),
            version: 0,
            last: None,
        })
    }

    /// The state, for changing: copied first if another holder shares it.
    fn state_mut(&mut self) -> &mut dyn GameState {
        if Arc::get_mut(&mut self.state).is_none() {
            self.state = Arc::from(self.state.clone_box());
        }
        Arc::get_mut(&mut self.state).expect("a state just copied is not shared")
    }

    /// Applies logged entries in order (they must follow on from this version; older ones are
    /// skipped).
    pub fn advance(&mut self, entries: &[LogEntry]) -> ServiceResult<()> {
        for entry in entries {
            if entry.version > self.version {
                self.apply_entry(entry)?;
            }
        }
        Ok(())
    }

    /// Applies the entry right after this version.
    pub fn apply_entry(&mut self, entry: &LogEntry) -> ServiceResult<Arc<Applied>> {
        if entry.version != self.version + 1 {
            return Err(ServiceError::Internal(format!(
                "game {}: log jumps from version {} to {}",
                self.meta.game_id, self.version, entry.version
            )));
        }
        let action = decode_action(&entry.action)?;
        let game_id = self.meta.game_id.clone();
        let events = self
            .state_mut()
            .apply_at(entry.seat, &action, entry.server_time_ms)
            .map_err(|error| {
                ServiceError::Internal(format!(
                    "game {game_id}: logged action {} no longer replays ({error})",
                    entry.version
                ))
            })?;
        let link = self.next_link(entry.seat, entry.server_time_ms, &entry.action);
        self.version = entry.version;
        self.head = link.map(|link| link.head);
        let applied = Arc::new(Applied {
            seat: entry.seat,
            action,
            events,
            server_time_ms: entry.server_time_ms,
            link,
        });
        self.last = Some(applied.clone());
        Ok(applied)
    }

    /// The hash chain's link of the entry that would follow this version (`None` for a game
    /// without a chain): what the Act path stores with the entry and what a replay recomputes.
    pub fn next_link(&self, seat: Seat, server_time_ms: u64, action: &[u8]) -> Option<Link> {
        self.head.map(|previous| {
            chain::link_after(
                &previous,
                &self.meta.seed.0,
                self.version + 1,
                seat,
                server_time_ms,
                action,
            )
        })
    }

    /// True once the game has ended: from then on everything about it is public.
    pub fn is_finished(&self) -> bool {
        self.state.is_finished()
    }
}

/// How the turn-clock deadline changes from `before` to `after` (the state an entry leads to), for
/// the store's deadline index; `None` for a game without a clock.
pub fn deadline_change(before: &dyn GameState, after: &dyn GameState) -> Option<DeadlineChange> {
    if !before.has_clock() {
        return None;
    }
    Some(DeadlineChange {
        before_ms: before.deadline().map(|(_, deadline)| deadline),
        after_ms: after.deadline().map(|(_, deadline)| deadline),
    })
}

fn decode_action(bytes: &[u8]) -> ServiceResult<pb::Action> {
    pb::Action::decode(bytes)
        .map_err(|e| ServiceError::Internal(format!("undecodable logged action: {e}")))
}

/// The game's config as it was created.
pub fn decode_config(meta: &GameMeta) -> ServiceResult<pb::GameConfig> {
    pb::GameConfig::decode(meta.config.as_slice())
        .map_err(|e| ServiceError::Internal(format!("undecodable stored config: {e}")))
}

/// A JSON record a game's meta keeps for the service (`bytes`; `what` names it in messages: its
/// open seats, its creation): `None` when the meta has none. Every such record carries its
/// `format`, checked first: FAILED_PRECONDITION for a format other than 1, which a later release
/// wrote and this build cannot read; a record that does not decode is Internal.
pub fn decode_meta_record<T: serde::de::DeserializeOwned>(
    meta: &GameMeta,
    bytes: &[u8],
    what: &str,
) -> ServiceResult<Option<T>> {
    if bytes.is_empty() {
        return Ok(None);
    }
    #[derive(serde::Deserialize)]
    struct Format {
        format: u32,
    }
    let undecodable = |e: serde_json::Error| {
        ServiceError::Internal(format!(
            "game {}: its {what} record does not decode: {e}",
            meta.game_id
        ))
    };
    let Format { format } = serde_json::from_slice(bytes).map_err(undecodable)?;
    if format != 1 {
        return Err(ServiceError::FailedPrecondition(format!(
            "game {} keeps its {what} in format {format}, which this build (Tabula {}) does not \
             read: a replica of a later release does",
            meta.game_id,
            crate::RELEASE
        )));
    }
    serde_json::from_slice(bytes).map(Some).map_err(undecodable)
}

/// Checks that this build plays the game by the rules version it was created with (it plays
/// every version a stored game may use, unless a newer release created the game:
/// docs/compatibility.md).
fn check_rules_version(meta: &GameMeta) -> ServiceResult<()> {
    hosting::check_rules_version(meta.kind, &meta.rules_version).map_err(|error| match error {
        HostError::RulesVersion { .. } => {
            ServiceError::FailedPrecondition(format!("game {}: {error}", meta.game_id))
        }
        other => other.into(),
    })
}

/// Whether a game handed out by the cache was just read from the store (so it is current) or
/// kept from earlier (so it may be stale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Read from the store by this request.
    Current,
    /// From the cache: another replica may have appended since.
    MaybeStale,
}

/// The bounded per-replica cache of rebuilt games, in front of the store.
pub struct GameCache {
    /// The games' logs: all of the store the cache sees.
    store: Arc<dyn GameLog>,
    games: Mutex<LruCache<String, Cached>>,
    snapshot_every: u64,
    /// Where finished games go when they leave the store (`--archive`), read when the store no
    /// longer has a game.
    archive: Option<Arc<Archive>>,
    /// The logs of games read back from the archive, so replaying one (Observe, GetView at a
    /// version, ExportLog) costs one archive read, not one per call. Bounded: an archived log is
    /// the whole game's.
    archived: Mutex<LruCache<String, Arc<ArchivedGame>>>,
}

/// One game in the cache: its latest state this replica has, and, for a game with a tenant, the
/// games at the versions just before it that this replica stepped through one entry at a time
/// (its own commits, or entries it followed), until a delivery pass has told their entries.
///
/// Why the steps: a tenant's game is told to its turn inbox, event stream and webhooks after its
/// entries (`webhook_delivery.rs`), and what an entry tells (a turn that started, a game that
/// ended) is the difference between the state before it and after it. Without the states before,
/// a delivery pass read the game's whole log and replayed it from the start: work that grew with
/// every move of the game. Keeping only the one step before the latest was not enough: under load
/// moves come faster than passes, a pass covers several entries, and each such pass replayed the
/// whole log again. The steps are the states the commits made anyway (shared, not copied), kept
/// at most [`STEPS_KEPT`] and dropped once a pass has told them ([`GameCache::forget_steps_before`]),
/// so an idle game keeps none. Games without a tenant are told nothing, so they keep no steps (the
/// cache's memory stays one state per game for them).
#[derive(Clone)]
struct Cached {
    /// The latest state this replica has of the game.
    game: Game,
    /// For a game with a tenant: the games at `game.version - steps.len()` up to
    /// `game.version - 1`, oldest first, each one entry before the next.
    steps: VecDeque<Game>,
}

/// The most steps a tenant's game keeps (see [`Cached`]): a delivery pass that lags further
/// behind its game replays the log instead.
pub const STEPS_KEPT: usize = 32;

impl Cached {
    /// The step at `version`, if kept.
    fn step_at(&self, version: u64) -> Option<&Game> {
        let back = self.game.version.checked_sub(version)?;
        let index = self.steps.len().checked_sub(usize::try_from(back).ok()?)?;
        self.steps.get(index).filter(|step| step.version == version)
    }
}

/// How many archived games a replica keeps read (each is a finished game's whole log: a few
/// hundred kilobytes at most).
const ARCHIVED_CAPACITY: usize = 256;

impl GameCache {
    /// A cache of at most `capacity` games over `store`, saving a snapshot every `snapshot_every`
    /// versions (0: never).
    pub fn new(store: Arc<dyn GameLog>, capacity: usize, snapshot_every: u64) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        GameCache {
            store,
            games: Mutex::new(LruCache::new(capacity)),
            snapshot_every,
            archive: None,
            archived: Mutex::new(LruCache::new(
                NonZeroUsize::new(ARCHIVED_CAPACITY).unwrap_or(NonZeroUsize::MIN),
            )),
        }
    }

    /// The same cache, falling back to `archive` for games the store no longer has.
    pub fn with_archive(mut self, archive: Option<Arc<Archive>>) -> Self {
        self.archive = archive;
        self
    }

    /// The archive, if one is configured.
    pub fn archive(&self) -> Option<&Arc<Archive>> {
        self.archive.as_ref()
    }

    fn archived_cached(&self, game_id: &str) -> Option<Arc<ArchivedGame>> {
        self.archived.lock().get(game_id).cloned()
    }

    /// The game as the archive has it (read once, then kept in a bounded cache), or `None`
    /// without an archive or when it does not have the game.
    async fn read_archived(&self, game_id: &str) -> ServiceResult<Option<Arc<ArchivedGame>>> {
        if let Some(archived) = self.archived_cached(game_id) {
            return Ok(Some(archived));
        }
        let Some(archive) = &self.archive else {
            return Ok(None);
        };
        let Some(archived) = archive.get(game_id).await? else {
            return Ok(None);
        };
        let archived = Arc::new(archived);
        self.archived
            .lock()
            .put(game_id.to_owned(), archived.clone());
        Ok(Some(archived))
    }

    /// The archived game at version 0 and its whole log.
    async fn archived_history(&self, game_id: &str) -> ServiceResult<(Game, Vec<LogEntry>)> {
        let archived = self
            .read_archived(game_id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(game_id.to_owned()))?;
        check_rules_version(&archived.meta)?;
        Ok((
            Game::initial(Arc::new(archived.meta.clone()))?,
            archived.entries.clone(),
        ))
    }

    fn cached(&self, game_id: &str) -> Option<Game> {
        let game = self
            .games
            .lock()
            .get(game_id)
            .map(|cached| cached.game.clone());
        metrics::cache_lookup(game.is_some());
        game
    }

    /// The game exactly at `version` if the cache holds it: its latest state, or one of the steps
    /// before it (see [`Cached`]).
    fn cached_at(&self, game_id: &str, version: u64) -> Option<Game> {
        let mut games = self.games.lock();
        let cached = games.get(game_id);
        metrics::cache_lookup(cached.is_some());
        let cached = cached?;
        if cached.game.version == version {
            return Some(cached.game.clone());
        }
        cached.step_at(version).cloned()
    }

    /// The games at every version from `first` to `last`, oldest first, if the cache holds them
    /// all (the latest state and its steps, see `Cached`): each after the first is the one
    /// before it with its entry applied (its `last`). A delivery pass takes the states before and
    /// after each entry from them, without reading the log.
    pub fn steps(&self, game_id: &str, first: u64, last: u64) -> Option<Vec<Game>> {
        let games = self.games.lock();
        let cached = games.peek(game_id)?;
        let mut chain = Vec::with_capacity(usize::try_from(last.checked_sub(first)? + 1).ok()?);
        for version in first..=last {
            let game = if cached.game.version == version {
                &cached.game
            } else {
                cached.step_at(version)?
            };
            chain.push(game.clone());
        }
        Some(chain)
    }

    /// Drops a game's steps before `version`: a delivery pass has told their entries, and the
    /// next pass starts after `version` (see `Cached`).
    pub fn forget_steps_before(&self, game_id: &str, version: u64) {
        if let Some(cached) = self.games.lock().peek_mut(game_id) {
            while cached
                .steps
                .front()
                .is_some_and(|step| step.version < version)
            {
                cached.steps.pop_front();
            }
        }
    }

    /// Keeps `game` if it is newer than what the cache holds.
    pub fn remember(&self, game: Game) {
        self.keep(game, None);
    }

    /// Keeps `after` if it is newer than what the cache holds, with `before` as a step before it
    /// when the game has a tenant (see `Cached`): `after` must be `before` with the one entry
    /// after it applied.
    pub fn remember_step(&self, before: &Game, after: Game) {
        let step = (after.meta.tenant.is_some() && before.version + 1 == after.version)
            .then(|| before.clone());
        self.keep(after, step);
    }

    fn keep(&self, game: Game, step: Option<Game>) {
        let mut games = self.games.lock();
        let game_id = &game.meta.game_id;
        let mut steps = VecDeque::new();
        match games.peek_mut(game_id) {
            Some(cached) if cached.game.version >= game.version => return,
            // The chain goes on from the state cached: its steps stay.
            Some(cached)
                if step
                    .as_ref()
                    .is_some_and(|step| cached.game.version == step.version) =>
            {
                steps = std::mem::take(&mut cached.steps);
            }
            _ => {}
        }
        if let Some(step) = step {
            if steps.len() == STEPS_KEPT {
                steps.pop_front();
            }
            steps.push_back(step);
        }
        let game_id = game_id.clone();
        if let Some((evicted, _)) = games.push(game_id.clone(), Cached { game, steps })
            && evicted != game_id
        {
            metrics::cache_eviction();
        }
    }

    /// Stores a new game (its log is empty) and keeps it. `state` is the game right after setup,
    /// its turn clock (if any) started at the meta's creation time.
    pub async fn create(&self, meta: GameMeta, state: Box<dyn GameState>) -> ServiceResult<Game> {
        self.store.create(&meta).await?;
        let game = Game {
            head: chain_start(&meta),
            meta: Arc::new(meta),
            state: Arc::from(state),
            version: 0,
            last: None,
        };
        self.remember(game.clone());
        Ok(game)
    }

    /// Whether games that log the table entries added since 1.0.0 may be created: see
    /// [`crate::store::GameLog::serves_only_current_releases`].
    pub fn serves_only_current_releases(&self) -> bool {
        self.store.serves_only_current_releases()
    }

    /// The game as this replica last saw it: possibly stale, but never wrong about the past.
    pub async fn get(&self, game_id: &str) -> ServiceResult<(Game, Freshness)> {
        if let Some(game) = self.cached(game_id) {
            return Ok((game, Freshness::MaybeStale));
        }
        Ok((self.load(game_id).await?, Freshness::Current))
    }

    /// `game` (at `entry.version - 1`) with `entry` applied, and what the entry did. Applied once
    /// per replica: if the cache already holds the game right after this entry (the Act that
    /// appended it here, or another Observe stream of the game), that shared state is returned
    /// instead of applying the entry again; otherwise the result is applied and kept, which also
    /// keeps the cache current for the next Act here (no catch-up read).
    pub fn follow(&self, game: &Game, entry: &LogEntry) -> ServiceResult<(Game, Arc<Applied>)> {
        let shared = self
            .games
            .lock()
            .peek(&game.meta.game_id)
            .map(|cached| &cached.game)
            .filter(|cached| cached.version == entry.version)
            .and_then(|cached| Some((cached.clone(), cached.last.clone()?)));
        if let Some((cached, applied)) = shared
            && applied.seat == entry.seat
        {
            return Ok((cached, applied));
        }
        let mut next = game.clone();
        let applied = next.apply_entry(entry)?;
        self.remember_step(game, next.clone());
        Ok((next, applied))
    }

    /// The game's meta: from the cache when it holds the game, else by loading the game.
    pub async fn meta(&self, game_id: &str) -> ServiceResult<Arc<GameMeta>> {
        Ok(self.get(game_id).await?.0.meta)
    }

    /// The game at the log's current version.
    pub async fn current(&self, game_id: &str) -> ServiceResult<Game> {
        // No copy has got past every version: a cached one is always checked against the log.
        self.at_least(game_id, u64::MAX).await
    }

    /// The game at `min_version` or later: this replica's copy when it has got that far (no
    /// store read), else the log's current version (which may still be short of `min_version`:
    /// the caller decides what that means).
    pub async fn at_least(&self, game_id: &str, min_version: u64) -> ServiceResult<Game> {
        match self.get(game_id).await? {
            (game, Freshness::Current) => Ok(game),
            (game, Freshness::MaybeStale) if game.version >= min_version => Ok(game),
            (mut game, Freshness::MaybeStale) => {
                self.catch_up(&mut game).await?;
                Ok(game)
            }
        }
    }

    /// Reads the entries appended since `game.version`, applies them and keeps the result. A game
    /// that has left the store since it was read (retention archived and removed it) is read
    /// again from the archive: a copy from before its end must never answer for it (issue #24).
    pub async fn catch_up(&self, game: &mut Game) -> ServiceResult<()> {
        match self
            .store
            .entries_after(&game.meta.game_id, game.version)
            .await?
        {
            Some(entries) if entries.is_empty() => Ok(()),
            Some(entries) => {
                game.advance(&entries)?;
                self.remember(game.clone());
                Ok(())
            }
            None => {
                let meta = game.meta.clone();
                *game = self.moved_out(&meta.game_id).await?;
                Ok(())
            }
        }
    }

    /// Forgets this replica's copy of a game the store no longer has, and reads it from the
    /// archive (NOT_FOUND without one, or when the archive does not have it either).
    pub async fn moved_out(&self, game_id: &str) -> ServiceResult<Game> {
        self.games.lock().pop(game_id);
        tracing::debug!(%game_id, "the game has left the store; reading it from the archive");
        let (mut game, entries) = self.archived_history(game_id).await?;
        game.advance(&entries)?;
        self.remember(game.clone());
        Ok(game)
    }

    /// Rebuilds a game from the store (see [`GameCache::load_from_store`]), or from the archive
    /// when it has left the store.
    async fn load(&self, game_id: &str) -> ServiceResult<Game> {
        match self.load_from_store(game_id).await? {
            Some(game) => Ok(game),
            // Gone from the store: a finished game past retention is in the archive.
            None => self.moved_out(game_id).await,
        }
    }

    /// The game from the cache, else from the store; `None` when the store does not have it. The
    /// archive is not read.
    pub async fn get_from_store(&self, game_id: &str) -> ServiceResult<Option<Game>> {
        if let Some(game) = self.cached(game_id) {
            return Ok(Some(game));
        }
        self.load_from_store(game_id).await
    }

    /// Whether an archive is configured (`--archive`).
    pub fn has_archive(&self) -> bool {
        self.archive.is_some()
    }

    /// Whether `game` is still in the store, not yet moved to the archive by retention: one read
    /// of its log after the version held, which is empty for a finished game.
    pub async fn in_store(&self, game: &Game) -> ServiceResult<bool> {
        Ok(self
            .store
            .entries_after(&game.meta.game_id, game.version)
            .await?
            .is_some())
    }

    /// Rebuilds a game from the store: newest snapshot plus the log after it (one round trip).
    /// A snapshot this build cannot decode is ignored and the whole log replayed instead. `None`
    /// when the store does not have the game.
    async fn load_from_store(&self, game_id: &str) -> ServiceResult<Option<Game>> {
        let Some(loaded) = self.store.load(game_id).await? else {
            return Ok(None);
        };
        check_rules_version(&loaded.meta)?;
        let meta = Arc::new(loaded.meta);
        // A game with a chain needs the snapshot's head too (a snapshot saved before the chain,
        // or by 1.0.0, has none): without it the log is replayed from its start.
        let chained = chain_start(&meta).is_some();
        let restored = loaded.snapshot.as_ref().and_then(|snapshot| {
            if chained && snapshot.head.is_none() {
                return None;
            }
            match hosting::restore(meta.kind, &snapshot.state) {
                Ok(state) => Some(Game {
                    meta: meta.clone(),
                    state: Arc::from(state),
                    version: snapshot.version,
                    last: None,
                    head: snapshot.head,
                }),
                Err(error) => {
                    tracing::warn!(%game_id, %error, "ignoring an undecodable snapshot");
                    None
                }
            }
        });
        let game = match restored {
            Some(mut game) => {
                game.advance(&loaded.entries)?;
                game
            }
            None => {
                // Without a usable snapshot the tail is not enough when a snapshot existed.
                let entries = if loaded.snapshot.is_some() {
                    match self.store.entries_after(game_id, 0).await? {
                        Some(entries) => entries,
                        // Removed by retention between the two reads.
                        None => return Ok(None),
                    }
                } else {
                    loaded.entries
                };
                let mut game = Game::initial(meta)?;
                game.advance(&entries)?;
                game
            }
        };
        self.remember(game.clone());
        Ok(Some(game))
    }

    /// The game exactly at `version` (≤ current): from the cache when it holds that version (the
    /// latest, or for a tenant's game the step before it), else replayed from the log.
    pub async fn at_version(&self, game_id: &str, version: u64) -> ServiceResult<Game> {
        if let Some(game) = self.cached_at(game_id, version) {
            return Ok(game);
        }
        Ok(self.replay_to(game_id, version).await?.0)
    }

    /// The game exactly at `version` (≤ current), replayed from the start of its log, and the
    /// entries after that version, from a single read of the log.
    pub async fn replay_to(
        &self,
        game_id: &str,
        version: u64,
    ) -> ServiceResult<(Game, Vec<LogEntry>)> {
        let (mut game, mut entries) = self.history(game_id).await?;
        let later = entries.split_off(entries.partition_point(|e| e.version <= version));
        game.advance(&entries)?;
        if game.version != version {
            return Err(ServiceError::OutOfRange(format!(
                "game {game_id} has no version {version}; it is at version {}",
                game.version
            )));
        }
        Ok((game, later))
    }

    /// The game's whole log, and the game at version 0 to replay it on. Reads the log once and
    /// replays nothing: a warm replica takes the meta from its cache; a cold one gets meta and log
    /// from the store's load (one round trip, two when a snapshot hides the log's start).
    pub async fn history(&self, game_id: &str) -> ServiceResult<(Game, Vec<LogEntry>)> {
        if self.archived_cached(game_id).is_some() {
            return self.archived_history(game_id).await;
        }
        if let Some(cached) = self.cached(game_id) {
            let Some(entries) = self.store.entries_after(game_id, 0).await? else {
                // The game has left the store since it was cached.
                self.games.lock().pop(game_id);
                return self.archived_history(game_id).await;
            };
            return Ok((Game::initial(cached.meta)?, entries));
        }
        let Some(loaded) = self.store.load(game_id).await? else {
            return self.archived_history(game_id).await;
        };
        check_rules_version(&loaded.meta)?;
        let entries = match loaded.snapshot {
            None => loaded.entries,
            Some(_) => match self.store.entries_after(game_id, 0).await? {
                Some(entries) => entries,
                None => return self.archived_history(game_id).await,
            },
        };
        Ok((Game::initial(Arc::new(loaded.meta))?, entries))
    }

    /// The log entries after `version`, in order.
    pub async fn entries_after(&self, game_id: &str, version: u64) -> ServiceResult<Vec<LogEntry>> {
        if let Some(archived) = self.archived_cached(game_id) {
            return Ok(archived
                .entries
                .get(version as usize..)
                .unwrap_or_default()
                .to_vec());
        }
        match self.store.entries_after(game_id, version).await? {
            Some(entries) => Ok(entries),
            None => {
                // The game has left the store (or never was): the archive has its whole log.
                self.games.lock().pop(game_id);
                let (_, all) = self.archived_history(game_id).await?;
                Ok(all.get(version as usize..).unwrap_or_default().to_vec())
            }
        }
    }

    /// A feed of the game's entries as any replica appends them (see [`GameLog::subscribe`]).
    pub async fn subscribe(&self, game_id: &str) -> ServiceResult<broadcast::Receiver<LogEntry>> {
        Ok(self.store.subscribe(game_id).await?)
    }

    /// Appends `entry` if the log is still at `game.version` (see [`GameLog::append`]).
    pub async fn append(&self, game: &Game, entry: &NewEntry) -> ServiceResult<Append> {
        Ok(self
            .store
            .append(&game.meta.game_id, game.version, entry)
            .await?)
    }

    /// The version a seat's request id appended, if it did.
    pub async fn find_request(
        &self,
        game_id: &str,
        seat: Seat,
        request_id: &str,
        at_version: Option<u64>,
    ) -> ServiceResult<Option<u64>> {
        Ok(self
            .store
            .find_request(game_id, seat, request_id, at_version)
            .await?)
    }

    /// Stores a snapshot every `snapshot_every` versions, in the background: it is a cache, and
    /// the move that produced it has already been appended.
    pub fn maybe_snapshot(&self, game: &Game) {
        if self.snapshot_every == 0 || !game.version.is_multiple_of(self.snapshot_every) {
            return;
        }
        // Under the game's own rules version: a snapshot is used only with it.
        let snapshot = Snapshot {
            version: game.version,
            head: game.head,
            rules_version: game.meta.rules_version.clone(),
            state: game.state.encode(),
        };
        let store = self.store.clone();
        let game_id = game.meta.game_id.clone();
        tokio::spawn(async move {
            if let Err(error) = store.save_snapshot(&game_id, &snapshot).await {
                tracing::warn!(%game_id, %error, "snapshot not saved (it is only a cache)");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Seed, Viewer};
    use crate::store::memory::MemoryStore;

    fn config() -> pb::GameConfig {
        pb::GameConfig {
            table: None,
            game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
        }
    }

    fn meta(game_id: &str, tenant: Option<&str>) -> GameMeta {
        GameMeta {
            game_id: game_id.into(),
            kind: pb::GameKind::MediciVsStrozzi,
            config: config().encode_to_vec(),
            rules_version: "medici_vs_strozzi-1".into(),
            seed: Seed([7; 32]),
            tenant: tenant.map(str::to_owned),
            ..GameMeta::for_tests(game_id)
        }
    }

    /// A tenant's webhook delivery asks for the games at the versions its pass covers: the cache
    /// answers them from the steps it kept, with the very states and chain heads the game had
    /// there, up to [`STEPS_KEPT`] of them, drops them once told, and keeps no steps for a game
    /// without a tenant.
    #[tokio::test]
    async fn a_tenants_game_keeps_the_steps_before_its_latest_entry() {
        let cache = GameCache::new(Arc::new(MemoryStore::new()), 16, 0);
        let moves = STEPS_KEPT as u64 + 3;
        for (game_id, tenant) in [("with-tenant", Some("alpha")), ("anonymous", None)] {
            // Kept by the cache alone, never stored: whatever the cache answers below comes from
            // its own copies, since the store has no such game to replay.
            let mut game =
                Game::initial(Arc::new(meta(game_id, tenant))).expect("the game sets up");
            cache.remember(game.clone());
            let mut played = vec![game.clone()];
            for version in 1..=moves {
                let seat = game.state.status().to_act.expect("a seat acts");
                let legal = game.state.legal_actions(Viewer::Seat(seat));
                let action = legal[0].action.clone().expect("a listed action");
                let entry = LogEntry {
                    version,
                    seat,
                    action: action.encode_to_vec(),
                    request_id: String::new(),
                    server_time_ms: 0,
                };
                game = cache.follow(&game, &entry).expect("the entry applies").0;
                played.push(game.clone());
            }
            let latest = cache
                .cached_at(game_id, moves)
                .expect("the latest is cached");
            assert_eq!(latest.state.encode(), game.state.encode());
            let oldest = moves - STEPS_KEPT as u64;
            let chain = cache.steps(game_id, oldest, moves);
            assert_eq!(chain.is_some(), tenant.is_some(), "{game_id}");
            if let Some(chain) = chain {
                for (kept, expected) in chain.iter().zip(&played[oldest as usize..]) {
                    assert_eq!(kept.version, expected.version);
                    assert_eq!(kept.state.encode(), expected.state.encode());
                    assert_eq!(kept.head, expected.head);
                    assert_eq!(kept.last.is_some(), kept.version > 0);
                }
                assert!(
                    cache.steps(game_id, oldest - 1, moves).is_none(),
                    "at most STEPS_KEPT"
                );
                // What a pass that lags asks for, answered without the store.
                let at = cache
                    .at_version(game_id, oldest)
                    .await
                    .expect("a kept step");
                assert_eq!(at.state.encode(), played[oldest as usize].state.encode());
                // Told up to `moves - 2`: the steps before it go, the rest stay.
                cache.forget_steps_before(game_id, moves - 2);
                assert!(cache.steps(game_id, moves - 3, moves).is_none());
                assert_eq!(
                    cache.steps(game_id, moves - 2, moves).map(|c| c.len()),
                    Some(3)
                );
            } else {
                assert!(cache.cached_at(game_id, moves - 1).is_none());
            }
            // A later copy that was not reached by one step from the cached one keeps no step.
            let mut later = game.clone();
            later.version += 1;
            cache.remember(later);
            assert!(cache.cached_at(game_id, moves).is_none());
            assert!(cache.steps(game_id, moves, moves + 1).is_none());
        }
    }
}
