//! Tenants' quotas (see `tenants.rs` for the limits and who sets them), counted over all of a
//! tenant's games on every replica together, in the store's shared counters
//! ([`crate::store::QuotaCounters`]). A game's seats are charged to the tenant owning the game,
//! whatever credential they send; games owned by no tenant have no quotas.
//!
//! - **Acts per second**: a counter per tenant and second (the replica's clock). A replica does not
//!   ask the store per Act: it takes a *lease*, a batch of the second's allowance, and admits Acts
//!   from it locally; when the lease runs low it takes the next one in the background, so at a
//!   steady rate an Act costs no store round trip (only the first Acts of a second that find the
//!   lease empty wait for one). A batch is a quarter of what this replica admitted in the previous
//!   second (at least 1, at most a quarter of the limit). The store never counts past the limit,
//!   so replicas together never admit more than it in a second; what they leased and did not use
//!   is lost when the second ends (at most one batch per replica). Replicas whose clocks disagree
//!   count in different seconds: a skew of `s` seconds can let through up to `s` seconds' worth
//!   more.
//! - **Games per minute**: a counter per tenant and calendar minute, one unit taken per creation
//!   (CreateGame has store round trips anyway: no batching). Never past the limit.
//! - **Active games**: a set of the tenant's running games: a creation joins it (refused when it
//!   holds the limit), the commit that finishes a game leaves it. A replica that dies between a
//!   game's end and the leave leaves it in the set; so when a creation is refused, the set is
//!   checked against the games (those finished or gone leave it) and the creation tried again, at
//!   most once a minute per tenant and replica.
//!
//! - **Observe streams**: a leased set of the tenant's open streams (each a member named after
//!   its replica and stream, leased for [`STREAM_LEASE`]). A stream joins it when it opens
//!   (refused when it holds the limit) and leaves when it ends; each replica renews the leases of
//!   its open streams every [`STREAM_RENEW`], so the streams of a replica that died stop counting
//!   within [`STREAM_LEASE`]. Never over the limit.
//! - **Bot seats**: a set of the tenant's bot seats in running games (`<game>:<seat>`), joined at
//!   creation and at a hand-over, left when the game ends; repaired as the running games are.
//! - **Bot thinking time**: a counter per tenant and calendar minute of the milliseconds its bots
//!   may think; each decision takes its thinking budget from it first. Past the limit a bot still
//!   moves (a game must never stall on a quota) but decides without searching. Never over by
//!   more than the decisions running at once overrun their budgets.
//!
//! A refusal is RESOURCE_EXHAUSTED naming the quota and when a retry can succeed.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::{ServiceError, ServiceResult};
use crate::store::{QuotaCounters, unix_millis};

/// The set of a tenant's running games.
const ACTIVE_GAMES: &str = "active";

/// The set of a tenant's bot seats in running games.
const BOT_SEATS: &str = "bots";

/// The leased set of a tenant's open Observe streams.
const STREAMS: &str = "streams";

/// How long a stream's place in its tenant's count outlives its replica's last renewal.
pub const STREAM_LEASE: Duration = Duration::from_secs(30);

/// How often a replica renews the leases of its open streams.
pub const STREAM_RENEW: Duration = Duration::from_secs(10);

/// How long a counter outlives its window, so that a replica's late lease still finds it.
const COUNTER_SLACK: Duration = Duration::from_secs(5);

/// How often one replica may check a tenant's set of running games against the games.
const REPAIR_EVERY: Duration = Duration::from_secs(60);

/// The lease of one tenant's Acts in one second, on this replica.
#[derive(Default)]
struct Lease {
    /// The second (ms since the epoch / 1000) the lease is for.
    second: u64,
    /// Acts left to admit from it.
    left: u64,
    /// Acts admitted this second, and in the second before.
    admitted: u64,
    admitted_before: u64,
    /// A lease is being taken in the background.
    refilling: bool,
    /// The store has nothing left for this second (it granted less than asked): every further
    /// Act of the second is refused here, without asking it again.
    exhausted: bool,
}

impl Lease {
    /// Moves the lease to `second`: a new second starts empty.
    fn at(&mut self, second: u64) {
        // Never back: a call that read the clock just before another moved the lease on.
        if second > self.second {
            self.admitted_before = if second == self.second + 1 {
                self.admitted
            } else {
                0
            };
            self.admitted = 0;
            self.left = 0;
            self.exhausted = false;
            self.second = second;
        }
    }

    /// The batch to take next, within `limit`.
    fn batch(&self, limit: u64) -> u64 {
        (self.admitted_before.max(self.admitted) / 4).clamp(1, (limit / 4).max(1))
    }
}

/// The quota counting of one replica.
pub struct Quotas {
    store: Arc<dyn QuotaCounters>,
    leases: Mutex<HashMap<String, Lease>>,
    /// This replica's open streams counted in a tenant's quota: tenant → their members.
    streams: Mutex<HashMap<String, std::collections::HashSet<String>>>,
    /// Names this replica's stream members apart from other replicas'.
    replica: String,
    /// The next stream number.
    next_stream: std::sync::atomic::AtomicU64,
    /// When each tenant's set of running games was last repaired here.
    repaired: Mutex<HashMap<String, Instant>>,
}

impl Quotas {
    /// Counting in `store`'s shared counters.
    pub fn new(store: Arc<dyn QuotaCounters>) -> Self {
        let mut nonce = [0u8; 8];
        // Any distinct name will do; without randomness, the time is distinct enough.
        if getrandom::fill(&mut nonce).is_err() {
            nonce = unix_millis().to_le_bytes();
        }
        Quotas {
            store,
            leases: Mutex::default(),
            streams: Mutex::default(),
            replica: hex::encode(nonce),
            next_stream: std::sync::atomic::AtomicU64::new(0),
            repaired: Mutex::default(),
        }
    }

    /// Admits one Act in a game of `tenant`, whose limit is `limit` Acts per second.
    pub async fn admit_act(self: &Arc<Self>, tenant: &str, limit: u64) -> ServiceResult<()> {
        let now = unix_millis();
        let second = now / 1000;
        // From the lease if it holds any (`Ok`, with a batch to take ahead of need when it runs
        // low), else the batch to wait for (`Err(Some)`), or nothing when the second's allowance
        // is known to be spent (`Err(None)`): a flood's refusals then cost no store round trip.
        let from_lease: Result<Option<u64>, Option<u64>> = {
            let mut leases = self.leases.lock();
            let lease = leases.entry(tenant.to_owned()).or_default();
            lease.at(second);
            let batch = lease.batch(limit);
            if lease.left > 0 {
                lease.left -= 1;
                lease.admitted += 1;
                if lease.left < batch / 2 + 1 && !lease.refilling && !lease.exhausted {
                    lease.refilling = true;
                    Ok(Some(batch))
                } else {
                    Ok(None)
                }
            } else if lease.exhausted {
                Err(None)
            } else {
                Err(Some(batch))
            }
        };
        match from_lease {
            Ok(None) => Ok(()),
            Ok(Some(batch)) => {
                let quotas = self.clone();
                let tenant = tenant.to_owned();
                tokio::spawn(async move {
                    let taken = quotas.take_acts(&tenant, second, batch, limit).await;
                    let mut leases = quotas.leases.lock();
                    if let Some(lease) = leases.get_mut(&tenant) {
                        lease.refilling = false;
                        if let Ok(taken) = taken
                            && lease.second == second
                        {
                            lease.left += taken;
                            lease.exhausted |= taken < batch;
                        }
                    }
                });
                Ok(())
            }
            Err(None) => Err(exhausted(
                tenant,
                "acts_per_second",
                limit,
                "per second",
                1000 - now % 1000,
            )),
            Err(Some(batch)) => {
                // An empty lease: this Act waits for the next one.
                let taken = self.take_acts(tenant, second, batch, limit).await?;
                if taken < batch {
                    let mut leases = self.leases.lock();
                    if let Some(lease) = leases.get_mut(tenant)
                        && lease.second == second
                    {
                        lease.exhausted = true;
                    }
                }
                if taken == 0 {
                    return Err(exhausted(
                        tenant,
                        "acts_per_second",
                        limit,
                        "per second",
                        1000 - now % 1000,
                    ));
                }
                let mut leases = self.leases.lock();
                let lease = leases.entry(tenant.to_owned()).or_default();
                lease.at(second);
                if lease.second == second {
                    lease.left += taken - 1;
                    lease.admitted += 1;
                }
                Ok(())
            }
        }
    }

    async fn take_acts(
        &self,
        tenant: &str,
        second: u64,
        want: u64,
        limit: u64,
    ) -> ServiceResult<u64> {
        Ok(self
            .store
            .take(
                tenant,
                &format!("acts:{second}"),
                want,
                limit,
                Duration::from_secs(1) + COUNTER_SLACK,
            )
            .await?)
    }

    /// Counts one game created by `tenant` against its limit of `limit` per minute.
    pub async fn admit_creation(&self, tenant: &str, limit: u64) -> ServiceResult<()> {
        let now = unix_millis();
        let minute = now / 60_000;
        let taken = self
            .store
            .take(
                tenant,
                &format!("games:{minute}"),
                1,
                limit,
                Duration::from_secs(60) + COUNTER_SLACK,
            )
            .await?;
        if taken == 0 {
            return Err(exhausted(
                tenant,
                "games_per_minute",
                limit,
                "per minute",
                60_000 - now % 60_000,
            ));
        }
        Ok(())
    }

    /// Counts game `game_id` among `tenant`'s running games, at most `limit`. When the set is
    /// full, it is checked against the games first (`is_running` says whether a game still
    /// runs), at most once per `REPAIR_EVERY`.
    pub async fn admit_active_game<F, Fut>(
        &self,
        tenant: &str,
        game_id: &str,
        limit: u64,
        is_running: F,
    ) -> ServiceResult<()>
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        if self
            .store
            .join(tenant, ACTIVE_GAMES, game_id, limit)
            .await?
        {
            return Ok(());
        }
        let due = {
            let mut repaired = self.repaired.lock();
            let due = repaired
                .get(tenant)
                .is_none_or(|at| at.elapsed() >= REPAIR_EVERY);
            if due {
                repaired.insert(tenant.to_owned(), Instant::now());
            }
            due
        };
        if due {
            for member in self.store.members(tenant, ACTIVE_GAMES).await? {
                if !is_running(member.clone()).await {
                    self.store.leave(tenant, ACTIVE_GAMES, &member).await?;
                }
            }
            if self
                .store
                .join(tenant, ACTIVE_GAMES, game_id, limit)
                .await?
            {
                return Ok(());
            }
        }
        crate::metrics::tenant_quota_refusal(tenant, "active_games");
        Err(ServiceError::QuotaExceeded {
            quota: "active_games",
            message: format!(
                "the tenant's quota active_games ({limit} games not yet finished) is used up: \
                 finish or end a game first"
            ),
            retry_after_ms: None,
        })
    }

    /// Game `game_id` of `tenant` has finished (or will never start): it leaves the running
    /// games, and its bot seats (`seats`) the bot seats.
    pub async fn game_over(
        &self,
        tenant: &str,
        game_id: &str,
        seats: impl IntoIterator<Item = u32>,
    ) -> ServiceResult<()> {
        for seat in seats {
            self.store
                .leave(tenant, BOT_SEATS, &format!("{game_id}:{seat}"))
                .await?;
        }
        Ok(self.store.leave(tenant, ACTIVE_GAMES, game_id).await?)
    }

    /// Counts seat `seat` of game `game_id` among `tenant`'s bot seats, at most `limit`; when
    /// the set is full it is repaired first as [`Quotas::admit_active_game`] does.
    pub async fn admit_bot_seat<F, Fut>(
        &self,
        tenant: &str,
        game_id: &str,
        seat: u32,
        limit: u64,
        is_running: F,
    ) -> ServiceResult<()>
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let member = format!("{game_id}:{seat}");
        if self.store.join(tenant, BOT_SEATS, &member, limit).await? {
            return Ok(());
        }
        for held in self.store.members(tenant, BOT_SEATS).await? {
            let game = held
                .rsplit_once(':')
                .map_or(held.as_str(), |(game, _)| game);
            if !is_running(game.to_owned()).await {
                self.store.leave(tenant, BOT_SEATS, &held).await?;
            }
        }
        if self.store.join(tenant, BOT_SEATS, &member, limit).await? {
            return Ok(());
        }
        crate::metrics::tenant_quota_refusal(tenant, "bot_seats");
        Err(ServiceError::QuotaExceeded {
            quota: "bot_seats",
            message: format!(
                "the tenant's quota bot_seats ({limit} bot seats in running games) is used up: \
                 finish a game with bots first"
            ),
            retry_after_ms: None,
        })
    }

    /// Seat `seat` of game `game_id` is no bot seat of `tenant` after all (its hand-over failed).
    pub async fn leave_bot_seat(
        &self,
        tenant: &str,
        game_id: &str,
        seat: u32,
    ) -> ServiceResult<()> {
        Ok(self
            .store
            .leave(tenant, BOT_SEATS, &format!("{game_id}:{seat}"))
            .await?)
    }

    /// The thinking budget a bot of `tenant` may use now, out of `wanted`, within its `limit` of
    /// milliseconds per minute: `wanted` while the minute's allowance lasts, less (down to zero:
    /// decide without searching) once it runs out.
    pub async fn bot_budget(
        &self,
        tenant: &str,
        wanted: Duration,
        limit: u64,
    ) -> ServiceResult<Duration> {
        let minute = unix_millis() / 60_000;
        let wanted_ms = wanted.as_millis().max(1) as u64;
        let granted = self
            .store
            .take(
                tenant,
                &format!("botms:{minute}"),
                wanted_ms,
                limit,
                Duration::from_secs(60) + COUNTER_SLACK,
            )
            .await?;
        if granted < wanted_ms {
            crate::metrics::tenant_quota_refusal(tenant, "bot_think_ms_per_minute");
        }
        Ok(Duration::from_millis(granted))
    }

    /// Counts one Observe stream on a game of `tenant` (at most `limit` open at once over every
    /// replica); the slot leaves the count when dropped.
    pub async fn admit_stream(
        self: &Arc<Self>,
        tenant: &str,
        limit: u64,
    ) -> ServiceResult<StreamSlot> {
        let number = self
            .next_stream
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let member = format!("{}:{number}", self.replica);
        let now = unix_millis();
        let joined = self
            .store
            .join_leased(
                tenant,
                STREAMS,
                &member,
                limit,
                now,
                now + STREAM_LEASE.as_millis() as u64,
            )
            .await?;
        if !joined {
            crate::metrics::tenant_quota_refusal(tenant, "observe_streams");
            return Err(ServiceError::QuotaExceeded {
                quota: "observe_streams",
                message: format!(
                    "the tenant's quota observe_streams ({limit} streams open at once) is used \
                     up: close a stream first"
                ),
                retry_after_ms: None,
            });
        }
        self.streams
            .lock()
            .entry(tenant.to_owned())
            .or_default()
            .insert(member.clone());
        Ok(StreamSlot {
            quotas: self.clone(),
            tenant: tenant.to_owned(),
            member,
        })
    }

    /// Renews the leases of this replica's open streams every [`STREAM_RENEW`], until `stop`.
    pub(super) async fn renew_streams(self: Arc<Self>, mut stop: super::stop::StopSignal) {
        while stop.pause(STREAM_RENEW).await {
            let open: Vec<(String, Vec<String>)> = self
                .streams
                .lock()
                .iter()
                .filter(|(_, members)| !members.is_empty())
                .map(|(tenant, members)| (tenant.clone(), members.iter().cloned().collect()))
                .collect();
            let until = unix_millis() + STREAM_LEASE.as_millis() as u64;
            for (tenant, members) in open {
                if let Err(error) = self
                    .store
                    .renew_leased(&tenant, STREAMS, &members, until)
                    .await
                {
                    tracing::warn!(%tenant, %error, "stream leases not renewed; retried next time");
                }
            }
        }
    }
}

/// An Observe stream's place in its tenant's count: it leaves the count when dropped (the
/// stream ended).
pub struct StreamSlot {
    quotas: Arc<Quotas>,
    tenant: String,
    member: String,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let quotas = self.quotas.clone();
        let tenant = std::mem::take(&mut self.tenant);
        let member = std::mem::take(&mut self.member);
        if let Some(members) = quotas.streams.lock().get_mut(&tenant) {
            members.remove(&member);
        }
        // Without a runtime (the process is ending) the lease runs out by itself.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = quotas.store.leave_leased(&tenant, STREAMS, &member).await {
                    tracing::warn!(%tenant, %error, "a closed stream counts until its lease ends");
                }
            });
        }
    }
}

/// A rate quota's refusal, counted in `tenant`'s metrics.
fn exhausted(
    tenant: &str,
    quota: &'static str,
    limit: u64,
    per: &str,
    retry_after_ms: u64,
) -> ServiceError {
    crate::metrics::tenant_quota_refusal(tenant, quota);
    ServiceError::QuotaExceeded {
        quota,
        message: format!(
            "the tenant's quota {quota} ({limit} {per}) is used up; retry in {retry_after_ms} ms"
        ),
        retry_after_ms: Some(retry_after_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    #[tokio::test]
    async fn replicas_together_never_admit_more_acts_than_the_limit() {
        // Three replicas' counting over one store, flooding in the same second.
        let store = Arc::new(MemoryStore::default());
        let replicas: Vec<Arc<Quotas>> = (0..3)
            .map(|_| Arc::new(Quotas::new(store.clone())))
            .collect();
        // Wait for the start of a second, so the flood fits in one.
        let now = unix_millis();
        tokio::time::sleep(Duration::from_millis(1000 - now % 1000 + 5)).await;
        let second = unix_millis() / 1000;
        let mut admitted = 0;
        let mut refused = 0;
        for round in 0..200 {
            let replica = &replicas[round % 3];
            match replica.admit_act("flood", 50).await {
                Ok(()) => admitted += 1,
                Err(ServiceError::QuotaExceeded { quota, .. }) => {
                    assert_eq!(quota, "acts_per_second");
                    refused += 1;
                }
                Err(other) => panic!("{other}"),
            }
        }
        // Background refills settle.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            unix_millis() / 1000,
            second,
            "the flood took a whole second"
        );
        assert!(admitted <= 50, "{admitted} admitted over a limit of 50");
        assert!(admitted >= 40, "only {admitted} admitted of 50");
        assert_eq!(admitted + refused, 200);
    }

    #[tokio::test]
    async fn bots_past_the_minutes_allowance_get_what_is_left_then_nothing() {
        let quotas = Quotas::new(Arc::new(MemoryStore::default()));
        let want = Duration::from_millis(400);
        loop {
            let minute = unix_millis() / 60_000;
            let mut budgets = Vec::new();
            for _ in 0..4 {
                budgets.push(quotas.bot_budget("t", want, 1000).await.expect("budget"));
            }
            if unix_millis() / 60_000 != minute {
                // A minute's end fell between the decisions: the counter restarted.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            let ms: Vec<u128> = budgets.iter().map(Duration::as_millis).collect();
            assert_eq!(ms, [400, 400, 200, 0]);
            break;
        }
    }

    #[tokio::test]
    async fn a_full_set_of_running_games_is_repaired_from_the_games() {
        let store = Arc::new(MemoryStore::default());
        let quotas = Quotas::new(store.clone());
        let running = |_: String| async { true };
        let finished = |_: String| async { false };
        quotas
            .admit_active_game("t", "a", 2, running)
            .await
            .expect("a");
        quotas
            .admit_active_game("t", "b", 2, running)
            .await
            .expect("b");
        // Joining twice counts once.
        quotas
            .admit_active_game("t", "b", 2, running)
            .await
            .expect("b again");
        assert!(matches!(
            quotas.admit_active_game("t", "c", 2, running).await,
            Err(ServiceError::QuotaExceeded {
                quota: "active_games",
                ..
            })
        ));
        // Leaves are what normally frees a place.
        quotas.game_over("t", "a", []).await.expect("over");
        quotas
            .admit_active_game("t", "c", 2, running)
            .await
            .expect("c after a finished");
        // A leave that never happened (its replica died) is found by the repair, once a minute.
        let fresh = Quotas::new(store.clone());
        fresh
            .admit_active_game("t", "d", 2, finished)
            .await
            .expect("b and c turned out finished");
    }
}
