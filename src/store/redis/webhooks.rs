//! The webhooks' outbox on Redis (see [`crate::store::WebhookOutbox`]).
//!
//! # Layout
//!
//! A pending game cannot live in its game's slot and still be found by a replica that does not
//! know the game, so, as the deadline index and the bot turns do, pending games are cut into
//! [`SHARDS`] shards with hash tags of their own, `{webhooks-<n>}` (a game's shard is its index
//! shard, `fnv1a(id) mod SHARDS`):
//!
//! - `tabula:{webhooks-<n>}:due` — sorted set: id of each game with notifications to deliver,
//!   scored by when a replica may next claim it (a claim pushes it forward by its lease);
//! - `tabula:{webhooks-<n>}:marks` — hash: id → `<first version marked>:<highest version
//!   marked>` since the game last had nothing pending;
//! - `tabula:{webhooks-<n>}:timers` — set: ids of the games in `due` only for a timer (a clock
//!   running low): a mark makes such a game due at once, where it leaves a lease or a backoff
//!   alone.
//!
//! In the game's own slot, `tabula:{<id>}:hooks` — hash: webhook id → the last version whose
//! notifications it has all had (removed with the game). A tenant's dead letters are `tabula:{hooks-dead-<tenant>}:letters`
//! (hash: letter id → `<dead at ms>:<record>`), capped by the service.
//!
//! # Why a write-ahead mark is enough
//!
//! The committing replica marks the game *before* it appends (the append script cannot reach the
//! shard's slot on a Cluster). An entry that is appended was therefore marked first; a mark whose
//! append failed only makes a replica look at the game and find nothing new. Settling drops a
//! pending game only if no higher version was marked meanwhile, in one script of the shard's slot.

use std::collections::HashMap;

use async_trait::async_trait;
use redis::Script;
use std::sync::LazyLock;

use super::keys::{SHARDS, game, shard_of};
use super::{RedisStore, corrupt, read, unavailable};
use crate::store::{DeadLetter, PendingNotifications, Settled, StoreResult, WebhookOutbox};

fn due_key(shard: u32) -> String {
    format!("tabula:{{webhooks-{shard}}}:due")
}

fn marks_key(shard: u32) -> String {
    format!("tabula:{{webhooks-{shard}}}:marks")
}

fn timers_key(shard: u32) -> String {
    format!("tabula:{{webhooks-{shard}}}:timers")
}

fn dead_key(tenant: &str) -> String {
    format!("tabula:{{hooks-dead-{tenant}}}:letters")
}

/// Marks game `ARGV[1]` up to version `ARGV[2]`, due at `ARGV[3]` unless already pending for a
/// lease or a backoff (a timer is brought forward). KEYS: due, marks, timers.
pub(super) const MARK_SCRIPT: &str = r#"
if redis.call('SREM', KEYS[3], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
local mark = redis.call('HGET', KEYS[2], ARGV[1])
if not mark then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
local colon = string.find(mark, ':', 1, true)
local high = tonumber(string.sub(mark, colon + 1))
if tonumber(ARGV[2]) > high then
  redis.call('HSET', KEYS[2], ARGV[1], string.sub(mark, 1, colon) .. ARGV[2])
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"#;

/// Claims up to `ARGV[3]` games due at `ARGV[1]`, leasing them until `ARGV[2]`. KEYS: due, marks,
/// timers. Returns `{id, mark, id, mark, …}`.
pub(super) const CLAIM_SCRIPT: &str = r#"
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local claimed = {}
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
  redis.call('SREM', KEYS[3], id)
  claimed[#claimed + 1] = id
  claimed[#claimed + 1] = redis.call('HGET', KEYS[2], id) or '0:0'
end
return claimed
"#;

/// Claims game `ARGV[1]` alone if it is due at `ARGV[2]`, leasing it until `ARGV[3]`. KEYS: due,
/// marks, timers. Returns its mark, or nil.
pub(super) const CLAIM_ONE_SCRIPT: &str = r#"
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return false end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
return redis.call('HGET', KEYS[2], ARGV[1]) or '0:0'
"#;

/// Drops game `ARGV[1]` if nothing above version `ARGV[2]` is marked, else makes it due at
/// `ARGV[3]`; with `ARGV[2]` empty, only makes it due at `ARGV[3]` (if still pending). Instead of
/// dropping it, with a timer `ARGV[4]` (not empty), keeps it due then, as a timer, marked as
/// delivered up to `ARGV[2]`. KEYS: due, marks, timers. Returns 1 if dropped, 2 if kept for its
/// timer, else 0.
pub(super) const SETTLE_SCRIPT: &str = r#"
redis.call('SREM', KEYS[3], ARGV[1])
if ARGV[2] == '' then
  redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
  return 0
end
local mark = redis.call('HGET', KEYS[2], ARGV[1])
if mark then
  local colon = string.find(mark, ':', 1, true)
  if tonumber(string.sub(mark, colon + 1)) > tonumber(ARGV[2]) then
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
    return 0
  end
end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
  redis.call('SADD', KEYS[3], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], (tonumber(ARGV[2]) + 1) .. ':' .. ARGV[2])
  return 2
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"#;

/// Moves each cursor `ARGV[i]` of hash `KEYS[1]` to `ARGV[i + 1]` (i = 1, 3, …), never back.
pub(super) const ADVANCE_SCRIPT: &str = r#"
for i = 1, #ARGV, 2 do
  local cursor = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '-1')
  if tonumber(ARGV[i + 1]) > cursor then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return 1
"#;

/// Keeps dead letter `ARGV[1]` (`<dead at>:<record>` `ARGV[2]`) in `KEYS[1]`, then drops the oldest
/// beyond `ARGV[3]`.
pub(super) const PUT_DEAD_SCRIPT: &str = r#"
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local count = redis.call('HLEN', KEYS[1])
local max = tonumber(ARGV[3])
if count > max then
  local all = redis.call('HGETALL', KEYS[1])
  local letters = {}
  for i = 1, #all, 2 do
    local colon = string.find(all[i + 1], ':', 1, true)
    letters[#letters + 1] = {tonumber(string.sub(all[i + 1], 1, colon - 1)), all[i]}
  end
  table.sort(letters, function(a, b) return a[1] < b[1] end)
  for i = 1, count - max do redis.call('HDEL', KEYS[1], letters[i][2]) end
end
return 1
"#;

static MARK: LazyLock<Script> = LazyLock::new(|| Script::new(MARK_SCRIPT));
static CLAIM: LazyLock<Script> = LazyLock::new(|| Script::new(CLAIM_SCRIPT));
static SETTLE: LazyLock<Script> = LazyLock::new(|| Script::new(SETTLE_SCRIPT));
static CLAIM_ONE: LazyLock<Script> = LazyLock::new(|| Script::new(CLAIM_ONE_SCRIPT));
static ADVANCE: LazyLock<Script> = LazyLock::new(|| Script::new(ADVANCE_SCRIPT));
static PUT_DEAD: LazyLock<Script> = LazyLock::new(|| Script::new(PUT_DEAD_SCRIPT));

/// `<first>:<high>` as the marks hash holds it.
fn parse_mark(mark: &str) -> StoreResult<(u64, u64)> {
    let parsed = mark
        .split_once(':')
        .and_then(|(first, high)| Some((first.parse().ok()?, high.parse().ok()?)));
    parsed.ok_or_else(|| corrupt(format!("webhook mark {mark:?} is not <first>:<high>")))
}

/// `<dead at>:<record>` as the dead letters hash holds it.
fn parse_letter(id: String, stored: &[u8]) -> StoreResult<DeadLetter> {
    let colon = stored
        .iter()
        .position(|byte| *byte == b':')
        .ok_or_else(|| corrupt("dead letter without its time"))?;
    let dead_at_ms = std::str::from_utf8(&stored[..colon])
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| corrupt("dead letter with a bad time"))?;
    Ok(DeadLetter {
        id,
        dead_at_ms,
        record: stored[colon + 1..].to_vec(),
    })
}

#[async_trait]
impl WebhookOutbox for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn mark_pending(&self, game_id: &str, version: u64, now_ms: u64) -> StoreResult<()> {
        let shard = shard_of(game_id);
        let _: i64 = MARK
            .key(due_key(shard))
            .key(marks_key(shard))
            .key(timers_key(shard))
            .arg(game_id)
            .arg(version)
            .arg(now_ms)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn claim_pending(
        &self,
        now_ms: u64,
        lease_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<PendingNotifications>> {
        // One shard after another, each asked for what the limit leaves (as the bot turns).
        let mut claimed = Vec::new();
        for shard in 0..SHARDS {
            let remaining = limit.saturating_sub(claimed.len());
            if remaining == 0 {
                break;
            }
            let reply: Vec<String> = CLAIM
                .key(due_key(shard))
                .key(marks_key(shard))
                .key(timers_key(shard))
                .arg(now_ms)
                .arg(lease_until_ms)
                .arg(remaining)
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(unavailable)?;
            for pair in reply.chunks(2) {
                let [game_id, mark] = pair else {
                    return Err(corrupt("webhook claim reply shape"));
                };
                let (from_version, marked_version) = parse_mark(mark)?;
                claimed.push(PendingNotifications {
                    game_id: game_id.clone(),
                    from_version,
                    marked_version,
                });
            }
        }
        Ok(claimed)
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn claim_game(
        &self,
        game_id: &str,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> StoreResult<Option<PendingNotifications>> {
        let shard = shard_of(game_id);
        let mark: Option<String> = CLAIM_ONE
            .key(due_key(shard))
            .key(marks_key(shard))
            .key(timers_key(shard))
            .arg(game_id)
            .arg(now_ms)
            .arg(lease_until_ms)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        mark.map(|mark| {
            let (from_version, marked_version) = parse_mark(&mark)?;
            Ok(PendingNotifications {
                game_id: game_id.to_owned(),
                from_version,
                marked_version,
            })
        })
        .transpose()
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn settle_pending(
        &self,
        game_id: &str,
        delivered: Option<u64>,
        again_at_ms: u64,
        timer_at_ms: Option<u64>,
    ) -> StoreResult<Settled> {
        let shard = shard_of(game_id);
        let settled: i64 = SETTLE
            .key(due_key(shard))
            .key(marks_key(shard))
            .key(timers_key(shard))
            .arg(game_id)
            .arg(
                delivered
                    .map(|version| version.to_string())
                    .unwrap_or_default(),
            )
            .arg(again_at_ms)
            .arg(timer_at_ms.map(|at| at.to_string()).unwrap_or_default())
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(match settled {
            1 => Settled::Dropped,
            2 => Settled::Timer,
            _ => Settled::DueAgain,
        })
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn delivery_cursors(&self, game_id: &str) -> StoreResult<HashMap<String, u64>> {
        let key = game(game_id, "hooks");
        read(&self.connection, |mut connection| {
            let key = key.clone();
            async move {
                redis::cmd("HGETALL")
                    .arg(key)
                    .query_async(&mut connection)
                    .await
            }
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn advance_cursors(&self, game_id: &str, moves: &[(String, u64)]) -> StoreResult<()> {
        if moves.is_empty() {
            return Ok(());
        }
        let mut invocation = ADVANCE.key(game(game_id, "hooks"));
        for (id, version) in moves {
            invocation.arg(id).arg(*version);
        }
        let _: i64 = invocation
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    #[tracing::instrument(skip_all, fields(store = "redis", tenant))]
    async fn put_dead_letter(
        &self,
        tenant: &str,
        letter: &DeadLetter,
        max: usize,
    ) -> StoreResult<()> {
        let mut stored = format!("{}:", letter.dead_at_ms).into_bytes();
        stored.extend(&letter.record);
        let _: i64 = PUT_DEAD
            .key(dead_key(tenant))
            .arg(&letter.id)
            .arg(stored)
            .arg(max)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    #[tracing::instrument(skip_all, fields(store = "redis", tenant))]
    async fn dead_letters(&self, tenant: &str, limit: usize) -> StoreResult<Vec<DeadLetter>> {
        let key = dead_key(tenant);
        let stored: Vec<(String, Vec<u8>)> = read(&self.connection, |mut connection| {
            let key = key.clone();
            async move {
                redis::cmd("HGETALL")
                    .arg(key)
                    .query_async(&mut connection)
                    .await
            }
        })
        .await?;
        let mut letters = stored
            .into_iter()
            .map(|(id, stored)| parse_letter(id, &stored))
            .collect::<StoreResult<Vec<_>>>()?;
        letters.sort_by(|a, b| (a.dead_at_ms, &a.id).cmp(&(b.dead_at_ms, &b.id)));
        letters.truncate(limit);
        Ok(letters)
    }

    #[tracing::instrument(skip_all, fields(store = "redis", tenant))]
    async fn remove_dead_letter(&self, tenant: &str, id: &str) -> StoreResult<bool> {
        let removed: i64 = redis::cmd("HDEL")
            .arg(dead_key(tenant))
            .arg(id)
            .query_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(removed == 1)
    }
}

/// The turn inbox of a tenant (see [`crate::store::TurnInbox`]): one hash tag per tenant,
/// `{inbox-<tenant>}`, for `:games` (hash: game id → `<version>:<seat>:<deadline>:<since>:<player>`,
/// the player last since it may hold anything) and `:p:<player>` (sorted set: the ids of the games
/// waiting for that player, scored by since when).
fn inbox_games(tenant: &str) -> String {
    format!("tabula:{{inbox-{tenant}}}:games")
}

fn inbox_player(tenant: &str, player: &str) -> String {
    format!("tabula:{{inbox-{tenant}}}:p:{player}")
}

/// Replaces game `ARGV[1]`'s entry if it still is `ARGV[2]` (compare and set; '' for none): removes
/// the game from the old player's set `KEYS[2]`, adds it to `KEYS[3]` with score `ARGV[4]` when
/// `ARGV[3]` (the new entry) is not ''. KEYS: games, old player's set, new player's set. Returns 1
/// if set.
pub(super) const SET_WAITING_SCRIPT: &str = r#"
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return 0 end
if current ~= '' then redis.call('ZREM', KEYS[2], ARGV[1]) end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
return 1
"#;

/// Reads the games of player set `KEYS[2]` from score `ARGV[1]` on (at most `ARGV[2]`) with their
/// entries in hash `KEYS[1]`: `{id, entry, score, …}`.
pub(super) const WAITING_SCRIPT: &str = r#"
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for i = 1, #ids, 2 do
  out[#out + 1] = ids[i]
  out[#out + 1] = redis.call('HGET', KEYS[1], ids[i]) or ''
  out[#out + 1] = ids[i + 1]
end
return out
"#;

static SET_WAITING: LazyLock<Script> = LazyLock::new(|| Script::new(SET_WAITING_SCRIPT));
static WAITING: LazyLock<Script> = LazyLock::new(|| Script::new(WAITING_SCRIPT));

/// An inbox entry: (version, seat, deadline, since, player).
type InboxEntry = (u64, u32, Option<u64>, u64, String);

fn parse_entry(entry: &str) -> StoreResult<InboxEntry> {
    let mut parts = entry.splitn(5, ':');
    let mut next = || parts.next().unwrap_or_default();
    let bad = || corrupt(format!("inbox entry {entry:?}"));
    let version = next().parse().map_err(|_| bad())?;
    let seat = next().parse().map_err(|_| bad())?;
    let deadline = match next() {
        "" => None,
        text => Some(text.parse().map_err(|_| bad())?),
    };
    let since = next().parse().map_err(|_| bad())?;
    Ok((version, seat, deadline, since, next().to_owned()))
}

fn format_entry((version, seat, deadline, since, player): &InboxEntry) -> String {
    let deadline = deadline.map(|d| d.to_string()).unwrap_or_default();
    format!("{version}:{seat}:{deadline}:{since}:{player}")
}

#[async_trait]
impl crate::store::TurnInbox for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis", tenant, game_id))]
    async fn set_waiting(
        &self,
        tenant: &str,
        game_id: &str,
        version: u64,
        waiting: Option<(&str, u32, Option<u64>)>,
        now_ms: u64,
    ) -> StoreResult<()> {
        // Compare and set: read the entry, write if it is unchanged (another replica may write
        // the same game's entry after a takeover; the later version wins).
        for _ in 0..8 {
            let stored: Option<String> = redis::cmd("HGET")
                .arg(inbox_games(tenant))
                .arg(game_id)
                .query_async(&mut self.connection.clone())
                .await
                .map_err(unavailable)?;
            let current = stored.as_deref().map(parse_entry).transpose()?;
            if current.as_ref().is_some_and(|entry| entry.0 > version) {
                return Ok(());
            }
            let new = waiting.map(|(player, seat, deadline)| {
                let since = current
                    .as_ref()
                    .filter(|entry| entry.4 == player && entry.1 == seat)
                    .map_or(now_ms, |entry| entry.3);
                (version, seat, deadline, since, player.to_owned())
            });
            if current.is_none() && new.is_none() {
                // Nothing indexed and nothing to index (a game whose players have no external
                // ids, or one that has ended): the write would change nothing.
                return Ok(());
            }
            let old_player = current.as_ref().map(|entry| entry.4.as_str()).unwrap_or("");
            let new_player = new.as_ref().map(|entry| entry.4.as_str()).unwrap_or("");
            let set: i64 = SET_WAITING
                .key(inbox_games(tenant))
                .key(inbox_player(tenant, old_player))
                .key(inbox_player(tenant, new_player))
                .arg(game_id)
                .arg(stored.unwrap_or_default())
                .arg(new.as_ref().map(format_entry).unwrap_or_default())
                .arg(new.as_ref().map_or(0, |entry| entry.3))
                .invoke_async(&mut self.connection.clone())
                .await
                .map_err(unavailable)?;
            if set == 1 {
                return Ok(());
            }
        }
        Err(crate::store::StoreError::Unavailable(
            "the turn inbox kept changing under this write".into(),
        ))
    }

    #[tracing::instrument(skip_all, fields(store = "redis", tenant))]
    async fn waiting_turns(
        &self,
        tenant: &str,
        player: &str,
        after: Option<(u64, String)>,
        limit: usize,
    ) -> StoreResult<Vec<crate::store::WaitingTurn>> {
        let from = after.as_ref().map_or(0, |(since, _)| *since);
        // Games tied with the last one's score come again: read enough to skip them.
        let mut turns = Vec::new();
        let reply: Vec<String> = read(&self.connection, |mut connection| {
            let (games, set) = (inbox_games(tenant), inbox_player(tenant, player));
            async move {
                WAITING
                    .key(games)
                    .key(set)
                    .arg(from)
                    .arg(limit.saturating_add(64))
                    .invoke_async(&mut connection)
                    .await
            }
        })
        .await?;
        for triple in reply.chunks(3) {
            let [game_id, entry, _] = triple else {
                return Err(corrupt("inbox reply shape"));
            };
            if entry.is_empty() {
                continue;
            }
            let (version, seat, deadline_ms, since_ms, _) = parse_entry(entry)?;
            if after
                .as_ref()
                .is_some_and(|(since, id)| (since_ms, game_id) <= (*since, id))
            {
                continue;
            }
            turns.push(crate::store::WaitingTurn {
                game_id: game_id.clone(),
                seat,
                version,
                since_ms,
                deadline_ms,
            });
        }
        turns.sort_by(|a, b| (a.since_ms, &a.game_id).cmp(&(b.since_ms, &b.game_id)));
        turns.truncate(limit);
        Ok(turns)
    }
}

/// Appends events `ARGV[2]`, `ARGV[3]`, … in order to stream `KEYS[1]`, trimmed to about
/// `ARGV[1]` entries. Returns how many it appended.
pub(super) const APPEND_EVENT_SCRIPT: &str = r#"
for i = 2, #ARGV do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'body', ARGV[i])
end
return #ARGV - 1
"#;

static APPEND_EVENT: LazyLock<Script> = LazyLock::new(|| Script::new(APPEND_EVENT_SCRIPT));

/// A tenant's event stream: a Redis stream under the tenant's own hash tag, trimmed to about the
/// length the service keeps (`MAXLEN ~`); a cursor is a stream entry id.
fn events_key(tenant: &str) -> String {
    format!("tabula:{{events-{tenant}}}:stream")
}

#[async_trait]
impl crate::store::TenantEvents for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis", tenant))]
    async fn append_events(&self, tenant: &str, bodies: &[String], keep: usize) -> StoreResult<()> {
        if bodies.is_empty() {
            return Ok(());
        }
        // One script for every event of a delivery pass: one round trip, each event its own XADD.
        let mut invocation = APPEND_EVENT.key(events_key(tenant));
        invocation.arg(keep.max(1));
        for body in bodies {
            invocation.arg(body);
        }
        let _: i64 = invocation
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    #[tracing::instrument(skip_all, fields(store = "redis", tenant))]
    async fn events_after(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<crate::store::TenantEvent>> {
        if let Some(cursor) = after
            && !is_stream_id(cursor)
        {
            return Err(corrupt(format!("event cursor {cursor:?}")));
        }
        // An exclusive start (`(id`): the entry after the cursor.
        let start = after.map_or_else(|| "-".to_owned(), |cursor| format!("({cursor}"));
        let entries: Vec<(String, Vec<(String, String)>)> =
            read(&self.connection, |mut connection| {
                let (key, start) = (events_key(tenant), start.clone());
                async move {
                    redis::cmd("XRANGE")
                        .arg(key)
                        .arg(start)
                        .arg("+")
                        .arg("COUNT")
                        .arg(limit)
                        .query_async(&mut connection)
                        .await
                }
            })
            .await?;
        Ok(entries
            .into_iter()
            .map(|(id, fields)| crate::store::TenantEvent {
                cursor: id,
                body: fields
                    .into_iter()
                    .find(|(name, _)| name == "body")
                    .map(|(_, body)| body)
                    .unwrap_or_default(),
            })
            .collect())
    }
}

/// `<ms>-<seq>`, as Redis stream ids are.
fn is_stream_id(text: &str) -> bool {
    text.split_once('-').is_some_and(|(ms, seq)| {
        !ms.is_empty()
            && !seq.is_empty()
            && ms.len() <= 20
            && seq.len() <= 20
            && ms.bytes().all(|b| b.is_ascii_digit())
            && seq.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_letters_parse() {
        assert_eq!(parse_mark("3:7").unwrap(), (3, 7));
        assert!(parse_mark("x").is_err());
        let letter = parse_letter("w/e".into(), b"12:{\"a\":1}").unwrap();
        assert_eq!(letter.dead_at_ms, 12);
        assert_eq!(letter.record, b"{\"a\":1}");
    }
}
