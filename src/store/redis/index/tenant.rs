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
//!
//! This module holds what only the tenants' indexes do; creation, finishing, retention and the
//! listing's repairs call it from `index.rs`.

use futures::future::join_all;
use redis::Value;

use super::query::{cursor_of, order_of, parse_shard_page, score_bounds};
use super::{GameIndex, ShardPages, every_kind};
use crate::proto::v1::GameKind;
use crate::store::redis::keys::{
    self, SHARDS, finishing_intents, index_set, tenant_index_set, tenant_no_intents,
};
use crate::store::redis::{HealingConnection, read, unavailable};
use crate::store::{ListQuery, StoreResult};

impl GameIndex {
    /// Puts `tenant`'s entry of a game where its progress says (see
    /// [`TENANT_PLACE_SCRIPT`](super::TENANT_PLACE_SCRIPT)): out of the other progress's set of its
    /// kind and out of `listed_in` (a set it was found in), into the right one.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn place_tenant_entry(
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

    /// Reads a page of `tenant`'s own index, after settling every shard's finishing intents (so
    /// that a game whose finishing replica died before moving it is read where it belongs).
    pub(super) async fn read_tenant_index(
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
    pub(in crate::store::redis) async fn fill_tenant_index(
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
}
