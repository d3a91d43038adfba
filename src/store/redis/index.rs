//! The game index on Redis: which games exist, by creation time, kind and progress, for
//! `AdminService.ListGames` — on a single node and on a Redis Cluster alike.
//!
//! # Layout
//!
//! A game's own keys share its hash tag `{<id>}`, so they live in one slot; an index of every game
//! cannot, and one global key would put every creation and every finished game on one node. So
//! the index is cut into [`SHARDS`] fixed shards, each with its own hash tag `{games-<n>}` (a game
//! belongs to shard `fnv1a(id) mod SHARDS`), which a Cluster spreads over its nodes like any other
//! slots. A shard holds, for each game kind `<k>` (the `tabula.v1.GameKind` number):
//!
//! - `tabula:{games-<n>}:<k>:running` — sorted set: id of each running game, scored by creation
//!   time (ms since the Unix epoch);
//! - `tabula:{games-<n>}:<k>:finished` — sorted set: the same for finished games;
//! - and, for the whole shard, `tabula:{games-<n>}:finishing` — hash: id → `<ms>:<nonce>`, the
//!   games a replica is about to finish (see below).
//!
//! A listing reads every shard (one script each, concurrently; each returns at most a page, merged
//! from the shard's sorted sets that match the filter) and merges the shards' answers. Equal
//! creation times are ordered by id, as a sorted set orders equal scores, so pages never skip or
//! repeat a game.
//!
//! # The log is the truth
//!
//! The index is derived data, kept up to date by the replicas and repaired from the games' own
//! keys when it is found wrong; a listing always reports what each game's meta says:
//!
//! - **creation** adds the game to the shard's `running` set *before* its meta is written: a game
//!   can be listed only once it exists, and an entry whose game never came to exist (its creator
//!   died in between) is found dangling by a listing and removed after [`REPAIR_GRACE`].
//! - **finishing**: the append script marks the meta `finished_at_ms` atomically with the final
//!   entry (the replica says which entry finishes the game: it applied it). Moving the game from
//!   `running` to `finished` is another slot, hence another command after the append. So that a
//!   replica dying in between cannot leave the game listed as running for good, it first records
//!   its intent in the shard's `finishing` hash; the move deletes it. Every listing first resolves
//!   the intents it finds against the games' metas: finished → moved; not finished and older than
//!   [`REPAIR_GRACE`] (the append failed or lost a race) → dropped.
//! - every game a listing returns is checked against its meta (kind, progress, creation time), so
//!   an entry in the wrong set is neither listed under the wrong filter nor left there: it is
//!   moved.
//!
//! # Each tenant's own index
//!
//! A tenant sees only its own games, and the shards hold every tenant's: read through them, a
//! tenant with a few games among millions of others would page through empty pages. So a game
//! a tenant owns is also listed in its tenant's own sets, `tabula:{tgames-<tenant>}:<k>:running`
//! and `:finished` (one hash tag per tenant: its listing reads one slot), kept like the shards':
//!
//! - **creation** adds it there after the shard's entry, before the meta;
//! - **finishing** moves it there *before* the shard's move, which drops the finishing intent: a
//!   replica dying in between leaves the intent, and settling an intent moves both;
//! - **retention** removes it from both;
//! - a tenant's listing settles every shard's finishing intents, then reads its own sets and
//!   checks each game against its meta as above (a game of another tenant, or of none, is
//!   dropped from the set).
//!
//! A tenant's listing reads its own sets only once the store says every tenant game is in them
//! ([`keys::TENANT_INDEX_COMPLETE`]): on a new store from the start, on an older one after `tabula
//! upgrade-store` has filled them from the shards ([`GameIndex::fill_tenant_index`]). Until then it
//! reads the shards and keeps the tenant's games, as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::join_all;
use redis::{Script, Value};

use super::keys::{
    self, SHARDS, finishing_intents, index_set, retire_set, shard_of, tenant_index_set,
    tenant_no_intents,
};
use super::{HealingConnection, as_string, corrupt, field_map, parse_meta, read, unavailable};
use crate::proto::v1::GameKind;
use crate::store::{
    GameFilter, GameMeta, GamePage, IndexPosition, ListOrder, ListQuery, ListedGame, StoreResult,
    unix_millis,
};

/// How long an index entry of a game that does not exist, or a finishing intent of a game that
/// has not finished, is left alone before a listing removes it: far longer than a creation or an
/// append can take (their commands time out within seconds), with a wide margin for replicas'
/// clocks disagreeing.
const REPAIR_GRACE: Duration = Duration::from_secs(600);

/// Reads one page of a shard. KEYS: the shard's `finishing` hash, then the sorted sets to merge.
/// ARGV: `asc` or `desc`; the lowest and highest score (`-inf`, `+inf`, `N` or `(N` as
/// ZRANGEBYSCORE takes them); the cursor's score and id (`''`: no cursor): members with the
/// cursor's score are skipped up to and including the cursor's id; the most entries to return.
///
/// Returns `{intents, entries}`: the `finishing` hash (flat), and up to `limit` entries
/// `id, score, set index (1-based after KEYS[1])` in the listing's order. Ids are compared byte by
/// byte (not with Lua's `<`, which follows the server's locale), as a sorted set orders them.
pub(super) const LIST_SCRIPT: &str = r#"
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local asc = ARGV[1] == 'asc'
local low, high = ARGV[2], ARGV[3]
local has_cursor = ARGV[4] ~= ''
local cursor_score = tonumber(ARGV[4])
local cursor_id = ARGV[5]
local limit = tonumber(ARGV[6])
local function past_cursor(score, id)
  if not has_cursor or score ~= cursor_score then return true end
  if asc then return before(cursor_id, id) else return before(id, cursor_id) end
end
local found = {}
for k = 2, #KEYS do
  local taken, offset = 0, 0
  while taken < limit do
    local batch
    if asc then
      batch = redis.call('ZRANGEBYSCORE', KEYS[k], low, high, 'WITHSCORES', 'LIMIT', offset, limit)
    else
      batch = redis.call('ZREVRANGEBYSCORE', KEYS[k], high, low, 'WITHSCORES', 'LIMIT', offset, limit)
    end
    for i = 1, #batch, 2 do
      local score = tonumber(batch[i + 1])
      if taken < limit and past_cursor(score, batch[i]) then
        taken = taken + 1
        found[#found + 1] = {score, batch[i], batch[i + 1], k - 1}
      end
    end
    if #batch < 2 * limit then break end
    offset = offset + limit
  end
end
table.sort(found, function(a, b)
  if a[1] ~= b[1] then
    if asc then return a[1] < b[1] else return a[1] > b[1] end
  end
  if asc then return before(a[2], b[2]) else return before(b[2], a[2]) end
end)
local entries = {}
for i = 1, math.min(limit, #found) do
  entries[#entries + 1] = found[i][2]
  entries[#entries + 1] = found[i][3]
  entries[#entries + 1] = found[i][4]
end
return {redis.call('HGETALL', KEYS[1]), entries}
"#;

/// A listed game's meta and version. KEYS: meta, log. Nil when the game does not exist.
pub(super) const SUMMARY_SCRIPT: &str = r#"
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
return {meta, redis.call('XLEN', KEYS[2])}
"#;

/// Puts an index entry where it belongs. KEYS: the set it is in (or is said to be in), the set it
/// belongs in, the shard's `finishing` hash, the shard's `retire` set. ARGV: id, creation time,
/// `1` if the game has finished (its finishing intent, if any, is then done with), and when it
/// finished ('' if it has not): the score of its entry in `retire`, where retention finds it.
pub(super) const PLACE_SCRIPT: &str = r#"
if KEYS[1] ~= KEYS[2] then redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
if ARGV[3] == '1' then redis.call('HDEL', KEYS[3], ARGV[1]) end
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1]) end
return 1
"#;

/// Drops every index entry of a game that has left the store (retention). KEYS: every set of the
/// game's shard that may hold it (`retire`, and each kind's `running` and `finished`). ARGV: id.
pub(super) const FORGET_SCRIPT: &str = r#"
for k = 1, #KEYS do redis.call('ZREM', KEYS[k], ARGV[1]) end
return 1
"#;

/// Puts a tenant's index entry where it belongs. KEYS: sets it may wrongly be in, then last the
/// set it belongs in. ARGV: id, creation time.
pub(super) const TENANT_PLACE_SCRIPT: &str = r#"
for k = 1, #KEYS - 1 do
  if KEYS[k] ~= KEYS[#KEYS] then redis.call('ZREM', KEYS[k], ARGV[1]) end
end
redis.call('ZADD', KEYS[#KEYS], ARGV[2], ARGV[1])
return 1
"#;

/// Removes an index entry whose game does not exist. KEYS: the set. ARGV: id.
pub(super) const UNLIST_SCRIPT: &str = r#"
return redis.call('ZREM', KEYS[1], ARGV[1])
"#;

/// Drops a finishing intent if it is still the one given. KEYS: `finishing`. ARGV: id, intent.
pub(super) const DROP_INTENT_SCRIPT: &str = r#"
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"#;

/// Every game kind this build hosts.
fn every_kind() -> impl Iterator<Item = GameKind> {
    (1..).map_while(|number| GameKind::try_from(number).ok())
}

/// The game index's commands, over the store's shared connection.
pub(super) struct GameIndex {
    list: Script,
    summary: Script,
    place: Script,
    unlist: Script,
    drop_intent: Script,
    forget: Script,
    tenant_place: Script,
    /// Whether every tenant's game is in its tenant's own sets ([`keys::TENANT_INDEX_COMPLETE`]),
    /// as last read from the store.
    tenant_index_complete: Arc<AtomicBool>,
}

/// One entry a shard returned: where it is, and the set it came from.
#[derive(Clone, Debug)]
struct Found {
    position: IndexPosition,
    kind: GameKind,
    finished: bool,
}

/// A score bound as ZRANGEBYSCORE takes it.
fn bound(value: Option<u64>, exclusive: bool, infinity: &str) -> String {
    match value {
        None => infinity.to_owned(),
        Some(value) if exclusive => format!("({value}"),
        Some(value) => value.to_string(),
    }
}

impl GameIndex {
    pub(super) fn new(tenant_index_complete: Arc<AtomicBool>) -> Self {
        GameIndex {
            tenant_place: Script::new(TENANT_PLACE_SCRIPT),
            tenant_index_complete,
            list: Script::new(LIST_SCRIPT),
            summary: Script::new(SUMMARY_SCRIPT),
            place: Script::new(PLACE_SCRIPT),
            unlist: Script::new(UNLIST_SCRIPT),
            drop_intent: Script::new(DROP_INTENT_SCRIPT),
            forget: Script::new(FORGET_SCRIPT),
        }
    }

    /// Lists a new game as running: done before its meta is written (see the module docs).
    pub(super) async fn add(
        &self,
        connection: &HealingConnection,
        meta: &GameMeta,
    ) -> StoreResult<()> {
        // NX: a taken id keeps its entry (and its creation time); the create then fails.
        let _: i64 = redis::cmd("ZADD")
            .arg(index_set(shard_of(&meta.game_id), meta.kind, false))
            .arg("NX")
            .arg(meta.created_at_ms)
            .arg(&meta.game_id)
            .query_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        if let Some(tenant) = &meta.tenant {
            let _: i64 = redis::cmd("ZADD")
                .arg(tenant_index_set(tenant, meta.kind, false))
                .arg("NX")
                .arg(meta.created_at_ms)
                .arg(&meta.game_id)
                .query_async(&mut connection.clone())
                .await
                .map_err(unavailable)?;
        }
        Ok(())
    }

    /// Records that a replica is about to append the entry that finishes `game_id`; the intent
    /// to pass to [`GameIndex::finished`] or [`GameIndex::not_finished`].
    pub(super) async fn intend_to_finish(
        &self,
        connection: &HealingConnection,
        game_id: &str,
    ) -> StoreResult<String> {
        let mut nonce = [0u8; 4];
        getrandom::fill(&mut nonce).map_err(|e| corrupt(format!("no OS randomness: {e}")))?;
        let intent = format!("{}:{}", unix_millis(), hex::encode(nonce));
        let _: i64 = redis::cmd("HSET")
            .arg(finishing_intents(shard_of(game_id)))
            .arg(game_id)
            .arg(&intent)
            .query_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(intent)
    }

    /// Moves a game that has just finished to its shard's `finished` set (and drops the intent),
    /// and first to its tenant's, if it has one (see the module docs).
    pub(super) async fn finished(
        &self,
        connection: &HealingConnection,
        game_id: &str,
        kind: GameKind,
        created_at_ms: u64,
        finished_at_ms: u64,
        tenant: Option<&str>,
    ) -> StoreResult<()> {
        if let Some(tenant) = tenant {
            self.place_tenant_entry(connection, tenant, game_id, kind, created_at_ms, true, None)
                .await?;
        }
        let shard = shard_of(game_id);
        self.place_entry(
            connection,
            shard,
            &index_set(shard, kind, false),
            game_id,
            kind,
            created_at_ms,
            Some(finished_at_ms),
        )
        .await
    }

    /// Drops the intent of an append that did not finish the game after all (it lost a race,
    /// or was a retry), unless another replica has recorded a newer one meanwhile.
    pub(super) async fn not_finished(
        &self,
        connection: &HealingConnection,
        game_id: &str,
        intent: &str,
    ) -> StoreResult<()> {
        let _: i64 = self
            .drop_intent
            .key(finishing_intents(shard_of(game_id)))
            .arg(game_id)
            .arg(intent)
            .invoke_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    async fn place_entry(
        &self,
        connection: &HealingConnection,
        shard: u32,
        from: &str,
        game_id: &str,
        kind: GameKind,
        created_at_ms: u64,
        finished_at_ms: Option<u64>,
    ) -> StoreResult<()> {
        let finished = finished_at_ms.is_some();
        let _: i64 = self
            .place
            .key(from)
            .key(index_set(shard, kind, finished))
            .key(finishing_intents(shard))
            .key(retire_set(shard))
            .arg(game_id)
            .arg(created_at_ms)
            .arg(if finished { "1" } else { "0" })
            .arg(finished_at_ms.map(|ms| ms.to_string()).unwrap_or_default())
            .invoke_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// Puts `tenant`'s entry of a game where its progress says (see [`TENANT_PLACE_SCRIPT`]):
    /// out of the other progress's set of its kind and out of `listed_in` (a set it was found
    /// in), into the right one.
    #[allow(clippy::too_many_arguments)]
    async fn place_tenant_entry(
        &self,
        connection: &HealingConnection,
        tenant: &str,
        game_id: &str,
        kind: GameKind,
        created_at_ms: u64,
        finished: bool,
        listed_in: Option<&str>,
    ) -> StoreResult<()> {
        let mut invocation = self
            .tenant_place
            .key(tenant_index_set(tenant, kind, !finished));
        if let Some(listed_in) = listed_in {
            invocation.key(listed_in);
        }
        let _: i64 = invocation
            .key(tenant_index_set(tenant, kind, finished))
            .arg(game_id)
            .arg(created_at_ms)
            .invoke_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// One page of the listing `query` asks for (see [`crate::store::Store::list_games`]).
    pub(super) async fn list(
        &self,
        connection: &HealingConnection,
        query: &ListQuery,
    ) -> StoreResult<GamePage> {
        let limit = query.limit.max(1);
        let sets = sets_of(&query.filter);
        if sets.is_empty() {
            return Ok(GamePage {
                games: Vec::new(),
                next: None,
            });
        }
        // A tenant's listing reads its own index once the store says it is complete.
        let own_index = query
            .filter
            .tenant
            .as_deref()
            .filter(|_| self.tenant_index_complete.load(Ordering::Relaxed));
        let found = match own_index {
            Some(tenant) => {
                self.read_tenant_index(connection, tenant, query, &sets, limit)
                    .await?
            }
            None => {
                let found = self.read_shards(connection, query, &sets, limit).await?;
                if found.resolved_intents {
                    // A game just moved between sets: read the shards again so the page
                    // reflects it.
                    self.read_shards(connection, query, &sets, limit).await?
                } else {
                    found
                }
            }
        };
        let mut entries = found.entries;
        entries.sort_by(|a, b| match query.order {
            ListOrder::OldestFirst => a.position.cmp(&b.position),
            ListOrder::NewestFirst => b.position.cmp(&a.position),
        });
        // A game moving between sets may be in both for a moment: list it once.
        entries.dedup_by(|a, b| a.position == b.position);
        let more = entries.len() > limit;
        entries.truncate(limit);
        let next = more
            .then(|| entries.last().map(|last| last.position.clone()))
            .flatten();

        let summaries = join_all(entries.iter().map(|entry| {
            let game_id = entry.position.game_id.as_str();
            read(connection, move |mut connection| async move {
                self.summary
                    .key(keys::game(game_id, "meta"))
                    .key(keys::game(game_id, "log"))
                    .invoke_async::<Value>(&mut connection)
                    .await
            })
        }))
        .await;
        let mut games = Vec::with_capacity(entries.len());
        for (entry, summary) in entries.iter().zip(summaries) {
            let game = match parse_summary(&entry.position.game_id, summary?)? {
                Some(game) => game,
                None => {
                    self.unlist_if_stale(connection, entry, own_index).await;
                    continue;
                }
            };
            let finished = game.finished_at_ms.is_some();
            let meta = &game.meta;
            let misplaced = meta.kind != entry.kind
                || finished != entry.finished
                || meta.created_at_ms != entry.position.created_at_ms;
            let foreign = own_index.is_some_and(|tenant| meta.tenant.as_deref() != Some(tenant));
            if misplaced || foreign {
                // In the wrong set (or with the wrong score, or in another tenant's index): put
                // it where its meta says.
                if let Err(error) = self.repair(connection, entry, &game, own_index).await {
                    tracing::warn!(game_id = %meta.game_id, %error, "index entry not repaired");
                }
            }
            if query.filter.admits(meta.kind, finished, meta.created_at_ms)
                && query.filter.admits_tenant(meta.tenant.as_deref())
            {
                games.push(game);
            }
        }
        Ok(GamePage { games, next })
    }

    /// Puts the entries of a listed game where its meta says: in its shard and, if it has a
    /// tenant, in its tenant's index; and out of `read_from` (the tenant index the entry was
    /// read from, if not the shards).
    async fn repair(
        &self,
        connection: &HealingConnection,
        entry: &Found,
        game: &ListedGame,
        read_from: Option<&str>,
    ) -> StoreResult<()> {
        let meta = &game.meta;
        let finished = game.finished_at_ms.is_some();
        let listed_in =
            read_from.map(|tenant| tenant_index_set(tenant, entry.kind, entry.finished));
        // Read from another tenant's index (or a game of none): out of it, on its own, since
        // two tenants' sets are in two slots.
        let foreign = read_from.is_some_and(|tenant| meta.tenant.as_deref() != Some(tenant));
        if foreign && let Some(listed_in) = &listed_in {
            let _: i64 = self
                .unlist
                .key(listed_in)
                .arg(&meta.game_id)
                .invoke_async(&mut connection.clone())
                .await
                .map_err(unavailable)?;
        }
        if let Some(tenant) = meta.tenant.as_deref() {
            self.place_tenant_entry(
                connection,
                tenant,
                &meta.game_id,
                meta.kind,
                meta.created_at_ms,
                finished,
                listed_in.as_deref().filter(|_| !foreign),
            )
            .await?;
        }
        let shard = shard_of(&meta.game_id);
        self.place_entry(
            connection,
            shard,
            &index_set(shard, entry.kind, entry.finished),
            &meta.game_id,
            meta.kind,
            meta.created_at_ms,
            game.finished_at_ms,
        )
        .await
    }

    /// Reads a page of `tenant`'s own index, after settling every shard's finishing intents (so
    /// that a game whose finishing replica died before moving it is read where it belongs).
    async fn read_tenant_index(
        &self,
        connection: &HealingConnection,
        tenant: &str,
        query: &ListQuery,
        sets: &[(GameKind, bool)],
        limit: usize,
    ) -> StoreResult<ShardPages> {
        self.settle_intents(connection).await?;
        let (low, high) = score_bounds(query);
        let (cursor_score, cursor_id) = cursor_of(query);
        let (low, high, cursor_score) = (&low, &high, &cursor_score);
        let reply = read(connection, |mut connection| async move {
            let mut invocation = self.list.key(tenant_no_intents(tenant));
            for &(kind, finished) in sets {
                invocation.key(tenant_index_set(tenant, kind, finished));
            }
            invocation
                .arg(order_of(query))
                .arg(low)
                .arg(high)
                .arg(cursor_score)
                .arg(cursor_id)
                .arg(limit + 1)
                .invoke_async::<Value>(&mut connection)
                .await
        })
        .await?;
        let (_, entries) = parse_shard_page(reply, sets)?;
        Ok(ShardPages {
            entries,
            resolved_intents: false,
        })
    }

    /// Settles every shard's finishing intents against the games' metas.
    async fn settle_intents(&self, connection: &HealingConnection) -> StoreResult<()> {
        let replies = join_all((0..SHARDS).map(|shard| {
            read(connection, move |mut connection| async move {
                redis::cmd("HGETALL")
                    .arg(finishing_intents(shard))
                    .query_async::<Vec<(String, String)>>(&mut connection)
                    .await
            })
        }))
        .await;
        for (shard, reply) in (0..SHARDS).zip(replies) {
            for (game_id, intent) in reply? {
                self.resolve_intent(connection, shard, &game_id, &intent)
                    .await?;
            }
        }
        Ok(())
    }

    /// Fills every tenant's own index from the shards (`tabula upgrade-store`, on a store whose
    /// tenant games were created before replicas kept it): each entry of every shard whose game
    /// has a tenant is put in that tenant's sets where its progress says. Returns how many
    /// entries it placed. Entries that turn out wrong later are repaired by listings as usual.
    pub(super) async fn fill_tenant_index(
        &self,
        connection: &HealingConnection,
    ) -> StoreResult<u64> {
        /// Entries read from a set at a time.
        const BATCH: usize = 500;
        let mut placed = 0;
        for shard in 0..SHARDS {
            for kind in every_kind() {
                for finished in [false, true] {
                    let set = index_set(shard, kind, finished);
                    let mut start = 0usize;
                    loop {
                        let batch: Vec<(String, u64)> = read(connection, |mut connection| {
                            let set = &set;
                            async move {
                                redis::cmd("ZRANGE")
                                    .arg(set)
                                    .arg(start)
                                    .arg(start + BATCH - 1)
                                    .arg("WITHSCORES")
                                    .query_async(&mut connection)
                                    .await
                            }
                        })
                        .await?;
                        let owners = join_all(batch.iter().map(|(game_id, _)| {
                            read(connection, move |mut connection| async move {
                                redis::cmd("HGET")
                                    .arg(keys::game(game_id, "meta"))
                                    .arg("tenant")
                                    .query_async::<Option<String>>(&mut connection)
                                    .await
                            })
                        }))
                        .await;
                        for ((game_id, created_at_ms), owner) in batch.iter().zip(owners) {
                            if let Some(tenant) = owner? {
                                self.place_tenant_entry(
                                    connection,
                                    &tenant,
                                    game_id,
                                    kind,
                                    *created_at_ms,
                                    finished,
                                    None,
                                )
                                .await?;
                                placed += 1;
                            }
                        }
                        if batch.len() < BATCH {
                            break;
                        }
                        start += BATCH;
                    }
                }
            }
        }
        Ok(placed)
    }

    /// Reads a page from every shard, resolving the finishing intents they hold.
    async fn read_shards(
        &self,
        connection: &HealingConnection,
        query: &ListQuery,
        sets: &[(GameKind, bool)],
        limit: usize,
    ) -> StoreResult<ShardPages> {
        // One more than a page, to know whether there is a next one.
        let wanted = limit + 1;
        let (low, high) = score_bounds(query);
        let (cursor_score, cursor_id) = cursor_of(query);
        let order = order_of(query);
        let replies = join_all((0..SHARDS).map(|shard| {
            let (low, high, cursor_score) = (&low, &high, &cursor_score);
            read(connection, move |mut connection| async move {
                let mut invocation = self.list.key(finishing_intents(shard));
                for &(kind, finished) in sets {
                    invocation.key(index_set(shard, kind, finished));
                }
                invocation
                    .arg(order)
                    .arg(low)
                    .arg(high)
                    .arg(cursor_score)
                    .arg(cursor_id)
                    .arg(wanted)
                    .invoke_async::<Value>(&mut connection)
                    .await
            })
        }))
        .await;
        let mut pages = ShardPages::default();
        for (shard, reply) in (0..SHARDS).zip(replies) {
            let (intents, entries) = parse_shard_page(reply?, sets)?;
            pages.entries.extend(entries);
            for (game_id, intent) in intents {
                pages.resolved_intents |= self
                    .resolve_intent(connection, shard, &game_id, &intent)
                    .await?;
            }
        }
        Ok(pages)
    }

    /// Settles one finishing intent against the game's meta (see the module docs); true when
    /// the game was moved.
    async fn resolve_intent(
        &self,
        connection: &HealingConnection,
        shard: u32,
        game_id: &str,
        intent: &str,
    ) -> StoreResult<bool> {
        let fields: Vec<Option<String>> = read(connection, |mut connection| async move {
            redis::cmd("HMGET")
                .arg(keys::game(game_id, "meta"))
                .arg("kind")
                .arg("created_at_ms")
                .arg("finished_at_ms")
                .arg("tenant")
                .query_async(&mut connection)
                .await
        })
        .await?;
        let tenant = fields.get(3).cloned().flatten();
        let number = |index: usize| -> Option<i64> {
            fields
                .get(index)
                .cloned()
                .flatten()
                .and_then(|f| f.parse().ok())
        };
        let kind = number(0).and_then(|n| GameKind::try_from(n as i32).ok());
        match (kind, number(1), number(2)) {
            (Some(kind), Some(created_at_ms), Some(finished_at_ms)) => {
                // The tenant's index first: the shard's move drops the intent.
                if let Some(tenant) = &tenant {
                    self.place_tenant_entry(
                        connection,
                        tenant,
                        game_id,
                        kind,
                        created_at_ms as u64,
                        true,
                        None,
                    )
                    .await?;
                }
                self.place_entry(
                    connection,
                    shard,
                    &index_set(shard, kind, false),
                    game_id,
                    kind,
                    created_at_ms as u64,
                    Some(finished_at_ms as u64),
                )
                .await?;
                Ok(true)
            }
            _ => {
                let written = intent
                    .split_once(':')
                    .and_then(|(ms, _)| ms.parse::<u64>().ok())
                    .unwrap_or(0);
                if is_stale(written) {
                    self.not_finished(connection, game_id, intent).await?;
                }
                Ok(false)
            }
        }
    }

    /// Retention: up to `limit` games of every shard that finished before `before_ms`, oldest
    /// first, after settling the shards' finishing intents (so a game whose finishing replica
    /// died before moving it in the index is found too, without waiting for a listing).
    pub(super) async fn finished_before(
        &self,
        connection: &HealingConnection,
        before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<String>> {
        let replies = join_all((0..SHARDS).map(|shard| {
            read(connection, move |mut connection| async move {
                let intents: Vec<(String, String)> = redis::cmd("HGETALL")
                    .arg(finishing_intents(shard))
                    .query_async(&mut connection)
                    .await?;
                let due: Vec<(String, u64)> = redis::cmd("ZRANGEBYSCORE")
                    .arg(retire_set(shard))
                    .arg("-inf")
                    .arg(format!("({before_ms}"))
                    .arg("WITHSCORES")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(limit)
                    .query_async(&mut connection)
                    .await?;
                Ok((intents, due))
            })
        }))
        .await;
        let mut due = Vec::new();
        for (shard, reply) in (0..SHARDS).zip(replies) {
            let (intents, shard_due) = reply?;
            for (game_id, intent) in intents {
                // Best effort: an intent that cannot be settled now is settled by a later pass.
                if let Err(error) = self
                    .resolve_intent(connection, shard, &game_id, &intent)
                    .await
                {
                    tracing::warn!(%game_id, %error, "finishing intent not settled");
                }
            }
            due.extend(shard_due.into_iter().map(|(id, at)| (at, id)));
        }
        due.sort_unstable();
        Ok(due.into_iter().take(limit).map(|(_, id)| id).collect())
    }

    /// Drops every index entry of `game_id`, owned by `tenant` (retention: the game has left
    /// the store).
    pub(super) async fn forget(
        &self,
        connection: &HealingConnection,
        game_id: &str,
        tenant: Option<&str>,
    ) -> StoreResult<()> {
        if let Some(tenant) = tenant {
            let mut invocation = self.forget.prepare_invoke();
            for kind in every_kind() {
                invocation
                    .key(tenant_index_set(tenant, kind, false))
                    .key(tenant_index_set(tenant, kind, true));
            }
            let _: i64 = invocation
                .arg(game_id)
                .invoke_async(&mut connection.clone())
                .await
                .map_err(unavailable)?;
        }
        let shard = shard_of(game_id);
        let mut invocation = self.forget.key(retire_set(shard));
        for kind in every_kind() {
            invocation
                .key(index_set(shard, kind, false))
                .key(index_set(shard, kind, true));
        }
        let _: i64 = invocation
            .arg(game_id)
            .invoke_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// Abandonment: up to `limit` running games created before `created_before_ms`, walking the
    /// shards' `running` sets from `cursor` (a set's place in [`running_sets`] and an offset in
    /// it), which is advanced: successive calls cover every running game in turn, however few
    /// each examines. Returns the ids found.
    pub(super) async fn running_created_before(
        &self,
        connection: &HealingConnection,
        created_before_ms: u64,
        limit: usize,
        cursor: &mut (usize, usize),
    ) -> StoreResult<Vec<String>> {
        let sets = running_sets();
        let mut found = Vec::new();
        for _ in 0..sets.len() {
            if found.len() >= limit {
                break;
            }
            let (set, offset) = *cursor;
            let key = &sets[set % sets.len()];
            let wanted = limit - found.len();
            let batch: Vec<String> = read(connection, |mut connection| async move {
                redis::cmd("ZRANGEBYSCORE")
                    .arg(key)
                    .arg("-inf")
                    .arg(format!("({created_before_ms}"))
                    .arg("LIMIT")
                    .arg(offset)
                    .arg(wanted)
                    .query_async(&mut connection)
                    .await
            })
            .await?;
            if batch.len() < wanted {
                *cursor = ((set + 1) % sets.len(), 0);
            } else {
                *cursor = (set, offset + batch.len());
            }
            found.extend(batch);
        }
        Ok(found)
    }

    /// Removes the entry of a game that does not exist, once it is too old to be one still being
    /// created. Best effort: a failure leaves it for the next listing.
    /// `read_from`: the tenant index it was read from, if not the shards.
    async fn unlist_if_stale(
        &self,
        connection: &HealingConnection,
        entry: &Found,
        read_from: Option<&str>,
    ) {
        if !is_stale(entry.position.created_at_ms) {
            return;
        }
        let set = match read_from {
            Some(tenant) => tenant_index_set(tenant, entry.kind, entry.finished),
            None => index_set(
                shard_of(&entry.position.game_id),
                entry.kind,
                entry.finished,
            ),
        };
        let result: redis::RedisResult<i64> = self
            .unlist
            .key(set)
            .arg(&entry.position.game_id)
            .invoke_async(&mut connection.clone())
            .await;
        if let Err(error) = result {
            tracing::warn!(game_id = %entry.position.game_id, %error, "dangling index entry not removed");
        }
    }
}

/// Every shard's `running` set of every kind, in a fixed order (abandonment walks them).
fn running_sets() -> Vec<String> {
    (0..SHARDS)
        .flat_map(|shard| every_kind().map(move |kind| index_set(shard, kind, false)))
        .collect()
}

/// What the shards returned for one page.
#[derive(Default)]
struct ShardPages {
    entries: Vec<Found>,
    /// A finishing intent moved a game: the entries may be out of date.
    resolved_intents: bool,
}

/// Whether something written at `written_ms` is older than [`REPAIR_GRACE`].
fn is_stale(written_ms: u64) -> bool {
    unix_millis().saturating_sub(written_ms) > REPAIR_GRACE.as_millis() as u64
}

/// The sorted sets (kind, finished) a filter reads.
fn sets_of(filter: &GameFilter) -> Vec<(GameKind, bool)> {
    let progress: &[bool] = match filter.finished {
        None => &[false, true],
        Some(false) => &[false],
        Some(true) => &[true],
    };
    let kinds: Vec<GameKind> = match filter.kind {
        Some(kind) => vec![kind],
        None => every_kind().collect(),
    };
    kinds
        .into_iter()
        .flat_map(|kind| progress.iter().map(move |&finished| (kind, finished)))
        .collect()
}

/// The listing script's order argument.
fn order_of(query: &ListQuery) -> &'static str {
    match query.order {
        ListOrder::OldestFirst => "asc",
        ListOrder::NewestFirst => "desc",
    }
}

/// The listing script's cursor arguments: its score and id (both empty without a cursor).
fn cursor_of(query: &ListQuery) -> (String, &str) {
    match &query.after {
        Some(after) => (after.created_at_ms.to_string(), after.game_id.as_str()),
        None => (String::new(), ""),
    }
}

/// The lowest and highest score a page reads, as ZRANGEBYSCORE takes them: the filter's time
/// range narrowed by the cursor (whose own score is included: the script skips up to its id).
fn score_bounds(query: &ListQuery) -> (String, String) {
    let filter = &query.filter;
    let mut low = filter.created_from_ms;
    let mut high = filter.created_until_ms;
    let mut high_exclusive = true;
    if let Some(after) = &query.after {
        let cursor = after.created_at_ms;
        match query.order {
            ListOrder::OldestFirst => low = Some(low.map_or(cursor, |low| low.max(cursor))),
            ListOrder::NewestFirst => {
                if high.is_none_or(|high| cursor < high) {
                    high = Some(cursor);
                    high_exclusive = false;
                }
            }
        }
    }
    (
        bound(low, false, "-inf"),
        bound(high, high_exclusive, "+inf"),
    )
}

/// A score as Redis writes it (integral here: milliseconds).
fn parse_score(text: &str) -> StoreResult<u64> {
    text.parse::<u64>()
        .ok()
        .or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|score| *score >= 0.0)
                .map(|score| score as u64)
        })
        .ok_or_else(|| corrupt(format!("index score {text:?} is not a time")))
}

/// A shard's finishing intents: (game id, intent).
type Intents = Vec<(String, String)>;

/// A shard's answer: its finishing intents and its entries.
fn parse_shard_page(reply: Value, sets: &[(GameKind, bool)]) -> StoreResult<(Intents, Vec<Found>)> {
    let Value::Array(parts) = reply else {
        return Err(corrupt(format!("unexpected index reply {reply:?}")));
    };
    let [intents, entries]: [Value; 2] =
        parts.try_into().map_err(|_| corrupt("index reply shape"))?;
    let intents = field_map(intents)?
        .into_iter()
        .map(|(game_id, intent)| (game_id, String::from_utf8_lossy(&intent).into_owned()))
        .collect();
    let Value::Array(flat) = entries else {
        return Err(corrupt("index entries are not an array"));
    };
    let mut found = Vec::with_capacity(flat.len() / 3);
    let mut items = flat.into_iter();
    while let (Some(id), Some(score), Some(set)) = (items.next(), items.next(), items.next()) {
        let set = match set {
            Value::Int(n) => usize::try_from(n).ok(),
            other => as_string(other)?.parse().ok(),
        }
        .and_then(|n: usize| n.checked_sub(1))
        .and_then(|n| sets.get(n))
        .ok_or_else(|| corrupt("index entry names no set"))?;
        found.push(Found {
            position: IndexPosition {
                created_at_ms: parse_score(&as_string(score)?)?,
                game_id: as_string(id)?,
            },
            kind: set.0,
            finished: set.1,
        });
    }
    Ok((intents, found))
}

/// A listed game from [`SUMMARY_SCRIPT`]'s reply; `None` when the game does not exist.
fn parse_summary(game_id: &str, reply: Value) -> StoreResult<Option<ListedGame>> {
    let parts = match reply {
        Value::Nil => return Ok(None),
        Value::Array(parts) => parts,
        other => return Err(corrupt(format!("unexpected summary reply {other:?}"))),
    };
    let [meta, version]: [Value; 2] = parts
        .try_into()
        .map_err(|_| corrupt("summary reply shape"))?;
    let fields = field_map(meta)?;
    let finished_at_ms = fields
        .iter()
        .find(|(name, _)| name == "finished_at_ms")
        .and_then(|(_, value)| std::str::from_utf8(value).ok()?.parse().ok());
    let version = match version {
        Value::Int(n) => u64::try_from(n).map_err(|_| corrupt("negative log length"))?,
        other => return Err(corrupt(format!("unexpected log length {other:?}"))),
    };
    Ok(Some(ListedGame {
        meta: parse_meta(game_id, &fields)?,
        version,
        finished_at_ms,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_stable_and_spread() {
        // Fixed values: a game's shard must never change between builds.
        assert_eq!(shard_of(""), 0x811c_9dc5 % SHARDS);
        assert_eq!(shard_of("a"), 0xe40c_292c % SHARDS);
        let mut seen = std::collections::HashSet::new();
        for n in 0..1000u32 {
            seen.insert(shard_of(&format!("{n:032x}")));
        }
        assert_eq!(seen.len(), SHARDS as usize, "every shard gets games");
    }

    #[test]
    fn index_keys_carry_their_shard_tag() {
        assert_eq!(
            index_set(3, GameKind::Manila, true),
            "tabula:{games-3}:3:finished"
        );
        assert_eq!(
            index_set(15, GameKind::MediciVsStrozzi, false),
            "tabula:{games-15}:1:running"
        );
        assert_eq!(finishing_intents(0), "tabula:{games-0}:finishing");
    }

    #[test]
    fn the_cursor_narrows_the_score_range() {
        let query = |order, after: Option<u64>| ListQuery {
            filter: GameFilter {
                created_from_ms: Some(100),
                created_until_ms: Some(200),
                ..GameFilter::default()
            },
            order,
            after: after.map(|created_at_ms| IndexPosition {
                created_at_ms,
                game_id: "g".into(),
            }),
            limit: 10,
        };
        assert_eq!(
            score_bounds(&query(ListOrder::OldestFirst, None)),
            ("100".into(), "(200".into())
        );
        assert_eq!(
            score_bounds(&query(ListOrder::OldestFirst, Some(150))),
            ("150".into(), "(200".into())
        );
        assert_eq!(
            score_bounds(&query(ListOrder::NewestFirst, Some(150))),
            ("100".into(), "150".into())
        );
        let open = ListQuery {
            filter: GameFilter::default(),
            ..query(ListOrder::NewestFirst, None)
        };
        assert_eq!(score_bounds(&open), ("-inf".into(), "+inf".into()));
    }

    #[test]
    fn filters_read_only_their_sets() {
        assert_eq!(
            sets_of(&GameFilter::default()).len(),
            every_kind().count() * 2
        );
        let finished_manila = GameFilter {
            kind: Some(GameKind::Manila),
            finished: Some(true),
            ..GameFilter::default()
        };
        assert_eq!(sets_of(&finished_manila), vec![(GameKind::Manila, true)]);
    }
}
