//! Rebuilding games from their logs, with a bounded per-replica cache.
//!
//! A replica may cache states but never owns them: a cached state can be stale at any moment
//! (another replica may have appended), so every append names the version the move was validated
//! against and the store refuses it if the log moved on. What the cache saves is the replay.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use prost::Message;

use super::error::{ServiceError, ServiceResult};
use crate::hosting::{self, GameState};
use crate::proto::v1 as pb;
use crate::store::{GameMeta, LogEntry, Snapshot, Store};

/// One game as this replica knows it: its meta and its state at `version`.
#[derive(Clone, Debug)]
pub struct Game {
    pub meta: Arc<GameMeta>,
    pub state: Box<dyn GameState>,
    pub version: u64,
}

impl Game {
    /// Applies logged entries in order (they must follow on from this version).
    pub fn apply_entries(&mut self, entries: &[LogEntry]) -> ServiceResult<()> {
        for entry in entries {
            if entry.version <= self.version {
                continue;
            }
            if entry.version != self.version + 1 {
                return Err(ServiceError::Internal(format!(
                    "game {}: log jumps from version {} to {}",
                    self.meta.game_id, self.version, entry.version
                )));
            }
            self.apply_entry(entry).map(drop)?;
        }
        Ok(())
    }

    /// Applies one logged entry, returning its unredacted events.
    pub fn apply_entry(&mut self, entry: &LogEntry) -> ServiceResult<Vec<pb::Event>> {
        let action = decode_action(&entry.action)?;
        let events = self.state.apply(entry.seat, &action).map_err(|error| {
            ServiceError::Internal(format!(
                "game {}: logged action {} no longer replays ({error})",
                self.meta.game_id, entry.version
            ))
        })?;
        self.version = entry.version;
        Ok(events)
    }
}

pub fn decode_action(bytes: &[u8]) -> ServiceResult<pb::Action> {
    pb::Action::decode(bytes)
        .map_err(|e| ServiceError::Internal(format!("undecodable logged action: {e}")))
}

pub fn decode_config(meta: &GameMeta) -> ServiceResult<pb::GameConfig> {
    pb::GameConfig::decode(meta.config.as_slice())
        .map_err(|e| ServiceError::Internal(format!("undecodable stored config: {e}")))
}

/// The state right after setup.
pub fn initial_state(meta: &GameMeta) -> ServiceResult<Box<dyn GameState>> {
    Ok(hosting::setup(&decode_config(meta)?, &meta.seed)?)
}

/// Checks that this build plays the game by the rules it was created with.
fn check_rules_version(meta: &GameMeta) -> ServiceResult<()> {
    let ours = hosting::rules_version(meta.kind)
        .ok_or_else(|| ServiceError::Internal(format!("unknown game kind {}", meta.kind)))?;
    if ours != meta.rules_version {
        return Err(ServiceError::FailedPrecondition(format!(
            "game {} was created with rules version {} but this server plays {ours}",
            meta.game_id, meta.rules_version
        )));
    }
    Ok(())
}

pub struct Games {
    store: Arc<dyn Store>,
    cache: Mutex<LruCache<String, Game>>,
    snapshot_every: u64,
}

impl Games {
    pub fn new(store: Arc<dyn Store>, capacity: usize, snapshot_every: u64) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Games {
            store,
            cache: Mutex::new(LruCache::new(capacity)),
            snapshot_every,
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    fn cached(&self, game_id: &str) -> Option<Game> {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache.get(game_id).cloned()
    }

    /// Keeps `game` if it is newer than what the cache holds.
    pub fn remember(&self, game: Game) {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache
            .peek(&game.meta.game_id)
            .is_none_or(|cached| cached.version < game.version)
        {
            cache.put(game.meta.game_id.clone(), game);
        }
    }

    /// The game as this replica last saw it: possibly stale, but never wrong about the past.
    /// Returns the game and whether it was just read from the store (and so is current).
    pub async fn get(&self, game_id: &str) -> ServiceResult<(Game, bool)> {
        if let Some(game) = self.cached(game_id) {
            return Ok((game, false));
        }
        Ok((self.load(game_id).await?, true))
    }

    /// The game at the log's current version.
    pub async fn current(&self, game_id: &str) -> ServiceResult<Game> {
        match self.get(game_id).await? {
            (game, true) => Ok(game),
            (mut game, false) => {
                self.catch_up(&mut game).await?;
                Ok(game)
            }
        }
    }

    /// Reads the entries appended since `game.version` and applies them.
    pub async fn catch_up(&self, game: &mut Game) -> ServiceResult<()> {
        let entries = self
            .store
            .entries_after(&game.meta.game_id, game.version)
            .await?;
        game.apply_entries(&entries)?;
        self.remember(game.clone());
        Ok(())
    }

    /// Rebuilds a game from the store: newest snapshot plus the log after it (one round trip).
    /// A snapshot this build cannot decode is ignored and the whole log replayed instead.
    async fn load(&self, game_id: &str) -> ServiceResult<Game> {
        let loaded = self
            .store
            .load(game_id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(game_id.to_owned()))?;
        check_rules_version(&loaded.meta)?;
        let meta = Arc::new(loaded.meta);
        let restored = loaded.snapshot.as_ref().and_then(|snapshot| {
            match hosting::restore(meta.kind, &snapshot.state) {
                Ok(state) => Some(Game {
                    meta: meta.clone(),
                    state,
                    version: snapshot.version,
                }),
                Err(error) => {
                    tracing::warn!(%game_id, %error, "ignoring an undecodable snapshot");
                    None
                }
            }
        });
        let game = match restored {
            Some(mut game) => {
                game.apply_entries(&loaded.entries)?;
                game
            }
            None if loaded.snapshot.is_some() => {
                let mut game = Game {
                    meta: meta.clone(),
                    state: initial_state(&meta)?,
                    version: 0,
                };
                game.apply_entries(&self.store.entries_after(game_id, 0).await?)?;
                game
            }
            None => {
                let mut game = Game {
                    meta: meta.clone(),
                    state: initial_state(&meta)?,
                    version: 0,
                };
                game.apply_entries(&loaded.entries)?;
                game
            }
        };
        self.remember(game.clone());
        Ok(game)
    }

    /// The game exactly at `version` (≤ current).
    pub async fn at_version(&self, game_id: &str, version: u64) -> ServiceResult<Game> {
        if let Some(game) = self.cached(game_id).filter(|game| game.version == version) {
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
        let (latest, _) = self.get(game_id).await?;
        let mut game = Game {
            meta: latest.meta.clone(),
            state: initial_state(&latest.meta)?,
            version: 0,
        };
        let mut entries = self.store.entries_after(game_id, 0).await?;
        let later = entries.split_off(entries.partition_point(|e| e.version <= version));
        game.apply_entries(&entries)?;
        if game.version != version {
            return Err(ServiceError::OutOfRange(format!(
                "game {game_id} has no version {version}; it is at version {}",
                game.version
            )));
        }
        Ok((game, later))
    }

    /// Stores a snapshot every `snapshot_every` versions, in the background: it is a cache, and
    /// the move that produced it has already been appended.
    pub fn maybe_snapshot(&self, game: &Game) {
        if self.snapshot_every == 0 || !game.version.is_multiple_of(self.snapshot_every) {
            return;
        }
        let Some(rules_version) = hosting::rules_version(game.meta.kind) else {
            return;
        };
        let snapshot = Snapshot {
            version: game.version,
            rules_version: rules_version.to_owned(),
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
