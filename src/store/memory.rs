//! The embedded store: every game in this process's memory. The default, so `tabula serve` works on
//! a bare machine; a single replica only (nothing is shared or kept across restarts).

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
// `std`'s mutex, not `parking_lot`'s as elsewhere: its poisoning is wanted here. A panic while a
// game's log or a table is being changed may leave it half-written, and the store is the truth,
// so every later call reports the store unavailable instead of serving it (see `poisoned`).
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::feed::Feeds;
use super::{
    Append, BotTurn, BotTurnQueue, DeadlineSchedule, GameListing, GameLog, GameMeta, GamePage,
    IndexPosition, IndexedDeadline, ListOrder, ListQuery, ListedGame, Loaded, LogEntry, NewEntry,
    RetentionIndex, Snapshot, Store, StoreError, StoreResult, WholeGame, request_key, retried,
};
use crate::games::Seat;

/// The embedded store: every game's log in this process's memory (the default; for one replica).
pub struct MemoryStore {
    games: Mutex<Games>,
    /// The tenant directory: its revision, and each tenant's record and generation.
    tenants: Mutex<TenantTable>,
    /// Quota counters (with when they are dropped) and sets, by `<tenant>:<name>`.
    quotas: Mutex<QuotaTable>,
    /// The webhooks' outbox: pending games, delivery cursors and dead letters.
    outbox: Mutex<Outbox>,
    feeds: Feeds,
    /// How long a game's request ids are kept after the last one was written (as in Redis).
    request_id_ttl: Duration,
}

/// The tenant directory: its revision, and each tenant's record and generation by id.
type TenantTable = (u64, HashMap<String, (Vec<u8>, u64)>);

/// Quota counters (with when each is dropped) and quota sets, by `<tenant>:<name>`.
type QuotaTable = (
    HashMap<String, (u64, Instant)>,
    HashMap<String, BTreeSet<String>>,
    HashMap<String, HashMap<String, u64>>,
);

/// The webhooks' outbox as the memory store keeps it.
#[derive(Default)]
struct Outbox {
    /// Pending games: id → (due at ms, first version marked, highest version marked).
    pending: HashMap<String, (u64, u64, u64)>,
    /// The pending games due only for a timer: a mark makes them due at once.
    timers: std::collections::HashSet<String>,
    /// Delivery cursors: game id → webhook id → last version delivered.
    cursors: HashMap<String, HashMap<String, u64>>,
    /// Dead letters by tenant, oldest first.
    dead: HashMap<String, Vec<super::DeadLetter>>,
    /// The turn inbox: (tenant, game id) → (version, who waits).
    waiting: HashMap<(String, String), (u64, Option<Waiting>)>,
    /// Each tenant's event stream: the next sequence number and the kept events.
    events: HashMap<String, (u64, std::collections::VecDeque<(u64, String)>)>,
}

/// Who waits in a game of the turn inbox: (player, seat, deadline, since).
type Waiting = (String, Seat, Option<u64>, u64);

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            games: Mutex::default(),
            tenants: Mutex::default(),
            quotas: Mutex::default(),
            outbox: Mutex::default(),
            feeds: Feeds::default(),
            request_id_ttl: super::DEFAULT_REQUEST_ID_TTL,
        }
    }
}

/// Every game, and the game index: each game's place in a listing (creation time, then id).
#[derive(Default)]
struct Games {
    by_id: HashMap<String, MemoryGame>,
    index: BTreeSet<IndexPosition>,
    /// Pending bot turns → the time (ms) from which they may be claimed.
    bot_turns: HashMap<BotTurn, u64>,
    /// The deadline index: (deadline, game id) of each clocked game still running, kept exact
    /// under the same lock as the appends.
    deadlines: BTreeSet<(u64, String)>,
    /// Each clocked game's indexed deadline and the log version it was computed at.
    deadline_of: HashMap<String, (u64, Option<u64>)>,
}

impl Games {
    /// Lowers `game_id`'s indexed deadline to `deadline_ms` if it is later (or absent), keeping
    /// the version it was recorded at: as the Redis store does before an append whose deadline
    /// comes earlier, so both stores' indexes behave alike.
    fn lower_deadline(&mut self, game_id: &str, deadline_ms: u64) {
        let (version, indexed) = self.deadline_of.get(game_id).copied().unwrap_or((0, None));
        if indexed.is_some_and(|indexed| indexed <= deadline_ms) {
            return;
        }
        if let Some(old) = indexed {
            self.deadlines.remove(&(old, game_id.to_owned()));
        }
        self.deadlines.insert((deadline_ms, game_id.to_owned()));
        self.deadline_of
            .insert(game_id.to_owned(), (version, Some(deadline_ms)));
    }

    /// Indexes `deadline_ms` for `game_id` as of `version`, unless a newer version's is indexed.
    fn set_deadline(&mut self, game_id: &str, version: u64, deadline_ms: Option<u64>) {
        if let Some((indexed_version, indexed)) = self.deadline_of.get(game_id) {
            if *indexed_version > version {
                return;
            }
            if let Some(old) = indexed {
                self.deadlines.remove(&(*old, game_id.to_owned()));
            }
        }
        if let Some(deadline) = deadline_ms {
            self.deadlines.insert((deadline, game_id.to_owned()));
        }
        self.deadline_of
            .insert(game_id.to_owned(), (version, deadline_ms));
    }
}

struct MemoryGame {
    meta: GameMeta,
    /// When the entry that ended the game was appended.
    finished_at_ms: Option<u64>,
    /// When the game was created or its last entry appended (ms since the Unix epoch): what
    /// `--abandon-after` measures.
    active_ms: u64,
    log: Vec<LogEntry>,
    /// Request key → the version it appended.
    requests: HashMap<String, u64>,
    /// When a request id was last written: the index expires as a whole after the TTL, like the
    /// Redis hash does.
    requests_written: Option<Instant>,
    snapshot: Option<Snapshot>,
}

impl MemoryGame {
    /// The version `key` appended, unless the request-id index has expired (then it is dropped).
    fn request(&mut self, key: &str, ttl: Duration) -> Option<u64> {
        if self
            .requests_written
            .is_some_and(|written| written.elapsed() >= ttl)
        {
            self.requests.clear();
            self.requests_written = None;
        }
        self.requests.get(key).copied()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that keeps request ids for `ttl` after a game's last one was written.
    pub fn with_request_id_ttl(ttl: Duration) -> Self {
        MemoryStore {
            request_id_ttl: ttl,
            ..Self::default()
        }
    }

    /// A store whose observer feeds buffer only `capacity` entries: observers that fall further
    /// behind re-read from the log (tests use a tiny capacity to exercise that path).
    pub fn with_feed_capacity(capacity: usize) -> Self {
        MemoryStore {
            feeds: Feeds::with_capacity(capacity),
            ..Self::default()
        }
    }

    fn with_game<T>(
        &self,
        game_id: &str,
        f: impl FnOnce(&mut MemoryGame) -> T,
    ) -> StoreResult<Option<T>> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        Ok(games.by_id.get_mut(game_id).map(f))
    }
}

/// The part of the index a listing reads: from the first place it may start at (inclusive) to
/// the first place past its end (exclusive), by creation time and the page's cursor. (The cursor
/// itself is excluded by [`IndexPosition::follows`].)
fn index_range(query: &ListQuery) -> (Option<IndexPosition>, Option<IndexPosition>) {
    let at = |created_at_ms: u64| IndexPosition {
        created_at_ms,
        game_id: String::new(),
    };
    let mut low = query.filter.created_from_ms.map(at);
    let mut high = query.filter.created_until_ms.map(at);
    if let Some(after) = &query.after {
        match query.order {
            ListOrder::OldestFirst => low = low.max(Some(after.clone())),
            ListOrder::NewestFirst => {
                // Everything before the cursor: up to it, the cursor excluded.
                let cursor = Some(after.clone());
                high = match high {
                    Some(high) => Some(high).min(cursor),
                    None => cursor,
                };
            }
        }
    }
    (low, high)
}

fn poisoned() -> StoreError {
    StoreError::Unavailable("memory store lock poisoned".into())
}

#[async_trait]
impl GameLog for MemoryStore {
    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn create(&self, meta: &GameMeta) -> StoreResult<()> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        if games.by_id.contains_key(&meta.game_id) {
            return Err(StoreError::AlreadyExists(meta.game_id.clone()));
        }
        let game = MemoryGame {
            meta: meta.clone(),
            finished_at_ms: None,
            active_ms: meta.created_at_ms,
            log: Vec::new(),
            requests: HashMap::new(),
            requests_written: None,
            snapshot: None,
        };
        games.by_id.insert(meta.game_id.clone(), game);
        games.index.insert(IndexPosition {
            created_at_ms: meta.created_at_ms,
            game_id: meta.game_id.clone(),
        });
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn load(&self, game_id: &str) -> StoreResult<Option<Loaded>> {
        self.with_game(game_id, |game| {
            let rules_version = &game.meta.rules_version;
            let snapshot = game
                .snapshot
                .clone()
                .filter(|s| &s.rules_version == rules_version);
            let after = snapshot.as_ref().map_or(0, |s| s.version) as usize;
            Loaded {
                meta: game.meta.clone(),
                snapshot,
                entries: game.log[after..].to_vec(),
            }
        })
    }

    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn entries_after(&self, game_id: &str, after: u64) -> StoreResult<Option<Vec<LogEntry>>> {
        self.with_game(game_id, |game| {
            game.log
                .get(after as usize..)
                .map(<[LogEntry]>::to_vec)
                .unwrap_or_default()
        })
    }

    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn append(&self, game_id: &str, expected: u64, entry: &NewEntry) -> StoreResult<Append> {
        let ttl = self.request_id_ttl;
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        let appended = games.by_id.get_mut(game_id).map(|game| {
            if !entry.request_id.is_empty()
                && let Some(version) =
                    game.request(&request_key(entry.seat, &entry.request_id), ttl)
            {
                return (Append::Duplicate { version }, None);
            }
            let current = game.log.len() as u64;
            if current != expected {
                let missing = game.log.get(expected as usize..).map(<[LogEntry]>::to_vec);
                if let Some(version) = retried(entry, missing.as_deref().unwrap_or_default()) {
                    return (Append::Duplicate { version }, None);
                }
                return (
                    Append::Conflict {
                        current,
                        missing: missing.unwrap_or_default(),
                    },
                    None,
                );
            }
            let logged = entry.logged_at(current + 1);
            game.log.push(logged.clone());
            game.active_ms = super::unix_millis();
            if entry.finishes {
                game.finished_at_ms = Some(super::unix_millis());
            }
            if !entry.request_id.is_empty() {
                game.requests
                    .insert(request_key(entry.seat, &entry.request_id), logged.version);
                game.requests_written = Some(Instant::now());
            }
            (
                Append::Appended {
                    version: logged.version,
                },
                Some(logged),
            )
        });
        if let (Some((Append::Appended { version }, _)), Some(change)) = (&appended, entry.deadline)
        {
            // Under the same lock as the append: the index is never behind the log.
            if let Some(after) = change.after_ms
                && change.before_ms.is_none_or(|before| after < before)
            {
                games.lower_deadline(game_id, after);
            }
            games.set_deadline(game_id, *version, change.after_ms);
        }
        drop(games);
        let Some((result, logged)) = appended else {
            return Ok(Append::UnknownGame);
        };
        if let Some(logged) = logged {
            self.feeds.publish(game_id, &logged);
        }
        Ok(result)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn find_request(
        &self,
        game_id: &str,
        seat: Seat,
        request_id: &str,
        at_version: Option<u64>,
    ) -> StoreResult<Option<u64>> {
        let key = request_key(seat, request_id);
        Ok(self
            .with_game(game_id, |game| {
                // The entry right after the version the request was proposed at, then the index.
                let next = at_version
                    .and_then(|version| game.log.get(usize::try_from(version).ok()?))
                    .filter(|entry| entry.seat == seat && entry.request_id == request_id)
                    .map(|entry| entry.version);
                next.or_else(|| game.request(&key, self.request_id_ttl))
            })?
            .flatten())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn save_snapshot(&self, game_id: &str, snapshot: &Snapshot) -> StoreResult<()> {
        self.with_game(game_id, |game| {
            if game
                .snapshot
                .as_ref()
                .is_none_or(|s| s.version < snapshot.version)
            {
                game.snapshot = Some(snapshot.clone());
            }
        })?;
        Ok(())
    }

    async fn subscribe(&self, game_id: &str) -> StoreResult<broadcast::Receiver<LogEntry>> {
        // Appends publish directly; there is nothing to start.
        Ok(self.feeds.subscribe(game_id).0)
    }
}

#[async_trait]
impl GameListing for MemoryStore {
    #[tracing::instrument(level = "debug", skip_all, fields(store = "memory"))]
    async fn list_games(&self, query: &ListQuery) -> StoreResult<GamePage> {
        let games = self.games.lock().map_err(|_| poisoned())?;
        let filter = &query.filter;
        let (low, high) = index_range(query);
        if low
            .as_ref()
            .zip(high.as_ref())
            .is_some_and(|(low, high)| low >= high)
        {
            return Ok(GamePage {
                games: Vec::new(),
                next: None,
            });
        }
        let range = games.index.range((
            low.map_or(Bound::Unbounded, Bound::Included),
            high.map_or(Bound::Unbounded, Bound::Excluded),
        ));
        let in_order: Box<dyn Iterator<Item = &IndexPosition>> = match query.order {
            ListOrder::OldestFirst => Box::new(range),
            ListOrder::NewestFirst => Box::new(range.rev()),
        };
        let mut listed = Vec::new();
        let mut next = None;
        // The index is ordered by creation time only: kind and progress are checked per game. A
        // process's games fit in its memory, and a listing is an operator's occasional call.
        for position in in_order.filter(|position| {
            query
                .after
                .as_ref()
                .is_none_or(|after| position.follows(after, query.order))
        }) {
            let Some(game) = games.by_id.get(&position.game_id) else {
                continue;
            };
            if !filter.admits(
                game.meta.kind,
                game.finished_at_ms.is_some(),
                game.meta.created_at_ms,
            ) || !filter.admits_tenant(game.meta.tenant.as_deref())
            {
                continue;
            }
            if listed.len() == query.limit {
                next = listed.last().map(|last: &ListedGame| IndexPosition {
                    created_at_ms: last.meta.created_at_ms,
                    game_id: last.meta.game_id.clone(),
                });
                break;
            }
            listed.push(ListedGame {
                meta: game.meta.clone(),
                version: game.log.len() as u64,
                finished_at_ms: game.finished_at_ms,
            });
        }
        Ok(GamePage {
            games: listed,
            next,
        })
    }
}

#[async_trait]
impl DeadlineSchedule for MemoryStore {
    async fn set_deadline(
        &self,
        game_id: &str,
        version: u64,
        deadline_ms: Option<u64>,
    ) -> StoreResult<()> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        games.set_deadline(game_id, version, deadline_ms);
        Ok(())
    }

    async fn expired_deadlines(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<IndexedDeadline>> {
        let games = self.games.lock().map_err(|_| poisoned())?;
        Ok(games
            .deadlines
            .range(..(now_ms.saturating_add(1), String::new()))
            .take(limit)
            .map(|(deadline_ms, game_id)| IndexedDeadline {
                game_id: game_id.clone(),
                deadline_ms: *deadline_ms,
            })
            .collect())
    }
}

#[async_trait]
impl BotTurnQueue for MemoryStore {
    async fn mark_bot_turn(&self, turn: &BotTurn, due_ms: u64) -> StoreResult<()> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        games.bot_turns.insert(turn.clone(), due_ms);
        Ok(())
    }

    async fn clear_bot_turn(&self, turn: &BotTurn) -> StoreResult<()> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        games.bot_turns.remove(turn);
        Ok(())
    }

    async fn claim_due_bot_turns(
        &self,
        now_ms: u64,
        claim_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<BotTurn>> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        let mut claimed = Vec::new();
        for (turn, due) in games.bot_turns.iter_mut() {
            if claimed.len() >= limit {
                break;
            }
            if *due <= now_ms {
                *due = claim_until_ms;
                claimed.push(turn.clone());
            }
        }
        Ok(claimed)
    }
}

#[async_trait]
impl RetentionIndex for MemoryStore {
    async fn finished_before(
        &self,
        finished_before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<String>> {
        let games = self.games.lock().map_err(|_| poisoned())?;
        let mut due: Vec<(u64, &String)> = games
            .by_id
            .iter()
            .filter_map(|(id, game)| Some((game.finished_at_ms?, id)))
            .filter(|(finished, _)| *finished < finished_before_ms)
            .collect();
        due.sort_unstable();
        Ok(due
            .into_iter()
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn read_whole(&self, game_id: &str) -> StoreResult<Option<WholeGame>> {
        self.with_game(game_id, |game| WholeGame {
            meta: game.meta.clone(),
            finished_at_ms: game.finished_at_ms,
            entries: game.log.clone(),
        })
    }

    async fn remove_finished(&self, game_id: &str) -> StoreResult<bool> {
        let mut games = self.games.lock().map_err(|_| poisoned())?;
        let Some(game) = games.by_id.get(game_id) else {
            return Ok(true);
        };
        if game.finished_at_ms.is_none() {
            return Ok(false);
        }
        let position = IndexPosition {
            created_at_ms: game.meta.created_at_ms,
            game_id: game_id.to_owned(),
        };
        games.by_id.remove(game_id);
        games.index.remove(&position);
        self.outbox
            .lock()
            .map_err(|_| poisoned())?
            .cursors
            .remove(game_id);
        Ok(true)
    }

    async fn idle_running(
        &self,
        idle_before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<(String, u64)>> {
        let games = self.games.lock().map_err(|_| poisoned())?;
        Ok(games
            .by_id
            .iter()
            .filter(|(_, game)| game.finished_at_ms.is_none() && game.active_ms < idle_before_ms)
            .take(limit)
            .map(|(id, game)| (id.clone(), game.log.len() as u64))
            .collect())
    }
}

#[async_trait]
impl super::TenantDirectory for MemoryStore {
    async fn tenants(&self) -> StoreResult<(u64, Vec<super::StoredTenant>)> {
        let tenants = self.tenants.lock().map_err(|_| poisoned())?;
        let mut listed: Vec<super::StoredTenant> = tenants
            .1
            .iter()
            .map(|(id, (record, generation))| super::StoredTenant {
                id: id.clone(),
                record: record.clone(),
                generation: *generation,
            })
            .collect();
        listed.sort_by(|a, b| a.id.cmp(&b.id));
        Ok((tenants.0, listed))
    }

    async fn tenants_revision(&self) -> StoreResult<u64> {
        Ok(self.tenants.lock().map_err(|_| poisoned())?.0)
    }

    async fn put_tenant(&self, id: &str, record: &[u8], expected: u64) -> StoreResult<Option<u64>> {
        let mut tenants = self.tenants.lock().map_err(|_| poisoned())?;
        let current = tenants.1.get(id).map_or(0, |(_, generation)| *generation);
        if current != expected {
            return Ok(None);
        }
        tenants.0 += 1;
        tenants
            .1
            .insert(id.to_owned(), (record.to_vec(), expected + 1));
        Ok(Some(expected + 1))
    }
}

#[async_trait]
impl super::WebhookOutbox for MemoryStore {
    async fn mark_pending(&self, game_id: &str, version: u64, now_ms: u64) -> StoreResult<()> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let timer = outbox.timers.remove(game_id);
        let entry = outbox
            .pending
            .entry(game_id.to_owned())
            .or_insert((now_ms, version, version));
        entry.2 = entry.2.max(version);
        if timer {
            entry.0 = now_ms;
        }
        Ok(())
    }

    async fn claim_pending(
        &self,
        now_ms: u64,
        lease_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<super::PendingNotifications>> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let outbox = &mut *outbox;
        let mut due: Vec<(&String, &mut (u64, u64, u64))> = outbox
            .pending
            .iter_mut()
            .filter(|(_, (due, _, _))| *due <= now_ms)
            .collect();
        due.sort_by_key(|(_, (due, _, _))| *due);
        Ok(due
            .into_iter()
            .take(limit)
            .map(|(id, entry)| {
                entry.0 = lease_until_ms;
                outbox.timers.remove(id);
                super::PendingNotifications {
                    game_id: id.clone(),
                    from_version: entry.1,
                    marked_version: entry.2,
                }
            })
            .collect())
    }

    async fn claim_game(
        &self,
        game_id: &str,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> StoreResult<Option<super::PendingNotifications>> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let outbox = &mut *outbox;
        Ok(match outbox.pending.get_mut(game_id) {
            Some(entry) if entry.0 <= now_ms => {
                entry.0 = lease_until_ms;
                outbox.timers.remove(game_id);
                Some(super::PendingNotifications {
                    game_id: game_id.to_owned(),
                    from_version: entry.1,
                    marked_version: entry.2,
                })
            }
            _ => None,
        })
    }

    async fn settle_pending(
        &self,
        game_id: &str,
        delivered: Option<u64>,
        again_at_ms: u64,
        timer_at_ms: Option<u64>,
    ) -> StoreResult<super::Settled> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let outbox = &mut *outbox;
        outbox.timers.remove(game_id);
        match (outbox.pending.get_mut(game_id), delivered, timer_at_ms) {
            (Some(entry), delivered, _)
                if delivered.is_none_or(|delivered| entry.2 > delivered) =>
            {
                entry.0 = again_at_ms;
                Ok(super::Settled::DueAgain)
            }
            (_, Some(delivered), Some(timer_at_ms)) => {
                outbox.pending.insert(
                    game_id.to_owned(),
                    (timer_at_ms, delivered.saturating_add(1), delivered),
                );
                outbox.timers.insert(game_id.to_owned());
                Ok(super::Settled::Timer)
            }
            _ => {
                outbox.pending.remove(game_id);
                Ok(super::Settled::Dropped)
            }
        }
    }

    async fn delivery_cursors(&self, game_id: &str) -> StoreResult<HashMap<String, u64>> {
        let outbox = self.outbox.lock().map_err(|_| poisoned())?;
        Ok(outbox.cursors.get(game_id).cloned().unwrap_or_default())
    }

    async fn advance_cursors(&self, game_id: &str, moves: &[(String, u64)]) -> StoreResult<()> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let cursors = outbox.cursors.entry(game_id.to_owned()).or_default();
        for (id, version) in moves {
            let cursor = cursors.entry(id.clone()).or_insert(*version);
            *cursor = (*cursor).max(*version);
        }
        Ok(())
    }

    async fn put_dead_letter(
        &self,
        tenant: &str,
        letter: &super::DeadLetter,
        max: usize,
    ) -> StoreResult<()> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let letters = outbox.dead.entry(tenant.to_owned()).or_default();
        letters.retain(|kept| kept.id != letter.id);
        letters.push(letter.clone());
        letters.sort_by(|a, b| (a.dead_at_ms, &a.id).cmp(&(b.dead_at_ms, &b.id)));
        if letters.len() > max {
            let excess = letters.len() - max;
            letters.drain(..excess);
        }
        Ok(())
    }

    async fn dead_letters(
        &self,
        tenant: &str,
        limit: usize,
    ) -> StoreResult<Vec<super::DeadLetter>> {
        let outbox = self.outbox.lock().map_err(|_| poisoned())?;
        Ok(outbox
            .dead
            .get(tenant)
            .map(|letters| letters.iter().take(limit).cloned().collect())
            .unwrap_or_default())
    }

    async fn remove_dead_letter(&self, tenant: &str, id: &str) -> StoreResult<bool> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let Some(letters) = outbox.dead.get_mut(tenant) else {
            return Ok(false);
        };
        let before = letters.len();
        letters.retain(|kept| kept.id != id);
        Ok(letters.len() < before)
    }
}

#[async_trait]
impl super::TurnInbox for MemoryStore {
    async fn set_waiting(
        &self,
        tenant: &str,
        game_id: &str,
        version: u64,
        waiting: Option<(&str, Seat, Option<u64>)>,
        now_ms: u64,
    ) -> StoreResult<()> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let key = (tenant.to_owned(), game_id.to_owned());
        let previous = outbox.waiting.get(&key).cloned();
        if previous.as_ref().is_some_and(|(at, _)| *at > version) {
            return Ok(());
        }
        let entry = waiting.map(|(player, seat, deadline)| {
            // The same player's seat still waiting keeps its place.
            let since = previous
                .as_ref()
                .and_then(|(_, who)| who.as_ref())
                .filter(|(p, s, _, _)| p == player && *s == seat)
                .map_or(now_ms, |(_, _, _, since)| *since);
            (player.to_owned(), seat, deadline, since)
        });
        outbox.waiting.insert(key, (version, entry));
        Ok(())
    }

    async fn waiting_turns(
        &self,
        tenant: &str,
        player: &str,
        after: Option<(u64, String)>,
        limit: usize,
    ) -> StoreResult<Vec<super::WaitingTurn>> {
        let outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let mut turns: Vec<super::WaitingTurn> = outbox
            .waiting
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .filter_map(|((_, game_id), (version, who))| {
                let (p, seat, deadline, since) = who.as_ref()?;
                (p == player).then(|| super::WaitingTurn {
                    game_id: game_id.clone(),
                    seat: *seat,
                    version: *version,
                    since_ms: *since,
                    deadline_ms: *deadline,
                })
            })
            .filter(|turn| {
                after
                    .as_ref()
                    .is_none_or(|(since, id)| (turn.since_ms, &turn.game_id) > (*since, id))
            })
            .collect();
        turns.sort_by(|a, b| (a.since_ms, &a.game_id).cmp(&(b.since_ms, &b.game_id)));
        turns.truncate(limit);
        Ok(turns)
    }
}

#[async_trait]
impl super::TenantEvents for MemoryStore {
    async fn append_events(&self, tenant: &str, bodies: &[String], keep: usize) -> StoreResult<()> {
        let mut outbox = self.outbox.lock().map_err(|_| poisoned())?;
        let (next, events) = outbox.events.entry(tenant.to_owned()).or_default();
        for body in bodies {
            *next += 1;
            events.push_back((*next, body.clone()));
        }
        while events.len() > keep.max(1) {
            events.pop_front();
        }
        Ok(())
    }

    async fn events_after(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<super::TenantEvent>> {
        let after: u64 = match after {
            None => 0,
            Some(cursor) => cursor
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("event cursor {cursor:?}")))?,
        };
        let outbox = self.outbox.lock().map_err(|_| poisoned())?;
        Ok(outbox
            .events
            .get(tenant)
            .map(|(_, events)| {
                events
                    .iter()
                    .filter(|(sequence, _)| *sequence > after)
                    .take(limit)
                    .map(|(sequence, body)| super::TenantEvent {
                        cursor: sequence.to_string(),
                        body: body.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
}

#[async_trait]
impl super::QuotaCounters for MemoryStore {
    async fn take(
        &self,
        tenant: &str,
        counter: &str,
        want: u64,
        limit: u64,
        ttl: Duration,
    ) -> StoreResult<u64> {
        let mut quotas = self.quotas.lock().map_err(|_| poisoned())?;
        let now = Instant::now();
        quotas.0.retain(|_, (_, until)| *until > now);
        let (used, _) = quotas
            .0
            .entry(format!("{tenant}:{counter}"))
            .or_insert((0, now + ttl));
        let taken = want.min(limit.saturating_sub(*used));
        *used += taken;
        Ok(taken)
    }

    async fn join(&self, tenant: &str, set: &str, member: &str, limit: u64) -> StoreResult<bool> {
        let mut quotas = self.quotas.lock().map_err(|_| poisoned())?;
        let members = quotas.1.entry(format!("{tenant}:{set}")).or_default();
        if members.contains(member) {
            return Ok(true);
        }
        if members.len() as u64 >= limit {
            return Ok(false);
        }
        members.insert(member.to_owned());
        Ok(true)
    }

    async fn leave(&self, tenant: &str, set: &str, member: &str) -> StoreResult<()> {
        let mut quotas = self.quotas.lock().map_err(|_| poisoned())?;
        if let Some(members) = quotas.1.get_mut(&format!("{tenant}:{set}")) {
            members.remove(member);
        }
        Ok(())
    }

    async fn members(&self, tenant: &str, set: &str) -> StoreResult<Vec<String>> {
        let quotas = self.quotas.lock().map_err(|_| poisoned())?;
        Ok(quotas
            .1
            .get(&format!("{tenant}:{set}"))
            .map(|members| members.iter().cloned().collect())
            .unwrap_or_default())
    }

    async fn join_leased(
        &self,
        tenant: &str,
        set: &str,
        member: &str,
        limit: u64,
        now_ms: u64,
        until_ms: u64,
    ) -> StoreResult<bool> {
        let mut quotas = self.quotas.lock().map_err(|_| poisoned())?;
        let members = quotas.2.entry(format!("{tenant}:{set}")).or_default();
        members.retain(|_, until| *until > now_ms);
        if !members.contains_key(member) && members.len() as u64 >= limit {
            return Ok(false);
        }
        members.insert(member.to_owned(), until_ms);
        Ok(true)
    }

    async fn renew_leased(
        &self,
        tenant: &str,
        set: &str,
        members: &[String],
        until_ms: u64,
    ) -> StoreResult<()> {
        let mut quotas = self.quotas.lock().map_err(|_| poisoned())?;
        if let Some(leased) = quotas.2.get_mut(&format!("{tenant}:{set}")) {
            for member in members {
                if let Some(until) = leased.get_mut(member) {
                    *until = until_ms;
                }
            }
        }
        Ok(())
    }

    async fn leave_leased(&self, tenant: &str, set: &str, member: &str) -> StoreResult<()> {
        let mut quotas = self.quotas.lock().map_err(|_| poisoned())?;
        if let Some(leased) = quotas.2.get_mut(&format!("{tenant}:{set}")) {
            leased.remove(member);
        }
        Ok(())
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn ping(&self) -> StoreResult<()> {
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "memory"
    }
}
