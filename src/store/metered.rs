//! The store with its metrics: a [`Store`] that records every round trip (count, latency,
//! failures by operation, by store), version conflicts, retried request ids and created games, in
//! front of either store. `serve` wraps the store it opens in it (see `server.rs`).

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::{
    Append, BotTurn, BotTurnQueue, DeadlineSchedule, GameListing, GameLog, GameMeta, GamePage,
    ListQuery, Loaded, LogEntry, NewEntry, RetentionIndex, Snapshot, Store, StoreResult,
};
use crate::games::Seat;
use crate::metrics;

/// A [`Store`] that records every round trip (count, latency, failures by operation), version
/// conflicts, retried request ids and created games.
pub struct InstrumentedStore {
    inner: Arc<dyn Store>,
}

impl InstrumentedStore {
    /// Wraps `inner`.
    pub fn wrap(inner: Arc<dyn Store>) -> Arc<dyn Store> {
        Arc::new(InstrumentedStore { inner })
    }

    async fn timed<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = StoreResult<T>>,
    ) -> StoreResult<T> {
        let started = Instant::now();
        let result = call.await;
        metrics::store_call(
            operation,
            self.inner.kind(),
            started.elapsed(),
            result.is_err(),
        );
        result
    }
}

#[async_trait]
impl GameLog for InstrumentedStore {
    async fn create(&self, meta: &GameMeta) -> StoreResult<()> {
        self.timed("create", self.inner.create(meta)).await?;
        metrics::game_created(meta.kind);
        Ok(())
    }

    async fn load(&self, game_id: &str) -> StoreResult<Option<Loaded>> {
        self.timed("load", self.inner.load(game_id)).await
    }

    async fn entries_after(&self, game_id: &str, after: u64) -> StoreResult<Option<Vec<LogEntry>>> {
        self.timed("entries_after", self.inner.entries_after(game_id, after))
            .await
    }

    async fn append(&self, game_id: &str, expected: u64, entry: &NewEntry) -> StoreResult<Append> {
        let append = self
            .timed("append", self.inner.append(game_id, expected, entry))
            .await?;
        match &append {
            Append::Conflict { .. } => metrics::append_conflict(),
            Append::Duplicate { .. } => metrics::request_retry(),
            Append::Appended { .. } | Append::UnknownGame => {}
        }
        Ok(append)
    }

    async fn find_request(
        &self,
        game_id: &str,
        seat: Seat,
        request_id: &str,
        at_version: Option<u64>,
    ) -> StoreResult<Option<u64>> {
        let found = self
            .timed(
                "find_request",
                self.inner
                    .find_request(game_id, seat, request_id, at_version),
            )
            .await?;
        if found.is_some() {
            metrics::request_retry();
        }
        Ok(found)
    }

    async fn save_snapshot(&self, game_id: &str, snapshot: &Snapshot) -> StoreResult<()> {
        self.timed("save_snapshot", self.inner.save_snapshot(game_id, snapshot))
            .await
    }

    async fn subscribe(&self, game_id: &str) -> StoreResult<broadcast::Receiver<LogEntry>> {
        self.timed("subscribe", self.inner.subscribe(game_id)).await
    }

    fn serves_only_current_releases(&self) -> bool {
        self.inner.serves_only_current_releases()
    }
}

#[async_trait]
impl GameListing for InstrumentedStore {
    async fn list_games(&self, query: &ListQuery) -> StoreResult<GamePage> {
        self.timed("list_games", self.inner.list_games(query)).await
    }
}

#[async_trait]
impl DeadlineSchedule for InstrumentedStore {
    async fn set_deadline(
        &self,
        game_id: &str,
        version: u64,
        deadline_ms: Option<u64>,
    ) -> StoreResult<()> {
        self.timed(
            "set_deadline",
            self.inner.set_deadline(game_id, version, deadline_ms),
        )
        .await
    }

    async fn expired_deadlines(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<crate::store::IndexedDeadline>> {
        self.timed(
            "expired_deadlines",
            self.inner.expired_deadlines(now_ms, limit),
        )
        .await
    }
}

#[async_trait]
impl BotTurnQueue for InstrumentedStore {
    async fn mark_bot_turn(&self, turn: &BotTurn, due_ms: u64) -> StoreResult<()> {
        self.timed("mark_bot_turn", self.inner.mark_bot_turn(turn, due_ms))
            .await
    }

    async fn clear_bot_turn(&self, turn: &BotTurn) -> StoreResult<()> {
        self.timed("clear_bot_turn", self.inner.clear_bot_turn(turn))
            .await
    }

    async fn claim_due_bot_turns(
        &self,
        now_ms: u64,
        claim_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<BotTurn>> {
        self.timed(
            "claim_due_bot_turns",
            self.inner
                .claim_due_bot_turns(now_ms, claim_until_ms, limit),
        )
        .await
    }
}

#[async_trait]
impl RetentionIndex for InstrumentedStore {
    async fn finished_before(
        &self,
        finished_before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<String>> {
        self.timed(
            "finished_before",
            self.inner.finished_before(finished_before_ms, limit),
        )
        .await
    }

    async fn read_whole(&self, game_id: &str) -> StoreResult<Option<crate::store::WholeGame>> {
        self.timed("read_whole", self.inner.read_whole(game_id))
            .await
    }

    async fn remove_finished(&self, game_id: &str) -> StoreResult<bool> {
        self.timed("remove_finished", self.inner.remove_finished(game_id))
            .await
    }

    async fn idle_running(
        &self,
        idle_before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<(String, u64)>> {
        self.timed(
            "idle_running",
            self.inner.idle_running(idle_before_ms, limit),
        )
        .await
    }
}

#[async_trait]
impl super::TenantDirectory for InstrumentedStore {
    async fn tenants(&self) -> StoreResult<(u64, Vec<super::StoredTenant>)> {
        self.timed("tenants", self.inner.tenants()).await
    }

    async fn tenants_revision(&self) -> StoreResult<u64> {
        self.timed("tenants_revision", self.inner.tenants_revision())
            .await
    }

    async fn put_tenant(&self, id: &str, record: &[u8], expected: u64) -> StoreResult<Option<u64>> {
        self.timed("put_tenant", self.inner.put_tenant(id, record, expected))
            .await
    }
}

#[async_trait]
impl super::WebhookOutbox for InstrumentedStore {
    async fn mark_pending(&self, game_id: &str, version: u64, now_ms: u64) -> StoreResult<()> {
        self.timed(
            "outbox_mark",
            self.inner.mark_pending(game_id, version, now_ms),
        )
        .await
    }

    async fn claim_pending(
        &self,
        now_ms: u64,
        lease_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<super::PendingNotifications>> {
        self.timed(
            "outbox_claim",
            self.inner.claim_pending(now_ms, lease_until_ms, limit),
        )
        .await
    }

    async fn claim_game(
        &self,
        game_id: &str,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> StoreResult<Option<super::PendingNotifications>> {
        self.timed(
            "outbox_claim_game",
            self.inner.claim_game(game_id, now_ms, lease_until_ms),
        )
        .await
    }

    async fn settle_pending(
        &self,
        game_id: &str,
        delivered: Option<u64>,
        again_at_ms: u64,
        timer_at_ms: Option<u64>,
    ) -> StoreResult<super::Settled> {
        self.timed(
            "outbox_settle",
            self.inner
                .settle_pending(game_id, delivered, again_at_ms, timer_at_ms),
        )
        .await
    }

    async fn delivery_cursors(
        &self,
        game_id: &str,
    ) -> StoreResult<std::collections::HashMap<String, u64>> {
        self.timed("outbox_cursors", self.inner.delivery_cursors(game_id))
            .await
    }

    async fn advance_cursors(&self, game_id: &str, moves: &[(String, u64)]) -> StoreResult<()> {
        self.timed("outbox_advance", self.inner.advance_cursors(game_id, moves))
            .await
    }

    async fn put_dead_letter(
        &self,
        tenant: &str,
        letter: &super::DeadLetter,
        max: usize,
    ) -> StoreResult<()> {
        self.timed(
            "dead_letter_put",
            self.inner.put_dead_letter(tenant, letter, max),
        )
        .await
    }

    async fn dead_letters(
        &self,
        tenant: &str,
        limit: usize,
    ) -> StoreResult<Vec<super::DeadLetter>> {
        self.timed("dead_letters", self.inner.dead_letters(tenant, limit))
            .await
    }

    async fn remove_dead_letter(&self, tenant: &str, id: &str) -> StoreResult<bool> {
        self.timed(
            "dead_letter_remove",
            self.inner.remove_dead_letter(tenant, id),
        )
        .await
    }
}

#[async_trait]
impl super::TurnInbox for InstrumentedStore {
    async fn set_waiting(
        &self,
        tenant: &str,
        game_id: &str,
        version: u64,
        waiting: Option<(&str, crate::games::Seat, Option<u64>)>,
        now_ms: u64,
    ) -> StoreResult<()> {
        self.timed(
            "inbox_set",
            self.inner
                .set_waiting(tenant, game_id, version, waiting, now_ms),
        )
        .await
    }

    async fn waiting_turns(
        &self,
        tenant: &str,
        player: &str,
        after: Option<(u64, String)>,
        limit: usize,
    ) -> StoreResult<Vec<super::WaitingTurn>> {
        self.timed(
            "inbox_list",
            self.inner.waiting_turns(tenant, player, after, limit),
        )
        .await
    }
}

#[async_trait]
impl super::TenantEvents for InstrumentedStore {
    async fn append_events(&self, tenant: &str, bodies: &[String], keep: usize) -> StoreResult<()> {
        self.timed(
            "event_append",
            self.inner.append_events(tenant, bodies, keep),
        )
        .await
    }

    async fn events_after(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<super::TenantEvent>> {
        self.timed(
            "events_after",
            self.inner.events_after(tenant, after, limit),
        )
        .await
    }
}

#[async_trait]
impl super::QuotaCounters for InstrumentedStore {
    async fn take(
        &self,
        tenant: &str,
        counter: &str,
        want: u64,
        limit: u64,
        ttl: std::time::Duration,
    ) -> StoreResult<u64> {
        self.timed(
            "quota_take",
            self.inner.take(tenant, counter, want, limit, ttl),
        )
        .await
    }

    async fn join(&self, tenant: &str, set: &str, member: &str, limit: u64) -> StoreResult<bool> {
        self.timed("quota_join", self.inner.join(tenant, set, member, limit))
            .await
    }

    async fn leave(&self, tenant: &str, set: &str, member: &str) -> StoreResult<()> {
        self.timed("quota_leave", self.inner.leave(tenant, set, member))
            .await
    }

    async fn members(&self, tenant: &str, set: &str) -> StoreResult<Vec<String>> {
        self.timed("quota_members", self.inner.members(tenant, set))
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
        self.timed(
            "quota_join_leased",
            self.inner
                .join_leased(tenant, set, member, limit, now_ms, until_ms),
        )
        .await
    }

    async fn renew_leased(
        &self,
        tenant: &str,
        set: &str,
        members: &[String],
        until_ms: u64,
    ) -> StoreResult<()> {
        self.timed(
            "quota_renew_leased",
            self.inner.renew_leased(tenant, set, members, until_ms),
        )
        .await
    }

    async fn leave_leased(&self, tenant: &str, set: &str, member: &str) -> StoreResult<()> {
        self.timed(
            "quota_leave_leased",
            self.inner.leave_leased(tenant, set, member),
        )
        .await
    }
}

#[async_trait]
impl Store for InstrumentedStore {
    async fn ping(&self) -> StoreResult<()> {
        self.timed("ping", self.inner.ping()).await
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
}
