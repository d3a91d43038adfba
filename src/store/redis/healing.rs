//! A Redis connection that replaces itself when it stops answering.
//!
//! A multiplexed connection whose peer goes silent — a half-open TCP connection after a network
//! fault, a NAT that dropped its mapping — never fails by itself: every command just times out,
//! and the kernel takes ~15 minutes to give up on the socket. The `redis` crate's connection
//! manager reconnects only when a connection is reported dropped, so it would keep reusing the
//! dead one. Here any command that misses its deadline, or fails on I/O, retires the connection it
//! used: the next command opens a fresh one (shared by every caller that arrives meanwhile), while
//! commands still in flight on the old one finish or time out on their own.
//!
//! While Redis is down every command fails, and each failure retires the connection the next
//! command then tries to open. Logging each of them flooded the log (thousands of identical
//! warnings over a few short outages), so only changes are logged ([`Outage`]): the first
//! failure ("unreachable"), then at most one "still unreachable" line every
//! [`OUTAGE_REPORT_EVERY`] with the count of failed commands, and the first success after
//! ("reachable again", with how long it was down and how many commands failed meanwhile).

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Cmd, Pipeline, RedisError, RedisFuture, RedisResult, Value};

use crate::outage::{OUTAGE_REPORT_EVERY, Outage, OutageReport};

/// One open connection: to a single node, or to a cluster (routing by key slot).
#[derive(Clone)]
pub(super) enum Connection {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Single(c) => c.req_packed_command(cmd),
            Connection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Single(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
        }
    }
}

/// Opens connections with fixed deadlines (the response timeout is part of each connection).
#[derive(Clone)]
pub(super) enum Connector {
    Single(Box<SingleNode>),
    Cluster(Box<ClusterClient>),
}

/// A single node's client and the deadlines of its connections.
#[derive(Clone)]
pub(super) struct SingleNode {
    pub(super) client: redis::Client,
    pub(super) config: AsyncConnectionConfig,
}

impl Connector {
    pub(super) async fn connect(&self) -> RedisResult<Connection> {
        match self {
            Connector::Single(node) => Ok(Connection::Single(
                node.client
                    .get_multiplexed_async_connection_with_config(&node.config)
                    .await?,
            )),
            Connector::Cluster(client) => {
                Ok(Connection::Cluster(client.get_async_connection().await?))
            }
        }
    }
}

/// A connection being opened (or open), shared by every caller that needs it meanwhile.
type Pending = Shared<BoxFuture<'static, RedisResult<Connection>>>;

struct Slot {
    /// Bumped each time the connection is retired, so only the first failure replaces it.
    generation: u64,
    pending: Pending,
}

struct Inner {
    connector: Connector,
    slot: Mutex<Slot>,
    replacements: AtomicU64,
    /// Set while an outage is open: a command that succeeds checks it (one atomic load) and, only
    /// when set, takes the lock to close the outage.
    down: AtomicBool,
    outage: Mutex<Outage>,
}

fn log_report(report: OutageReport, error: Option<&RedisError>) {
    match report {
        OutageReport::Down => tracing::warn!(
            error = error.map(tracing::field::display),
            "Redis connection failed: commands fail with UNAVAILABLE and each retries on a new \
             connection; logged again every {}s while it lasts",
            OUTAGE_REPORT_EVERY.as_secs()
        ),
        OutageReport::StillDown { down_for, failures } => tracing::warn!(
            error = error.map(tracing::field::display),
            down_for_ms = down_for.as_millis() as u64,
            failures,
            "Redis still unreachable after {down_for:.1?}: {failures} commands failed so far"
        ),
        OutageReport::BackUp { down_for, failures } => tracing::info!(
            down_for_ms = down_for.as_millis() as u64,
            failures,
            "Redis reachable again after {down_for:.1?}; {failures} commands failed meanwhile"
        ),
    }
}

/// A shared connection that retires itself after a missed deadline or an I/O error. Cheap to
/// clone; every clone uses the same underlying connection.
#[derive(Clone)]
pub(super) struct HealingConnection(Arc<Inner>);

fn open(connector: &Connector) -> Pending {
    let connector = connector.clone();
    async move { connector.connect().await }.boxed().shared()
}

/// Whether `error` says the connection itself is unusable (as opposed to the command failing).
pub(super) fn connection_is_suspect(error: &RedisError) -> bool {
    error.is_timeout()
        || error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_unrecoverable_error()
}

impl HealingConnection {
    /// Opens the first connection now, so a wrong address fails at start-up.
    pub(super) async fn open(connector: Connector) -> RedisResult<Self> {
        let first = connector.connect().await?;
        let ready: BoxFuture<'static, RedisResult<Connection>> =
            futures::future::ready(Ok(first)).boxed();
        Ok(HealingConnection(Arc::new(Inner {
            connector,
            slot: Mutex::new(Slot {
                generation: 0,
                pending: ready.shared(),
            }),
            replacements: AtomicU64::new(0),
            down: AtomicBool::new(false),
            outage: Mutex::new(Outage::default()),
        })))
    }

    /// Counts a command that failed because of the connection (logging only state changes).
    fn failed(&self, error: &RedisError) {
        let mut outage = self.0.outage.lock();
        let report = outage.failure(Instant::now());
        self.0.down.store(outage.is_down(), Ordering::Release);
        drop(outage);
        if let Some(report) = report {
            log_report(report, Some(error));
        }
    }

    /// Notes a command that worked: closes an open outage (and logs it).
    fn worked(&self) {
        if !self.0.down.load(Ordering::Acquire) {
            return;
        }
        let mut outage = self.0.outage.lock();
        let report = outage.success(Instant::now());
        self.0.down.store(outage.is_down(), Ordering::Release);
        drop(outage);
        if let Some(report) = report {
            log_report(report, None);
        }
    }

    /// How many times the connection has been retired and replaced.
    pub(super) fn replacements(&self) -> u64 {
        self.0.replacements.load(Ordering::Relaxed)
    }

    fn current(&self) -> (u64, Pending) {
        let slot = self.0.slot.lock();
        (slot.generation, slot.pending.clone())
    }

    /// Retires connection `generation` (if it is still the current one): the next command opens
    /// a new connection.
    fn retire(&self, generation: u64, error: &RedisError) {
        let mut slot = self.0.slot.lock();
        if slot.generation != generation {
            return;
        }
        slot.generation += 1;
        slot.pending = open(&self.0.connector);
        self.0.replacements.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(%error, "Redis connection retired; the next command opens a new one");
    }

    /// The current connection, held for a sequence of commands that must share one Redis client
    /// (an append and the WAIT that confirms it).
    pub(super) async fn pinned(&self) -> RedisResult<Pinned> {
        let (generation, connection) = self.connection().await?;
        Ok(Pinned {
            owner: self.clone(),
            generation,
            connection,
        })
    }

    /// The current connection (opening it if needed) and its generation.
    async fn connection(&self) -> RedisResult<(u64, Connection)> {
        let (generation, pending) = self.current();
        match pending.await {
            Ok(connection) => Ok((generation, connection)),
            Err(error) => {
                self.failed(&error);
                self.retire(generation, &error);
                Err(error)
            }
        }
    }

    /// Retires connection `generation` if `result` says it is dead; keeps the outage state.
    fn check<T>(&self, generation: u64, result: &RedisResult<T>) {
        match result {
            Err(error) if connection_is_suspect(error) => {
                self.failed(error);
                self.retire(generation, error);
            }
            // Redis answered (an error reply is an answer): the connection works.
            _ => self.worked(),
        }
    }
}

impl ConnectionLike for HealingConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let (generation, mut connection) = self.connection().await?;
            let result = connection.req_packed_command(cmd).await;
            self.check(generation, &result);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let (generation, mut connection) = self.connection().await?;
            let result = connection
                .req_packed_commands(pipeline, offset, count)
                .await;
            self.check(generation, &result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        0
    }
}

/// One connection of a [`HealingConnection`], held for several commands; a command that finds it
/// dead still retires it.
pub(super) struct Pinned {
    owner: HealingConnection,
    generation: u64,
    connection: Connection,
}

impl ConnectionLike for Pinned {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let result = self.connection.req_packed_command(cmd).await;
            self.owner.check(self.generation, &result);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let result = self
                .connection
                .req_packed_commands(pipeline, offset, count)
                .await;
            self.owner.check(self.generation, &result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        0
    }
}
