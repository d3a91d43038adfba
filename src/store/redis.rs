//! The Redis store: any number of replicas share it (single node or Redis Cluster).
//!
//! Layout, one hash tag per game so all of a game's keys share one cluster slot:
//! - `tabula:{<id>}:meta` — hash: kind, config, rules_version, seed, tokens, created_at_ms,
//!   players (if any), finished_at_ms (once the game has ended), format (the format of the game's
//!   keys, absent before 1.0.0: 1) and created_by (the release that created it, since 1.0.0);
//! - `tabula:{<id>}:log` — stream: entry `<version>-0` with fields seat, action, req, at (the
//!   server time the replica stamped it with, ms; absent in entries logged before turn clocks);
//! - `tabula:{<id>}:req` — hash: `<seat>:<request id>` → version, for idempotent retries;
//! - `tabula:{<id>}:snap` — hash: version, rules_version, state (the newest snapshot);
//! - `tabula:{<id>}:appended` — a pub/sub channel, not a key: each appended entry.
//!
//! `tabula:layout` records the layout of all of these (docs/compatibility.md): a replica checks it
//! when it connects and refuses a layout it does not know.
//!
//! The game index, for listings, is a fixed number of shards with hash tags of their own,
//! `tabula:{games-<n>}:…`: see `index.rs`. The turn clocks' deadline index likewise, with
//! `tabula:{deadlines-<n>}:…`: see `deadlines.rs`.
//!
//! Every operation on one game is atomic: the multi-step ones are Lua scripts run with EVALSHA,
//! one round trip each. An append may add round trips around its script (ARCHITECTURE.md, *The
//! Act path*, counts them); listings and retention scans read several shards.
//! Appends go through the append script (`scripts.rs`), which checks the expected version and the request id,
//! appends atomically, and announces the new entry on the game's channel `tabula:{<id>}:appended`.
//! Each replica follows the games observed on it through one subscriber connection (per Redis
//! node), whatever their number: see `announcements.rs` for how and why.
//!
//! A replica holds two connections per Redis node: the shared one every command uses (replaced
//! when it misses a deadline, see `healing`), and the subscriber.

mod announcements;
mod bot_turns;
mod deadlines;
mod decode;
mod healing;
mod index;
pub mod keys;
mod layout;
mod log;
mod scripts;
mod tenants;
mod webhooks;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redis::cluster::ClusterClient;
use redis::{AsyncConnectionConfig, ProtocolVersion, Script, Value};
use tokio::sync::broadcast;

use self::announcements::{Announcements, SubscriberConnector, SubscriberOptions};
use self::bot_turns::BotTurns;
use self::deadlines::DeadlineIndex;
use self::decode::{
    as_string, as_u64, field_map, field_number, parse_entries, parse_meta, parse_snapshot,
};
use self::healing::{Connector, HealingConnection, SingleNode};
use self::index::GameIndex;
pub use self::layout::{
    APPEND_CALLS_EACH_TIME, LAYOUT_REFRESH, Upgrade, commands_in_scripts, commands_sent_directly,
    upgrade_store,
};
use self::layout::{check_layout, follow_layout, tenant_index_complete};
use self::scripts::{
    CREATE_SCRIPT, IDLE_SCRIPT, LOAD_SCRIPT, READ_WHOLE_SCRIPT, REMOVE_FINISHED_SCRIPT,
    SNAPSHOT_SCRIPT,
};
use self::scripts::{append_lean_script, append_script};

use super::feed::Feeds;
use super::{
    Append, BotTurn, BotTurnQueue, DeadlineSchedule, GameListing, GameLog, GameMeta, GamePage,
    IndexedDeadline, ListQuery, Loaded, LogEntry, NewEntry, RetentionIndex, RetryScope, Snapshot,
    Store, StoreError, StoreResult, WholeGame, request_key, retried, unix_millis,
};
use crate::games::Seat;
use crate::outage::OUTAGE_REPORT_EVERY;
use crate::proto::v1::GameKind;

/// How long a replica keeps trying to follow an observed game's log (beyond two response
/// timeouts) before its observers' streams end with UNAVAILABLE.
const FOLLOW_GRACE: Duration = Duration::from_secs(2);

/// When an append counts as done. Every setting keeps appends atomic and idempotent; they differ
/// in what an acknowledged move survives (the README's Reliability section states each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Acknowledged once Redis applied it: as durable as Redis's own persistence settings.
    #[default]
    None,
    /// Acknowledged once this many Redis replicas have it (`WAIT`).
    Replicas(u32),
    /// Acknowledged once Redis has fsynced it to its append-only file (`WAITAOF 1 0`, Redis ≥ 7.2
    /// or Valkey; a server without it, or without `appendonly yes`, is refused at start-up).
    Fsync,
}

impl std::str::FromStr for Durability {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "none" => Ok(Durability::None),
            "fsync" => Ok(Durability::Fsync),
            _ => text
                .strip_prefix("replicas=")
                .and_then(|n| n.parse().ok())
                .filter(|&n: &u32| n >= 1)
                .map(Durability::Replicas)
                .ok_or_else(|| format!("{text:?}: expected none, replicas=N (N ≥ 1) or fsync")),
        }
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Durability::None => write!(f, "none"),
            Durability::Replicas(n) => write!(f, "replicas={n}"),
            Durability::Fsync => write!(f, "fsync"),
        }
    }
}

/// Where to find Redis and how patient to be with it.
#[derive(Clone, Debug)]
pub struct RedisOptions {
    /// One URL for a single node; for a cluster, one or more seed nodes.
    pub urls: Vec<String>,
    /// The URLs are seed nodes of a Redis Cluster.
    pub cluster: bool,
    /// Deadline for ordinary commands, so a dead Redis turns into UNAVAILABLE quickly.
    pub response_timeout: Duration,
    /// Deadline for opening a connection.
    pub connection_timeout: Duration,
    /// When an append counts as done.
    pub durability: Durability,
    /// PEM certificates to verify a `rediss://` server with, instead of the system's roots (for a
    /// private CA).
    pub ca_certificate: Option<Vec<u8>>,
    /// How long a game's request ids are kept after the last one was written.
    pub request_id_ttl: Duration,
}

impl RedisOptions {
    /// Options for one Redis node at `url`, with the default deadlines.
    pub fn single(url: impl Into<String>) -> Self {
        RedisOptions {
            urls: vec![url.into()],
            cluster: false,
            response_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(2),
            durability: Durability::None,
            ca_certificate: None,
            request_id_ttl: crate::store::DEFAULT_REQUEST_ID_TTL,
        }
    }
}

/// The Redis store: logs as Streams, appends as one Lua script, on a single node or a Cluster.
pub struct RedisStore {
    /// Shared by every ordinary command; replaced when it misses a deadline.
    connection: HealingConnection,
    /// Follows the games observed on this replica (one subscriber connection per node).
    announcements: Announcements,
    durability: Durability,
    /// How long an append waits for its durability confirmation (within the response timeout).
    confirm_within: Duration,
    /// How long the request-id index lives after its last write, in whole seconds (at least 1).
    request_id_ttl_seconds: u64,
    feeds: Arc<Feeds>,
    append: Script,
    /// The append of an ordinary move (see `scripts.rs`, `APPEND_LEAN_TEMPLATE`).
    append_lean: Script,
    load: Script,
    create: Script,
    snapshot: Script,
    read_whole: Script,
    remove_finished: Script,
    idle: Script,
    index: GameIndex,
    bot_turns: BotTurns,
    /// Where abandonment's walk through the running games is (see
    /// [`RetentionIndex::idle_running`]).
    idle_cursor: tokio::sync::Mutex<(usize, usize)>,
    /// The turn clocks' deadline index (see `deadlines.rs`).
    deadlines: DeadlineIndex,
    /// The store's layout ([`keys::LAYOUT`]): what appends write. Read at connect and every
    /// [`LAYOUT_REFRESH`] after.
    layout: Arc<AtomicU32>,
}

/// Verify `rediss://` servers with the PEM certificates `ca` instead of the system's roots.
fn tls_certificates(ca: &[u8]) -> redis::TlsCertificates {
    redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(ca.to_vec()),
    }
}

/// Whether `error` says the connection was dead before the command could run (dropped, reset, a
/// broken pipe), as opposed to a command that may have run but whose answer came too late.
fn connection_was_dead(error: &redis::RedisError) -> bool {
    !error.is_timeout() && (error.is_connection_dropped() || error.is_io_error())
}

/// A Redis failure as the caller sees it. Redis's own text speaks to the operator, not to a
/// client: it can name the deployment's servers (a cluster redirection's `host:port`, a TLS
/// certificate's host name) or its internals (a script's line, `maxmemory`), and a client can
/// act on none of it. The caller learns what kind of failure it was and that a retry may help;
/// the cause goes to the replica's log: a connection's failures through its outage report
/// (`healing.rs`), answers that refused a command here ([`log_refusal`]).
fn unavailable(error: redis::RedisError) -> StoreError {
    let what = if error.is_timeout() {
        "no answer in time"
    } else if healing::connection_is_suspect(&error) {
        "the connection failed"
    } else {
        log_refusal(&error);
        "the command was refused"
    };
    StoreError::Unavailable(format!("{what}; retry later"))
}

/// Logs an answer of Redis that refused a command (out of memory, a read-only replica, a busy
/// script): the first, then at most one line per [`OUTAGE_REPORT_EVERY`] with how many were not
/// logged since, so that a refusal on every call cannot flood the log.
fn log_refusal(error: &redis::RedisError) {
    /// When the last line was logged, and the refusals since.
    static LAST: parking_lot::Mutex<Option<(Instant, u64)>> = parking_lot::Mutex::new(None);
    let now = Instant::now();
    let mut last = LAST.lock();
    let unlogged = match &mut *last {
        Some((at, unlogged)) if now.saturating_duration_since(*at) < OUTAGE_REPORT_EVERY => {
            *unlogged += 1;
            return;
        }
        Some((_, unlogged)) => *unlogged,
        None => 0,
    };
    *last = Some((now, 0));
    drop(last);
    tracing::warn!(
        %error,
        unlogged,
        "Redis refused a command: the caller got UNAVAILABLE; logged at most every {}s, with \
         the refusals not logged since",
        OUTAGE_REPORT_EVERY.as_secs()
    );
}

/// The announcement of `entry` appended at `version`, format 1 (docs/compatibility.md):
/// `<version>:<seat>:<server time>:<request id length>:<request id><action>`.
fn announcement(version: u64, entry: &NewEntry) -> Vec<u8> {
    let mut payload = format!(
        "{version}:{}:{}:{}:{}",
        entry.seat,
        entry.server_time_ms,
        entry.request_id.len(),
        entry.request_id
    )
    .into_bytes();
    payload.extend_from_slice(&entry.action);
    payload
}

fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

impl RedisStore {
    /// Connects (the first connection opens now, so a wrong address fails at start-up).
    pub async fn connect(options: &RedisOptions) -> StoreResult<Self> {
        let (connector, subscriber) = if options.cluster {
            let mut builder = ClusterClient::builder(options.urls.clone())
                .connection_timeout(options.connection_timeout)
                .response_timeout(options.response_timeout);
            if let Some(ca) = &options.ca_certificate {
                builder = builder.certs(tls_certificates(ca));
            }
            let client = builder.build().map_err(unavailable)?;
            (
                Connector::Cluster(Box::new(client)),
                SubscriberConnector::Cluster {
                    urls: options.urls.clone(),
                    connection_timeout: options.connection_timeout,
                    response_timeout: options.response_timeout,
                    ca_certificate: options.ca_certificate.clone(),
                },
            )
        } else {
            let url = options
                .urls
                .first()
                .ok_or_else(|| corrupt("no Redis URL given"))?;
            let client = match &options.ca_certificate {
                Some(ca) => redis::Client::build_with_tls(url.as_str(), tls_certificates(ca)),
                None => redis::Client::open(url.as_str()),
            }
            .map_err(unavailable)?;
            let config = AsyncConnectionConfig::new()
                .set_connection_timeout(Some(options.connection_timeout))
                .set_response_timeout(Some(options.response_timeout));
            // Pub/sub messages arrive as RESP3 pushes on a multiplexed connection; the same
            // address, credentials and TLS settings otherwise.
            let info = client.get_connection_info().clone();
            let resp3 = info
                .redis_settings()
                .clone()
                .set_protocol(ProtocolVersion::RESP3);
            let subscriber_client =
                redis::Client::open(info.set_redis_settings(resp3)).map_err(unavailable)?;
            (
                Connector::Single(Box::new(SingleNode {
                    client,
                    config: config.clone(),
                })),
                SubscriberConnector::Single(Box::new(SingleNode {
                    client: subscriber_client,
                    config,
                })),
            )
        };
        if options.cluster && options.durability != Durability::None {
            return Err(StoreError::Unavailable(format!(
                "--durability {} is not supported with --redis-cluster (WAIT and WAITAOF confirm \
                 one node's writes)",
                options.durability
            )));
        }
        // At start-up the operator reads the error: it keeps Redis's own words.
        let connection = HealingConnection::open(connector).await.map_err(|error| {
            StoreError::Unavailable(format!("cannot connect to Redis: {error}"))
        })?;
        if options.durability == Durability::Fsync {
            // Probes WAITAOF: unknown before Redis 7.2, refused without appendonly. A client that
            // wrote nothing yet returns at once.
            let probe: redis::RedisResult<Value> = redis::cmd("WAITAOF")
                .arg(1)
                .arg(0)
                .arg(1)
                .query_async(&mut connection.clone())
                .await;
            if let Err(error) = probe {
                return Err(StoreError::Unavailable(format!(
                    "--durability fsync needs a server with WAITAOF (Redis ≥ 7.2 or Valkey) and \
                     appendonly yes: {error}"
                )));
            }
        }
        let layout = Arc::new(AtomicU32::new(check_layout(&connection).await?));
        let tenant_index = Arc::new(AtomicBool::new(tenant_index_complete(&connection).await?));
        follow_layout(connection.clone(), &layout, &tenant_index);
        let feeds: Arc<Feeds> = Arc::default();
        let announcements = Announcements::start(
            SubscriberOptions {
                connector: subscriber,
                response_timeout: options.response_timeout,
                connection_timeout: options.connection_timeout,
                follow_deadline: FOLLOW_GRACE + options.response_timeout * 2,
            },
            connection.clone(),
            feeds.clone(),
        );
        let append = append_script(options.cluster);
        Ok(RedisStore {
            connection,
            announcements,
            durability: options.durability,
            confirm_within: options.response_timeout.mul_f64(0.75),
            request_id_ttl_seconds: options.request_id_ttl.as_secs().max(1),
            feeds,
            append: Script::new(&append),
            append_lean: Script::new(&append_lean_script(options.cluster)),
            load: Script::new(LOAD_SCRIPT),
            create: Script::new(CREATE_SCRIPT),
            snapshot: Script::new(SNAPSHOT_SCRIPT),
            read_whole: Script::new(READ_WHOLE_SCRIPT),
            remove_finished: Script::new(REMOVE_FINISHED_SCRIPT),
            idle: Script::new(IDLE_SCRIPT),
            index: GameIndex::new(tenant_index),
            bot_turns: BotTurns::new(),
            idle_cursor: tokio::sync::Mutex::new((0, 0)),
            deadlines: DeadlineIndex::new(),
            layout,
        })
    }

    fn conn(&self) -> HealingConnection {
        self.connection.clone()
    }

    /// Runs a read-only command (see [`read`]).
    async fn read<T, Fut>(&self, attempt: impl Fn(HealingConnection) -> Fut) -> StoreResult<T>
    where
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        read(&self.connection, attempt).await
    }

    /// Waits until the append just made on `connection` is as durable as the setting asks. If it
    /// is not confirmed in time the append stands (it cannot be undone) but is not acknowledged:
    /// the caller gets UNAVAILABLE and a retry with the same request id finds it applied.
    async fn confirm_durable(
        &self,
        connection: &mut healing::Pinned,
        version: u64,
    ) -> StoreResult<()> {
        let within = self.confirm_within.as_millis().max(1) as u64;
        match self.durability {
            Durability::None => Ok(()),
            Durability::Replicas(wanted) => {
                let confirmed: u64 = redis::cmd("WAIT")
                    .arg(wanted)
                    .arg(within)
                    .query_async(connection)
                    .await
                    .map_err(unavailable)?;
                if confirmed >= u64::from(wanted) {
                    Ok(())
                } else {
                    Err(StoreError::Unavailable(format!(
                        "version {version} was appended but only {confirmed} of {wanted} Redis \
                         replicas confirmed it within {within} ms"
                    )))
                }
            }
            Durability::Fsync => {
                let (local, _replicas): (u64, u64) = redis::cmd("WAITAOF")
                    .arg(1)
                    .arg(0)
                    .arg(within)
                    .query_async(connection)
                    .await
                    .map_err(unavailable)?;
                if local >= 1 {
                    Ok(())
                } else {
                    Err(StoreError::Unavailable(format!(
                        "version {version} was appended but Redis did not fsync it within {within} ms"
                    )))
                }
            }
        }
    }

    /// After an append of an entry that would end the game: moves the game to the index's
    /// finished games if the entry was appended (`parts` then holds its kind and creation time),
    /// or drops the intent if it was not. A failure is logged, not returned: the entry is in the
    /// log either way, and the intent left behind lets the next listing repair the index.
    async fn settle_finish(
        &self,
        game_id: &str,
        tag: &str,
        intent: &str,
        finished_at_ms: u64,
        parts: &mut impl Iterator<Item = Value>,
    ) {
        let settled = match tag {
            "appended" => {
                let kind = parts.next().map(as_u64).transpose();
                let created = parts.next().map(as_u64).transpose();
                // Nil for a game without a tenant.
                let tenant = parts.next().and_then(|value| as_string(value).ok());
                match (kind, created) {
                    (Ok(Some(kind)), Ok(Some(created_at_ms))) => {
                        match GameKind::try_from(kind as i32) {
                            Ok(kind) => {
                                self.index
                                    .finished(
                                        &self.connection,
                                        game_id,
                                        kind,
                                        created_at_ms,
                                        finished_at_ms,
                                        tenant.as_deref(),
                                    )
                                    .await
                            }
                            Err(_) => {
                                Err(corrupt(format!("game {game_id} has unknown kind {kind}")))
                            }
                        }
                    }
                    _ => Err(corrupt(
                        "the append reply lacks the game's kind and creation time",
                    )),
                }
            }
            "duplicate" | "conflict" => {
                self.index
                    .not_finished(&self.connection, game_id, intent)
                    .await
            }
            _ => Ok(()),
        };
        if let Err(error) = settled {
            tracing::warn!(%game_id, %error, "game index not updated; the next listing repairs it");
        }
    }

    /// How many times this store's shared connection was found dead and replaced.
    pub fn connection_replacements(&self) -> u64 {
        self.connection.replacements()
    }
}

#[async_trait]
impl GameListing for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn list_games(&self, query: &ListQuery) -> StoreResult<GamePage> {
        self.index.list(&self.connection, query).await
    }
}

#[async_trait]
impl DeadlineSchedule for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis", game_id, version))]
    async fn set_deadline(
        &self,
        game_id: &str,
        version: u64,
        deadline_ms: Option<u64>,
    ) -> StoreResult<()> {
        self.deadlines
            .set(&self.connection, game_id, version, deadline_ms)
            .await
    }

    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn expired_deadlines(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<IndexedDeadline>> {
        self.deadlines
            .expired(&self.connection, now_ms, limit)
            .await
    }
}

#[async_trait]
impl BotTurnQueue for RedisStore {
    async fn mark_bot_turn(&self, turn: &BotTurn, due_ms: u64) -> StoreResult<()> {
        self.bot_turns.mark(&self.connection, turn, due_ms).await
    }

    async fn clear_bot_turn(&self, turn: &BotTurn) -> StoreResult<()> {
        self.bot_turns.clear(&self.connection, turn).await
    }

    async fn claim_due_bot_turns(
        &self,
        now_ms: u64,
        claim_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<BotTurn>> {
        self.bot_turns
            .claim_due(&self.connection, now_ms, claim_until_ms, limit)
            .await
    }
}

#[async_trait]
impl RetentionIndex for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn finished_before(
        &self,
        finished_before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<String>> {
        self.index
            .finished_before(&self.connection, finished_before_ms, limit)
            .await
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn read_whole(&self, game_id: &str) -> StoreResult<Option<WholeGame>> {
        let reply: Value = self
            .read(|mut connection| async move {
                self.read_whole
                    .key(keys::game(game_id, "meta"))
                    .key(keys::game(game_id, "log"))
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        let parts = match reply {
            Value::Nil => return Ok(None),
            Value::Array(parts) if parts.len() == 2 => parts,
            other => return Err(corrupt(format!("unexpected read reply {other:?}"))),
        };
        let [meta, entries]: [Value; 2] =
            parts.try_into().map_err(|_| corrupt("read reply shape"))?;
        let fields = field_map(meta)?;
        let finished_at_ms = match fields.iter().any(|(name, _)| name == "finished_at_ms") {
            true => Some(field_number(&fields, "finished_at_ms")?),
            false => None,
        };
        Ok(Some(WholeGame {
            meta: parse_meta(game_id, &fields)?,
            finished_at_ms,
            entries: parse_entries(entries)?,
        }))
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn remove_finished(&self, game_id: &str) -> StoreResult<bool> {
        // The game's keys first (its slot), then its index entries (the shard's slot): a replica
        // dying in between leaves index entries of a game that is gone, which the next pass (or
        // a listing) drops; the reverse order could leave a game nobody would ever find again.
        let removed: Value = self
            .remove_finished
            .key(keys::game(game_id, "meta"))
            .key(keys::game(game_id, "log"))
            .key(keys::game(game_id, "req"))
            .key(keys::game(game_id, "snap"))
            .key(keys::game(game_id, "hooks"))
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        let tenant = match removed {
            // Gone already: its index entries may still be there (a replica died after removing
            // it); dropping them again is harmless.
            Value::Int(-1) => None,
            Value::Int(0) => return Ok(false),
            Value::Array(parts) => match parts.into_iter().nth(1).map(as_string).transpose()? {
                Some(tenant) if !tenant.is_empty() => Some(tenant),
                _ => None,
            },
            other => return Err(corrupt(format!("unexpected removal reply {other:?}"))),
        };
        self.index
            .forget(&self.connection, game_id, tenant.as_deref())
            .await?;
        Ok(true)
    }

    #[tracing::instrument(skip_all, fields(store = "redis"))]
    async fn idle_running(
        &self,
        idle_before_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<(String, u64)>> {
        // A game idle since a time was created before it: the running sets' scores narrow the
        // walk; each candidate's meta says when it last moved.
        let candidates = {
            let mut cursor = self.idle_cursor.lock().await;
            self.index
                .running_created_before(&self.connection, idle_before_ms, limit, &mut cursor)
                .await?
        };
        let mut idle = Vec::new();
        for game_id in candidates {
            let reply: Option<(u64, u8, u64)> = self
                .read(|mut connection| {
                    let game_id = &game_id;
                    async move {
                        self.idle
                            .key(keys::game(game_id, "meta"))
                            .key(keys::game(game_id, "log"))
                            .invoke_async(&mut connection)
                            .await
                    }
                })
                .await?;
            if let Some((active_ms, 0, version)) = reply
                && active_ms < idle_before_ms
            {
                idle.push((game_id, version));
            }
        }
        Ok(idle)
    }
}

#[async_trait]
impl Store for RedisStore {
    async fn ping(&self) -> StoreResult<()> {
        let _: String = redis::cmd("PING")
            .query_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "redis"
    }
}

/// Runs a read-only command, and once more on a fresh connection if the first attempt found its
/// connection already dead (after a Redis restart every open connection is broken, and the first
/// command on each would fail). Re-reading is harmless; a write is never re-sent here.
async fn read<T, Fut>(
    connection: &HealingConnection,
    attempt: impl Fn(HealingConnection) -> Fut,
) -> StoreResult<T>
where
    Fut: std::future::Future<Output = redis::RedisResult<T>>,
{
    match attempt(connection.clone()).await {
        Err(error) if connection_was_dead(&error) => {
            attempt(connection.clone()).await.map_err(unavailable)
        }
        other => other.map_err(unavailable),
    }
}

/// The game's log entries after version `after` (XRANGE), on the shared connection; `None` when
/// the store has no such game. One round trip: the log from entry `after + 1` and then the meta's
/// existence, pipelined (both keys share the game's slot). Nothing in the log tells a game
/// without new entries from a game retention removed (issue #24: a replica must not keep
/// answering from its copy of such a game), hence the meta; reading from `after + 1` keeps an
/// up-to-date catch-up (a warm GetView, the common case) from fetching and decoding an entry it
/// already has. The order makes the pair safe without a transaction: a meta seen after the log
/// was read means the game was still there when it was read.
async fn read_entries_after(
    connection: &HealingConnection,
    game_id: &str,
    after: u64,
) -> StoreResult<Option<Vec<LogEntry>>> {
    // Most reads find nothing new (a replica checking that its cached game is current, for a
    // GetView): the log's length alone answers them, the cheapest read Redis has (a fifth of an
    // XRANGE's time, measured with `tabula load --probe-redis`). A longer log costs a second round
    // trip for the entries. A game read at version 0 may have no log yet: whether it exists comes
    // in the same round trip.
    let (length, meta_exists): (u64, bool) = if after == 0 {
        read(connection, |mut connection| async move {
            redis::pipe()
                .cmd("XLEN")
                .arg(keys::game(game_id, "log"))
                .cmd("EXISTS")
                .arg(keys::game(game_id, "meta"))
                .query_async(&mut connection)
                .await
        })
        .await?
    } else {
        let length = read(connection, |mut connection| async move {
            redis::cmd("XLEN")
                .arg(keys::game(game_id, "log"))
                .query_async(&mut connection)
                .await
        })
        .await?;
        (length, true)
    };
    if length > after {
        return read(connection, |mut connection| async move {
            redis::cmd("XRANGE")
                .arg(keys::game(game_id, "log"))
                .arg(format!("{}-0", after + 1))
                .arg("+")
                .query_async(&mut connection)
                .await
        })
        .await
        .and_then(parse_entries)
        .map(Some);
    }
    if length > 0 {
        // A log as long as the version read: the game exists and nothing is new.
        return Ok(Some(Vec::new()));
    }
    // No log: a game without entries yet (read at version 0, with the meta's existence), or one
    // that has left the store (retention deletes its log and meta together).
    Ok((after == 0 && meta_exists).then(Vec::new))
}
