//! The tenant directory on Redis (see [`crate::store::TenantDirectory`]): three keys with one hash
//! tag, so that on a Cluster they share a slot and a write is one atomic script:
//!
//! - `tabula:{tenants}:records` — hash: tenant id → its record (encoded by the service);
//! - `tabula:{tenants}:generations` — hash: tenant id → how many times its record was written;
//! - `tabula:{tenants}:revision` — counter: incremented by every write, which every replica polls
//!   to learn that its copy of the directory is out of date.
//!
//! A deployment has tens or thousands of tenants, not millions: the whole directory is read at
//! once when it changes.

use std::sync::LazyLock;

use async_trait::async_trait;
use redis::Script;

use super::{RedisStore, read, unavailable};
use crate::store::{QuotaCounters, StoreResult, StoredTenant, TenantDirectory};

const RECORDS: &str = "tabula:{tenants}:records";
const GENERATIONS: &str = "tabula:{tenants}:generations";
const REVISION: &str = "tabula:{tenants}:revision";

/// Writes a record if its generation is the expected one. KEYS: records, generations, revision.
/// ARGV: id, record, expected generation. Returns the new generation, or -1 when the stored one
/// is another.
pub(super) const PUT_SCRIPT: &str = r#"
local current = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if current ~= tonumber(ARGV[3]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('INCR', KEYS[3])
return redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
"#;

/// Every record, every generation and the revision, read together. KEYS: records, generations,
/// revision.
pub(super) const READ_SCRIPT: &str = r#"
return {redis.call('GET', KEYS[3]) or '0', redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
"#;

static PUT: LazyLock<Script> = LazyLock::new(|| Script::new(PUT_SCRIPT));
static READ: LazyLock<Script> = LazyLock::new(|| Script::new(READ_SCRIPT));

#[async_trait]
impl TenantDirectory for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn tenants(&self) -> StoreResult<(u64, Vec<StoredTenant>)> {
        let (revision, records, generations): (String, Vec<(String, Vec<u8>)>, Vec<(String, u64)>) =
            read(&self.connection, |mut connection| async move {
                READ.key(RECORDS)
                    .key(GENERATIONS)
                    .key(REVISION)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        let generations: std::collections::HashMap<String, u64> = generations.into_iter().collect();
        let mut tenants: Vec<StoredTenant> = records
            .into_iter()
            .map(|(id, record)| StoredTenant {
                generation: generations.get(&id).copied().unwrap_or_default(),
                id,
                record,
            })
            .collect();
        tenants.sort_by(|a, b| a.id.cmp(&b.id));
        Ok((revision.parse().unwrap_or_default(), tenants))
    }

    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn tenants_revision(&self) -> StoreResult<u64> {
        let revision: Option<u64> = read(&self.connection, |mut connection| async move {
            redis::cmd("GET")
                .arg(REVISION)
                .query_async(&mut connection)
                .await
        })
        .await?;
        Ok(revision.unwrap_or_default())
    }

    #[tracing::instrument(skip_all, fields(store = "redis", tenant = id))]
    async fn put_tenant(&self, id: &str, record: &[u8], expected: u64) -> StoreResult<Option<u64>> {
        let generation: i64 = PUT
            .key(RECORDS)
            .key(GENERATIONS)
            .key(REVISION)
            .arg(id)
            .arg(record)
            .arg(expected)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(u64::try_from(generation).ok())
    }
}

/// A tenant's quota key: one hash tag per tenant, so that each tenant's counters share a slot.
fn quota_key(tenant: &str, name: &str) -> String {
    format!("tabula:{{quota-{tenant}}}:{name}")
}

/// Takes up to `ARGV[1]` of what is left of `ARGV[2]` in counter `KEYS[1]`, which expires `ARGV[3]`
/// ms after its first use. Returns what was taken.
pub(super) const TAKE_SCRIPT: &str = r#"
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local left = tonumber(ARGV[2]) - used
if left <= 0 then return 0 end
local taken = math.min(tonumber(ARGV[1]), left)
redis.call('INCRBY', KEYS[1], taken)
if used == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return taken
"#;

/// Adds `ARGV[1]` to set `KEYS[1]` unless it holds `ARGV[2]` others. Returns 1 if it is a member
/// now.
pub(super) const JOIN_SCRIPT: &str = r#"
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"#;

/// Adds `ARGV[1]` to leased set `KEYS[1]` (a sorted set scored by lease end) until `ARGV[4]` unless
/// it holds `ARGV[2]` others whose lease runs past `ARGV[3]`; drops lapsed members first. Returns 1
/// if it is a member now.
pub(super) const JOIN_LEASED_SCRIPT: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
"#;

static TAKE: LazyLock<Script> = LazyLock::new(|| Script::new(TAKE_SCRIPT));
static JOIN_LEASED: LazyLock<Script> = LazyLock::new(|| Script::new(JOIN_LEASED_SCRIPT));
static JOIN: LazyLock<Script> = LazyLock::new(|| Script::new(JOIN_SCRIPT));

#[async_trait]
impl QuotaCounters for RedisStore {
    async fn take(
        &self,
        tenant: &str,
        counter: &str,
        want: u64,
        limit: u64,
        ttl: std::time::Duration,
    ) -> StoreResult<u64> {
        TAKE.key(quota_key(tenant, counter))
            .arg(want)
            .arg(limit)
            .arg(ttl.as_millis().max(1) as u64)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)
    }

    async fn join(&self, tenant: &str, set: &str, member: &str, limit: u64) -> StoreResult<bool> {
        let joined: i64 = JOIN
            .key(quota_key(tenant, set))
            .arg(member)
            .arg(limit)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(joined == 1)
    }

    async fn leave(&self, tenant: &str, set: &str, member: &str) -> StoreResult<()> {
        let _: i64 = redis::cmd("SREM")
            .arg(quota_key(tenant, set))
            .arg(member)
            .query_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn members(&self, tenant: &str, set: &str) -> StoreResult<Vec<String>> {
        read(&self.connection, |mut connection| async move {
            redis::cmd("SMEMBERS")
                .arg(quota_key(tenant, set))
                .query_async(&mut connection)
                .await
        })
        .await
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
        let joined: i64 = JOIN_LEASED
            .key(quota_key(tenant, set))
            .arg(member)
            .arg(limit)
            .arg(now_ms)
            .arg(until_ms)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(joined == 1)
    }

    async fn renew_leased(
        &self,
        tenant: &str,
        set: &str,
        members: &[String],
        until_ms: u64,
    ) -> StoreResult<()> {
        if members.is_empty() {
            return Ok(());
        }
        let mut command = redis::cmd("ZADD");
        command.arg(quota_key(tenant, set)).arg("XX");
        for member in members {
            command.arg(until_ms).arg(member);
        }
        let _: i64 = command
            .query_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn leave_leased(&self, tenant: &str, set: &str, member: &str) -> StoreResult<()> {
        let _: i64 = redis::cmd("ZREM")
            .arg(quota_key(tenant, set))
            .arg(member)
            .query_async(&mut self.connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}
