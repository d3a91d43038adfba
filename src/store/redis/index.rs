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
//! Each tenant also has an index of its own games: see `index/tenant.rs`.

mod query;
mod tenant;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::join_all;
use redis::{Script, Value};

use self::query::{cursor_of, order_of, parse_shard_page, parse_summary, score_bounds, sets_of};
use super::keys::{
    self, SHARDS, finishing_intents, index_set, retire_set, shard_of, tenant_index_set,
};
use super::{HealingConnection, corrupt, read, unavailable};
use crate::proto::v1::GameKind;
use crate::store::{
    GameMeta, GamePage, IndexPosition, ListOrder, ListQuery, ListedGame, StoreResult, unix_millis,
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

    /// One page of the listing `query` asks for (see [`crate::store::GameListing::list_games`]).
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
    /// the store): in its tenant's index, then in its shard (`retire` and every set of every
    /// kind). Two slots, so two calls.
    pub(super) async fn forget(
        &self,
        connection: &HealingConnection,
        game_id: &str,
        tenant: Option<&str>,
    ) -> StoreResult<()> {
        if let Some(tenant) = tenant {
            let sets = every_kind().flat_map(|kind| {
                [false, true].map(|finished| tenant_index_set(tenant, kind, finished))
            });
            self.forget_in(connection, sets, game_id).await?;
        }
        let shard = shard_of(game_id);
        let sets = every_kind()
            .flat_map(|kind| [false, true].map(|finished| index_set(shard, kind, finished)));
        self.forget_in(
            connection,
            std::iter::once(retire_set(shard)).chain(sets),
            game_id,
        )
        .await
    }

    /// [`FORGET_SCRIPT`] on `sets`, all in one slot.
    async fn forget_in(
        &self,
        connection: &HealingConnection,
        sets: impl Iterator<Item = String>,
        game_id: &str,
    ) -> StoreResult<()> {
        let mut invocation = self.forget.prepare_invoke();
        for set in sets {
            invocation.key(set);
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
