//! Where games live: an event-sourced action log per game, behind one [`Store`] trait.
//!
//! The log is the truth. A replica rebuilds a game by replaying its log (from the latest snapshot,
//! which is only a cache of a replay), validates a move against that state, and appends it with
//! [`Store::append`], which is atomic: it succeeds only if the log is still at the version the move
//! was validated against, and it deduplicates retried request ids. The store knows nothing about
//! rules; actions are opaque bytes (the encoded `tabula.v1.Action`).
//!
//! Two implementations: [`memory::MemoryStore`] (embedded, the default) and [`redis::RedisStore`]
//! (single node or Redis Cluster). Both announce appends on a per-game [`feed`] for observers.

pub mod feed;
pub mod memory;
pub mod redis;

use async_trait::async_trait;
use tokio::sync::broadcast;

use crate::games::{Seat, Seed};

/// What never changes about a game after creation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameMeta {
    pub game_id: String,
    /// `tabula.v1.GameKind` as its wire number.
    pub kind: i32,
    /// The encoded `tabula.v1.GameConfig`.
    pub config: Vec<u8>,
    pub rules_version: String,
    pub seed: Seed,
    /// SHA-256 of each seat's bearer token, indexed by seat.
    pub token_hashes: Vec<[u8; 32]>,
    pub created_at_ms: u64,
}

/// One action in a game's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// 1 for the first action; the log's version is the version of its last entry.
    pub version: u64,
    pub seat: Seat,
    /// The encoded `tabula.v1.Action`.
    pub action: Vec<u8>,
    /// The client's request id, empty when none was given.
    pub request_id: String,
}

/// An action to append (its version is assigned by the append).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    pub seat: Seat,
    pub action: Vec<u8>,
    pub request_id: String,
}

/// The result of an append attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Append {
    /// The entry is now at `version`.
    Appended { version: u64 },
    /// The log was not at the expected version: it is at `current`, and `missing` holds the entries
    /// after the expected version, so the caller can catch up without another round trip.
    Conflict {
        current: u64,
        missing: Vec<LogEntry>,
    },
    /// This seat's request id was already appended, at `version`; nothing was appended.
    Duplicate { version: u64 },
}

/// A cached engine state at some version: always equal to replaying the log up to `version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub version: u64,
    pub rules_version: String,
    pub state: Vec<u8>,
}

/// Everything needed to rebuild a game: its meta, the newest usable snapshot, and the entries
/// after it (after version 0 when there is no snapshot).
#[derive(Clone, Debug)]
pub struct Loaded {
    pub meta: GameMeta,
    pub snapshot: Option<Snapshot>,
    pub entries: Vec<LogEntry>,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("game store unavailable: {0}")]
    Unavailable(String),
    #[error("game {0} already exists")]
    AlreadyExists(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// A store of game logs. Every method is one round trip to the backing store.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Creates a game with an empty log. Fails with [`StoreError::AlreadyExists`] if the id is taken.
    async fn create(&self, meta: &GameMeta) -> StoreResult<()>;

    /// The game's meta, its newest snapshot (if made with the meta's rules version), and the log
    /// after it; `None` for an unknown game.
    async fn load(&self, game_id: &str) -> StoreResult<Option<Loaded>>;

    /// The log entries after version `after`, in order.
    async fn entries_after(&self, game_id: &str, after: u64) -> StoreResult<Vec<LogEntry>>;

    /// Appends `entry` if the log is at exactly `expected` and the seat's request id is new.
    async fn append(&self, game_id: &str, expected: u64, entry: &NewEntry) -> StoreResult<Append>;

    /// The version a seat's request id appended, if it did.
    async fn find_request(
        &self,
        game_id: &str,
        seat: Seat,
        request_id: &str,
    ) -> StoreResult<Option<u64>>;

    /// Stores `snapshot` as the game's newest (an older one never replaces a newer one).
    async fn save_snapshot(&self, game_id: &str, snapshot: &Snapshot) -> StoreResult<()>;

    /// A feed of the game's entries as they are appended by any replica. Receivers that fall behind
    /// get `Lagged` and must read the missed entries with [`Store::entries_after`].
    async fn subscribe(&self, game_id: &str) -> StoreResult<broadcast::Receiver<LogEntry>>;

    /// Checks that the backing store answers.
    async fn ping(&self) -> StoreResult<()>;

    /// A short name for logs: `memory` or `redis`.
    fn kind(&self) -> &'static str;
}

/// The idempotency key of a request: request ids are scoped to the seat that sent them.
pub fn request_key(seat: Seat, request_id: &str) -> String {
    format!("{seat}:{request_id}")
}
