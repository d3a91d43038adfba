//! The deadline index on Redis: when each clocked game's seat to act runs out of time, for the
//! turn-clock sweeper every replica runs (see `crate::service::sweeper`) — on a single node and on
//! a Redis Cluster alike.
//!
//! # Layout
//!
//! Like the game index (`index.rs`), the index is cut into [`SHARDS`] shards with hash tags of
//! their own, `{deadlines-<n>}` (a game belongs to shard `fnv1a(id) mod SHARDS`, the same function
//! as the game index), so a Cluster spreads them over its nodes:
//!
//! - `tabula:{deadlines-<n>}:due` — sorted set: id of each clocked game, scored by its deadline
//!   (ms since the Unix epoch);
//! - `tabula:{deadlines-<n>}:versions` — hash: id → the log version that deadline was computed at.
//!
//! Every replica sweeps every shard: no replica owns a game.
//!
//! # The log is the truth
//!
//! A game's keys and its shard are different slots, so the append script cannot update the index
//! (a script may touch keys of one slot only). The index is derived data that may lag the log but
//! is kept a **lower bound**: an indexed deadline is never later than the game's true one, so a
//! timeout is never missed, at worst looked at early. The sweeper re-checks every due entry
//! against the game itself and corrects it ([`Store::set_deadline`](crate::store::Store)).
//!
//! - **creation** indexes the first deadline *before* the game's meta is written; an entry whose
//!   game never came to exist is removed by the first sweep that finds it.
//! - **an append** whose new deadline is earlier than the current one first lowers the indexed
//!   deadline ([`LOWER_SCRIPT`], never raises it), then appends; after a successful append it sets
//!   the new deadline with the new version ([`SET_SCRIPT`], refused if a newer version's is
//!   there, so concurrent appenders and sweepers never put an older deadline back). A replica
//!   dying between the append and the set leaves an earlier deadline than the true one: the sweep
//!   that finds it due corrects it.
//! - **the end of a game** removes its entry (the set with no deadline).

use futures::future::join_all;
use redis::{Script, Value};

use super::keys::{SHARDS, deadline_versions, deadlines_due, shard_of};
use super::{HealingConnection, as_string, corrupt, unavailable};
use crate::store::{IndexedDeadline, StoreResult};

/// Sets a game's deadline as of a version, unless a newer version's is indexed. KEYS: due,
/// versions. ARGV: id, version, deadline ('' to remove the entry). Returns 1 if applied.
pub(super) const SET_SCRIPT: &str = r#"
local indexed = redis.call('HGET', KEYS[2], ARGV[1])
if indexed and tonumber(indexed) > tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"#;

/// Lowers a game's indexed deadline (adds it if absent), never raises it. KEYS: due. ARGV: id,
/// deadline. (ZADD's LT flag does the same from Redis 6.2; a script works on every version.)
pub(super) const LOWER_SCRIPT: &str = r#"
local indexed = redis.call('ZSCORE', KEYS[1], ARGV[1])
if indexed and tonumber(indexed) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"#;

/// The deadline index's commands.
pub(super) struct DeadlineIndex {
    set: Script,
    lower: Script,
}

impl DeadlineIndex {
    pub(super) fn new() -> Self {
        DeadlineIndex {
            set: Script::new(SET_SCRIPT),
            lower: Script::new(LOWER_SCRIPT),
        }
    }

    /// See [`crate::store::DeadlineSchedule::set_deadline`].
    pub(super) async fn set(
        &self,
        connection: &HealingConnection,
        game_id: &str,
        version: u64,
        deadline_ms: Option<u64>,
    ) -> StoreResult<()> {
        let shard = shard_of(game_id);
        let deadline = deadline_ms.map(|ms| ms.to_string()).unwrap_or_default();
        let _: i64 = self
            .set
            .key(deadlines_due(shard))
            .key(deadline_versions(shard))
            .arg(game_id)
            .arg(version)
            .arg(deadline)
            .invoke_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// Lowers `game_id`'s indexed deadline to `deadline_ms` if it is later.
    pub(super) async fn lower(
        &self,
        connection: &HealingConnection,
        game_id: &str,
        deadline_ms: u64,
    ) -> StoreResult<()> {
        let _: i64 = self
            .lower
            .key(deadlines_due(shard_of(game_id)))
            .arg(game_id)
            .arg(deadline_ms)
            .invoke_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// Up to `limit` due entries of each shard (read concurrently), earliest first overall.
    pub(super) async fn expired(
        &self,
        connection: &HealingConnection,
        now_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<IndexedDeadline>> {
        let reads = (0..SHARDS).map(|shard| async move {
            let reply: Value = redis::cmd("ZRANGEBYSCORE")
                .arg(deadlines_due(shard))
                .arg("-inf")
                .arg(now_ms)
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(limit)
                .query_async(&mut connection.clone())
                .await
                .map_err(unavailable)?;
            parse_scored(reply)
        });
        let mut due = Vec::new();
        for shard in join_all(reads).await {
            due.extend(shard?);
        }
        due.sort_by(|a, b| (a.deadline_ms, &a.game_id).cmp(&(b.deadline_ms, &b.game_id)));
        Ok(due)
    }
}

/// A `WITHSCORES` reply: member, score, member, score… (RESP3 may pair them).
fn parse_scored(reply: Value) -> StoreResult<Vec<IndexedDeadline>> {
    let items = match reply {
        Value::Array(items) => items,
        Value::Nil => return Ok(Vec::new()),
        other => return Err(corrupt(format!("unexpected ZRANGEBYSCORE reply {other:?}"))),
    };
    let mut found = Vec::with_capacity(items.len() / 2);
    let mut flat = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Array(pair) => flat.extend(pair),
            other => flat.push(other),
        }
    }
    let mut flat = flat.into_iter();
    while let (Some(member), Some(score)) = (flat.next(), flat.next()) {
        let deadline_ms = match score {
            Value::Double(score) => score as u64,
            other => {
                let text = as_string(other)?;
                text.parse::<f64>()
                    .map_err(|_| corrupt(format!("deadline score {text:?}")))?
                    as u64
            }
        };
        found.push(IndexedDeadline {
            game_id: as_string(member)?,
            deadline_ms,
        });
    }
    Ok(found)
}
