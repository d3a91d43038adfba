//! The Redis store: any number of replicas share it (single node or Redis Cluster).
//!
//! Layout, one hash tag per game so all of a game's keys share one cluster slot:
//! - `tabula:{<id>}:meta` — hash: kind, config, rules_version, seed, tokens, created_at_ms;
//! - `tabula:{<id>}:log` — stream: entry `<version>-0` with fields seat, action, req;
//! - `tabula:{<id>}:req` — hash: `<seat>:<request id>` → version, for idempotent retries;
//! - `tabula:{<id>}:snap` — hash: version, rules_version, state (the newest snapshot).
//!
//! Every operation is one round trip: the multi-step ones are Lua scripts run with EVALSHA.
//! Appends go through [`APPEND_SCRIPT`], which checks the expected version and the request id and
//! appends atomically; the XADD itself is the announcement that wakes other replicas' watchers
//! (blocking XREADs on their own connections, one per observed game).

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Script, Value};
use tokio::sync::broadcast;

use super::feed::Feeds;
use super::{
    Append, GameMeta, Loaded, LogEntry, NewEntry, Snapshot, Store, StoreError, StoreResult,
    request_key,
};
use crate::games::{Seat, Seed};

/// Appends one entry atomically. KEYS: meta, log, req. ARGV: expected version, seat, action,
/// request key ('' for none), request id.
pub const APPEND_SCRIPT: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if ARGV[4] ~= '' then
  local prior = redis.call('HGET', KEYS[3], ARGV[4])
  if prior then return {'duplicate', tonumber(prior)} end
end
local expected = tonumber(ARGV[1])
local current = redis.call('XLEN', KEYS[2])
if current ~= expected then
  local missing = {}
  if current > expected then
    missing = redis.call('XRANGE', KEYS[2], (expected + 1) .. '-0', '+')
  end
  return {'conflict', current, missing}
end
local version = current + 1
redis.call('XADD', KEYS[2], version .. '-0', 'seat', ARGV[2], 'action', ARGV[3], 'req', ARGV[5])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[4], version) end
return {'appended', version}
"#;

/// Meta, the snapshot (if made with the game's rules version) and the log after it.
/// KEYS: meta, log, snap.
const LOAD_SCRIPT: &str = r#"
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local rules = redis.call('HGET', KEYS[1], 'rules_version')
local snap = redis.call('HGETALL', KEYS[3])
local fields = {}
for i = 1, #snap, 2 do fields[snap[i]] = snap[i + 1] end
local after = 0
local usable = {}
if fields['rules_version'] == rules and fields['version'] then
  after = tonumber(fields['version'])
  usable = snap
end
return {meta, usable, redis.call('XRANGE', KEYS[2], (after + 1) .. '-0', '+')}
"#;

/// Creates the meta hash unless it exists. KEYS: meta. ARGV: field, value, ...
const CREATE_SCRIPT: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#;

/// Replaces the snapshot unless the stored one is as new. KEYS: snap. ARGV: version, rules, state.
const SNAPSHOT_SCRIPT: &str = r#"
local current = redis.call('HGET', KEYS[1], 'version')
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'rules_version', ARGV[2], 'state', ARGV[3])
return 1
"#;

/// How long a watcher's XREAD blocks before it checks whether anyone still listens.
const WATCH_BLOCK: Duration = Duration::from_secs(2);

/// Where to find Redis and how patient to be with it.
#[derive(Clone, Debug)]
pub struct RedisOptions {
    /// One URL for a single node; for a cluster, one or more seed nodes.
    pub urls: Vec<String>,
    pub cluster: bool,
    /// Deadline for ordinary commands, so a dead Redis turns into UNAVAILABLE quickly.
    pub response_timeout: Duration,
    pub connection_timeout: Duration,
}

impl RedisOptions {
    pub fn single(url: impl Into<String>) -> Self {
        RedisOptions {
            urls: vec![url.into()],
            cluster: false,
            response_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(2),
        }
    }
}

/// A connection to a single node (reconnecting) or to a cluster (routing by key slot).
#[derive(Clone)]
enum Connection {
    Single(ConnectionManager),
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

/// Opens the dedicated connections that blocking reads need: a blocking XREAD on a shared,
/// multiplexed connection would stall every command queued behind it.
#[derive(Clone)]
enum BlockingConnector {
    Single(redis::Client),
    Cluster(Box<ClusterClient>),
}

impl BlockingConnector {
    async fn connect(&self) -> redis::RedisResult<Connection> {
        match self {
            BlockingConnector::Single(client) => {
                // No response timeout: the read blocks on purpose (WATCH_BLOCK bounds it).
                let config = ConnectionManagerConfig::new().set_response_timeout(None);
                Ok(Connection::Single(
                    client.get_connection_manager_with_config(config).await?,
                ))
            }
            BlockingConnector::Cluster(client) => {
                Ok(Connection::Cluster(client.get_async_connection().await?))
            }
        }
    }
}

pub struct RedisStore {
    connection: Connection,
    blocking: BlockingConnector,
    feeds: std::sync::Arc<Feeds>,
    append: Script,
    load: Script,
    create: Script,
    snapshot: Script,
}

fn key(game_id: &str, suffix: &str) -> String {
    format!("tabula:{{{game_id}}}:{suffix}")
}

fn unavailable(error: redis::RedisError) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

impl RedisStore {
    pub async fn connect(options: &RedisOptions) -> StoreResult<Self> {
        let (connection, blocking) = if options.cluster {
            let builder = ClusterClient::builder(options.urls.clone())
                .connection_timeout(options.connection_timeout)
                .response_timeout(options.response_timeout);
            let client = builder.build().map_err(unavailable)?;
            let blocking_client = ClusterClient::builder(options.urls.clone())
                .connection_timeout(options.connection_timeout)
                .response_timeout(WATCH_BLOCK * 3)
                .build()
                .map_err(unavailable)?;
            let connection = client.get_async_connection().await.map_err(unavailable)?;
            (
                Connection::Cluster(connection),
                BlockingConnector::Cluster(Box::new(blocking_client)),
            )
        } else {
            let url = options
                .urls
                .first()
                .ok_or_else(|| corrupt("no Redis URL given"))?;
            let client = redis::Client::open(url.as_str()).map_err(unavailable)?;
            let config = ConnectionManagerConfig::new()
                .set_response_timeout(Some(options.response_timeout))
                .set_connection_timeout(Some(options.connection_timeout))
                .set_number_of_retries(1);
            let manager = client
                .get_connection_manager_with_config(config)
                .await
                .map_err(unavailable)?;
            (
                Connection::Single(manager),
                BlockingConnector::Single(client),
            )
        };
        Ok(RedisStore {
            connection,
            blocking,
            feeds: Default::default(),
            append: Script::new(APPEND_SCRIPT),
            load: Script::new(LOAD_SCRIPT),
            create: Script::new(CREATE_SCRIPT),
            snapshot: Script::new(SNAPSHOT_SCRIPT),
        })
    }

    fn conn(&self) -> Connection {
        self.connection.clone()
    }
}

#[async_trait]
impl Store for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis", game_id = %meta.game_id))]
    async fn create(&self, meta: &GameMeta) -> StoreResult<()> {
        let tokens: Vec<u8> = meta.token_hashes.concat();
        let mut invocation = self.create.key(key(&meta.game_id, "meta"));
        invocation
            .arg("kind")
            .arg(meta.kind)
            .arg("config")
            .arg(&meta.config)
            .arg("rules_version")
            .arg(&meta.rules_version)
            .arg("seed")
            .arg(&meta.seed.0[..])
            .arg("tokens")
            .arg(tokens)
            .arg("created_at_ms")
            .arg(meta.created_at_ms);
        let created: i64 = invocation
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        if created == 1 {
            Ok(())
        } else {
            Err(StoreError::AlreadyExists(meta.game_id.clone()))
        }
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn load(&self, game_id: &str) -> StoreResult<Option<Loaded>> {
        let reply: Value = self
            .load
            .key(key(game_id, "meta"))
            .key(key(game_id, "log"))
            .key(key(game_id, "snap"))
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        let parts = match reply {
            Value::Nil => return Ok(None),
            Value::Array(parts) if parts.len() == 3 => parts,
            other => return Err(corrupt(format!("unexpected load reply {other:?}"))),
        };
        let [meta, snapshot, entries]: [Value; 3] =
            parts.try_into().map_err(|_| corrupt("load reply shape"))?;
        let meta = parse_meta(game_id, &field_map(meta)?)?;
        let snapshot = parse_snapshot(&field_map(snapshot)?)?;
        Ok(Some(Loaded {
            meta,
            snapshot,
            entries: parse_entries(entries)?,
        }))
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id, after))]
    async fn entries_after(&self, game_id: &str, after: u64) -> StoreResult<Vec<LogEntry>> {
        let reply: Value = redis::cmd("XRANGE")
            .arg(key(game_id, "log"))
            .arg(format!("{}-0", after + 1))
            .arg("+")
            .query_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        parse_entries(reply)
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id, expected))]
    async fn append(&self, game_id: &str, expected: u64, entry: &NewEntry) -> StoreResult<Append> {
        let request_key = if entry.request_id.is_empty() {
            String::new()
        } else {
            request_key(entry.seat, &entry.request_id)
        };
        let reply: Value = self
            .append
            .key(key(game_id, "meta"))
            .key(key(game_id, "log"))
            .key(key(game_id, "req"))
            .arg(expected)
            .arg(entry.seat)
            .arg(&entry.action)
            .arg(request_key)
            .arg(&entry.request_id)
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        let Value::Array(parts) = reply else {
            return Err(corrupt(format!("unexpected append reply {reply:?}")));
        };
        let mut parts = parts.into_iter();
        let tag = parts.next().map(as_string).transpose()?.unwrap_or_default();
        let number = parts.next().map(as_u64).transpose()?.unwrap_or_default();
        match tag.as_str() {
            "appended" => Ok(Append::Appended { version: number }),
            "duplicate" => Ok(Append::Duplicate { version: number }),
            "conflict" => {
                let missing = parts
                    .next()
                    .map(parse_entries)
                    .transpose()?
                    .unwrap_or_default();
                Ok(Append::Conflict {
                    current: number,
                    missing,
                })
            }
            "missing" => Err(corrupt(format!("append to unknown game {game_id}"))),
            other => Err(corrupt(format!("unexpected append reply tag {other:?}"))),
        }
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn find_request(
        &self,
        game_id: &str,
        seat: Seat,
        request_id: &str,
    ) -> StoreResult<Option<u64>> {
        redis::cmd("HGET")
            .arg(key(game_id, "req"))
            .arg(request_key(seat, request_id))
            .query_async(&mut self.conn())
            .await
            .map_err(unavailable)
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id, version = snapshot.version))]
    async fn save_snapshot(&self, game_id: &str, snapshot: &Snapshot) -> StoreResult<()> {
        let _: i64 = self
            .snapshot
            .key(key(game_id, "snap"))
            .arg(snapshot.version)
            .arg(&snapshot.rules_version)
            .arg(&snapshot.state)
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn subscribe(&self, game_id: &str) -> StoreResult<broadcast::Receiver<LogEntry>> {
        let (receiver, new_sender) = self.feeds.subscribe(game_id);
        if let Some(sender) = new_sender {
            let start: u64 = redis::cmd("XLEN")
                .arg(key(game_id, "log"))
                .query_async(&mut self.conn())
                .await
                .map_err(unavailable)?;
            let watcher = Watcher {
                game_id: game_id.to_owned(),
                connector: self.blocking.clone(),
                feeds: self.feeds.clone(),
                sender,
            };
            tokio::spawn(watcher.run(start));
        }
        Ok(receiver)
    }

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

/// Follows one game's log with blocking reads and fills its feed on this replica, until nobody on
/// this replica observes the game any more.
struct Watcher {
    game_id: String,
    connector: BlockingConnector,
    feeds: std::sync::Arc<Feeds>,
    sender: broadcast::Sender<LogEntry>,
}

impl Watcher {
    async fn run(self, mut last: u64) {
        let mut connection: Option<Connection> = None;
        let log_key = key(&self.game_id, "log");
        while !self.feeds.release_if_unused(&self.game_id, &self.sender) {
            let conn = match connection.as_mut() {
                Some(conn) => conn,
                None => match self.connector.connect().await {
                    Ok(conn) => connection.insert(conn),
                    Err(error) => {
                        tracing::warn!(game_id = %self.game_id, %error, "watcher cannot connect");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                },
            };
            let reply: redis::RedisResult<Value> = redis::cmd("XREAD")
                .arg("COUNT")
                .arg(128)
                .arg("BLOCK")
                .arg(WATCH_BLOCK.as_millis() as u64)
                .arg("STREAMS")
                .arg(&log_key)
                .arg(format!("{last}-0"))
                .query_async(conn)
                .await;
            match reply.map_err(unavailable).and_then(parse_xread) {
                Ok(entries) => {
                    for entry in entries {
                        last = last.max(entry.version);
                        // Lagging or absent receivers are their own business.
                        let _ = self.sender.send(entry);
                    }
                }
                Err(error) => {
                    tracing::warn!(game_id = %self.game_id, %error, "watcher read failed");
                    connection = None;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
}

fn as_bytes(value: Value) -> StoreResult<Vec<u8>> {
    match value {
        Value::BulkString(bytes) => Ok(bytes),
        Value::SimpleString(s) => Ok(s.into_bytes()),
        Value::Int(n) => Ok(n.to_string().into_bytes()),
        other => Err(corrupt(format!("expected a string, got {other:?}"))),
    }
}

fn as_string(value: Value) -> StoreResult<String> {
    String::from_utf8(as_bytes(value)?).map_err(|_| corrupt("invalid UTF-8"))
}

fn as_u64(value: Value) -> StoreResult<u64> {
    match value {
        Value::Int(n) => u64::try_from(n).map_err(|_| corrupt("negative number")),
        other => as_string(other)?
            .parse()
            .map_err(|_| corrupt("not a number")),
    }
}

/// A flat field/value array (HGETALL, stream entry fields) as pairs.
fn field_map(value: Value) -> StoreResult<Vec<(String, Vec<u8>)>> {
    let items = match value {
        Value::Array(items) => items,
        Value::Map(pairs) => pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        Value::Nil => Vec::new(),
        other => return Err(corrupt(format!("expected fields, got {other:?}"))),
    };
    let mut pairs = Vec::with_capacity(items.len() / 2);
    let mut items = items.into_iter();
    while let (Some(name), Some(value)) = (items.next(), items.next()) {
        pairs.push((as_string(name)?, as_bytes(value)?));
    }
    Ok(pairs)
}

fn field<'a>(fields: &'a [(String, Vec<u8>)], name: &str) -> StoreResult<&'a [u8]> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
        .ok_or_else(|| corrupt(format!("missing field {name}")))
}

fn field_number<T: std::str::FromStr>(fields: &[(String, Vec<u8>)], name: &str) -> StoreResult<T> {
    std::str::from_utf8(field(fields, name)?)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt(format!("field {name} is not a number")))
}

fn parse_meta(game_id: &str, fields: &[(String, Vec<u8>)]) -> StoreResult<GameMeta> {
    let seed: [u8; 32] = field(fields, "seed")?
        .try_into()
        .map_err(|_| corrupt("seed length"))?;
    let token_hashes = field(fields, "tokens")?
        .chunks(32)
        .map(|chunk| chunk.try_into().map_err(|_| corrupt("token hash length")))
        .collect::<StoreResult<Vec<[u8; 32]>>>()?;
    Ok(GameMeta {
        game_id: game_id.to_owned(),
        kind: field_number(fields, "kind")?,
        config: field(fields, "config")?.to_vec(),
        rules_version: String::from_utf8_lossy(field(fields, "rules_version")?).into_owned(),
        seed: Seed(seed),
        token_hashes,
        created_at_ms: field_number(fields, "created_at_ms")?,
    })
}

fn parse_snapshot(fields: &[(String, Vec<u8>)]) -> StoreResult<Option<Snapshot>> {
    if fields.is_empty() {
        return Ok(None);
    }
    Ok(Some(Snapshot {
        version: field_number(fields, "version")?,
        rules_version: String::from_utf8_lossy(field(fields, "rules_version")?).into_owned(),
        state: field(fields, "state")?.to_vec(),
    }))
}

/// XRANGE's reply: `[[id, [field, value, ...]], ...]`.
fn parse_entries(value: Value) -> StoreResult<Vec<LogEntry>> {
    let items = match value {
        Value::Array(items) => items,
        Value::Nil => return Ok(Vec::new()),
        other => return Err(corrupt(format!("expected stream entries, got {other:?}"))),
    };
    items.into_iter().map(parse_entry).collect()
}

fn parse_entry(value: Value) -> StoreResult<LogEntry> {
    let Value::Array(parts) = value else {
        return Err(corrupt("stream entry is not an array"));
    };
    let [id, fields]: [Value; 2] = parts
        .try_into()
        .map_err(|_| corrupt("stream entry shape"))?;
    let id = as_string(id)?;
    let version = id
        .split_once('-')
        .and_then(|(ms, _)| ms.parse().ok())
        .ok_or_else(|| corrupt(format!("stream id {id}")))?;
    let fields = field_map(fields)?;
    Ok(LogEntry {
        version,
        seat: field_number(&fields, "seat")?,
        action: field(&fields, "action")?.to_vec(),
        request_id: String::from_utf8_lossy(field(&fields, "req")?).into_owned(),
    })
}

/// XREAD's reply for one stream: `[[key, entries]]` (RESP2) or `{key: entries}` (RESP3); nil on
/// timeout.
fn parse_xread(value: Value) -> StoreResult<Vec<LogEntry>> {
    match value {
        Value::Nil => Ok(Vec::new()),
        Value::Array(streams) => {
            let mut entries = Vec::new();
            for stream in streams {
                let Value::Array(parts) = stream else {
                    return Err(corrupt("XREAD stream is not an array"));
                };
                if let Some(list) = parts.into_iter().nth(1) {
                    entries.extend(parse_entries(list)?);
                }
            }
            Ok(entries)
        }
        Value::Map(streams) => {
            let mut entries = Vec::new();
            for (_, list) in streams {
                entries.extend(parse_entries(list)?);
            }
            Ok(entries)
        }
        other => Err(corrupt(format!("unexpected XREAD reply {other:?}"))),
    }
}
