//! Command-line and environment configuration of a replica.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

// For `map` on a ranged integer parser.
use clap::builder::TypedValueParser as _;

use crate::archive::Archive;
use crate::durations::{DAY, HOUR, MINUTE, ms, range};
pub use crate::durations::{
    DurationRange, OptionalDuration, bounded, bounded_or_off, display_duration, parse_duration,
    parse_optional_duration,
};
use crate::server::cors::CorsOrigin;
use crate::server::limits::{EdgeLimits, Rate};
use crate::server::{ServeOptions, StoreChoice};
use crate::service::{OperatorOptions, OperatorToken, RetentionOptions, ServiceOptions};
use crate::store::redis::{Durability, RedisOptions};
use crate::telemetry::LogFormat;

/// The flags and environment variables of `tabula serve`.
#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to serve gRPC (and gRPC-Web) on: `host:port`, where host is an IP address or a
    /// name (`localhost:50051`, `0.0.0.0:50051`, `[::]:50051`).
    #[arg(long, env = "TABULA_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: String,

    /// Keep games in Redis instead of this process's memory. For a cluster, give one or more
    /// comma-separated seed nodes and --redis-cluster.
    #[arg(long, env = "TABULA_REDIS_URL")]
    pub redis_url: Option<String>,

    /// PEM file with the CA certificate(s) to verify a `rediss://` Redis with, instead of the
    /// system's roots (a private CA). Server certificates are always verified.
    #[arg(long, env = "TABULA_REDIS_CA")]
    pub redis_ca: Option<PathBuf>,

    /// Treat --redis-url as Redis Cluster seed nodes.
    #[arg(long, env = "TABULA_REDIS_CLUSTER")]
    pub redis_cluster: bool,

    /// Deadline for one Redis command, in milliseconds: past it the RPC fails with UNAVAILABLE.
    /// Accepted: 10 to 60000.
    #[arg(
        long,
        env = "TABULA_REDIS_TIMEOUT_MS",
        default_value_t = 2000,
        value_parser = clap::value_parser!(u64).range(10..=60_000)
    )]
    pub redis_timeout_ms: u64,

    /// When a move counts as done: `none` (Redis applied it), `replicas=N` (N Redis replicas have
    /// it, WAIT) or `fsync` (Redis fsynced it to its append-only file, WAITAOF; needs Redis ≥ 7.2
    /// or Valkey with appendonly yes, else the replica refuses to start). Redis only.
    #[arg(long, env = "TABULA_DURABILITY", default_value_t = Durability::None)]
    pub durability: Durability,

    /// How long a game keeps its request ids after the last one was written (e.g. `24h`): retries
    /// with the same request id within it return the original answer; later ones count as new
    /// requests (send `expected_version` to have them refused). The log itself keeps every request
    /// id; only the index that recognises retries expires, so idle and finished games stop paying
    /// for it. Accepted: 1m to 365d.
    #[arg(
        long,
        env = "TABULA_REQUEST_ID_TTL",
        default_value = "24h",
        value_parser = bounded(REQUEST_ID_TTL)
    )]
    pub request_id_ttl: Duration,

    /// How long a finished game stays in the store (e.g. `7d`, `12h`, `300ms`). Past it, the
    /// game's complete log is written to --archive and, once the archive confirmed it, the game
    /// is deleted from the store; ExportLog, VerifyLog, GetView and Observe then read it from the
    /// archive. With Redis and no --archive, finished games are kept (never deleted unarchived);
    /// the memory store drops them (archived first if --archive is set). Accepted: 0s (at the
    /// next retention pass) to 3650d.
    #[arg(
        long,
        env = "TABULA_RETAIN_FINISHED",
        default_value = "7d",
        value_parser = bounded(RETAIN_FINISHED)
    )]
    pub retain_finished: Duration,

    /// A running game with no move for this long is ended by an abort entry with reason
    /// `abandoned` (a move racing it wins), and then retained like any finished game. `off`:
    /// never. Accepted: `off`, or 100ms to 3650d.
    #[arg(
        long,
        env = "TABULA_ABANDON_AFTER",
        default_value = "30d",
        value_parser = bounded_or_off(ABANDON_AFTER)
    )]
    pub abandon_after: OptionalDuration,

    /// Where finished games go before they leave the store: a directory (`file:///path` or a plain
    /// path) or an S3-compatible bucket (`s3://bucket/prefix`, with `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` and, for a server other than AWS, `AWS_ENDPOINT_URL`
    /// from the environment).
    #[arg(long, env = "TABULA_ARCHIVE")]
    pub archive: Option<String>,

    /// The deadline of each archive call (a write or a read of one game). Accepted: 100ms to 10m.
    #[arg(
        long,
        env = "TABULA_ARCHIVE_TIMEOUT",
        default_value = "10s",
        value_parser = bounded(ARCHIVE_TIMEOUT)
    )]
    pub archive_timeout: Duration,

    /// How often this replica looks for games to retire or end as abandoned (plus up to a
    /// quarter more at random, so replicas spread out). Every replica does; any may handle a game.
    /// Accepted: 100ms to 1d.
    #[arg(
        long,
        env = "TABULA_RETENTION_INTERVAL",
        default_value = "60s",
        value_parser = bounded(RETENTION_INTERVAL)
    )]
    pub retention_interval: Duration,

    /// The most games one retention pass retires (and the most it examines for abandonment).
    #[arg(
        long,
        env = "TABULA_RETENTION_BATCH",
        default_value_t = 100,
        value_parser = clap::value_parser!(u32).range(1..=10_000)
    )]
    pub retention_batch: u32,

    /// Accept client-chosen seeds in CreateGame (tests, reproducible tournaments). Never in
    /// ordinary play: a player who knows the seed knows every future draw.
    #[arg(long, env = "TABULA_ALLOW_CLIENT_SEED")]
    pub allow_client_seed: bool,

    /// The rules version new games of a game get when the creator names none, as
    /// `<game>=<version>` (comma-separated or repeated; e.g. `manila=manila-2`): during a rollout
    /// that adds a rules version, pin the previous one until every replica runs the new release
    /// (docs/compatibility.md, *Upgrading*). Other games get their newest version.
    #[arg(
        long,
        env = "TABULA_NEW_GAME_RULES",
        value_delimiter = ',',
        value_parser = parse_new_game_rules
    )]
    pub new_game_rules: Vec<NewGameRules>,

    /// The operator's secret: serves the operator's API (tabula.v1.AdminService: ListGames,
    /// EndGame) to calls with `authorization: Bearer <token>`. At least 16 visible ASCII
    /// characters (e.g. `openssl rand -hex 32`). Prefer the environment variable, from a secret
    /// store, to the flag (command lines are visible to other users of the machine). None: no
    /// operator API.
    #[arg(long, env = "TABULA_OPERATOR_TOKEN", hide_env_values = true)]
    pub operator_token: Option<OperatorToken>,

    /// CreateGame needs the operator token (UNAUTHENTICATED without it), so only the operator's
    /// backend creates games and hands out their seat tokens. Needs --operator-token.
    #[arg(
        long,
        env = "TABULA_REQUIRE_OPERATOR_FOR_CREATE",
        requires = "operator_token"
    )]
    pub require_operator_for_create: bool,

    /// Let CreateGame without credentials create games (owned by no tenant). `false`: a game
    /// needs a tenant's API key or the operator token (what a shared deployment wants; `deploy/`
    /// sets it).
    #[arg(
        long,
        env = "TABULA_ANONYMOUS_CREATE",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    pub anonymous_create: bool,

    /// Tenants to declare at start, from a JSON file (`{"tenants": [{"id", "display_name",
    /// "keys": [{"id", "sha256"}]}]}`; `tabula tenant-key` makes a key and its entry). Each tenant
    /// named is written as the file says; with it the operator's API serves tenants even without
    /// --operator-token.
    #[arg(long, env = "TABULA_TENANTS")]
    pub tenants: Option<std::path::PathBuf>,

    /// The deployment's signing key, one line `<key id>:<64 hex digits>` (`tabula signing-key`
    /// makes one): every replica of a deployment needs the same. Without it (nor
    /// TABULA_SIGNING_KEY) a key is generated at start, which only this process publishes.
    #[arg(long, env = "TABULA_SIGNING_KEY_FILE", conflicts_with = "signing_key")]
    pub signing_key_file: Option<std::path::PathBuf>,

    /// The signing key itself, as --signing-key-file holds it (for secret stores that hand out
    /// values rather than files).
    #[arg(long, env = "TABULA_SIGNING_KEY", hide_env_values = true)]
    pub signing_key: Option<String>,

    /// Public keys published beside the signing key, one `<key id>:<64 hex digits>` per line:
    /// the keys rotated out, kept so the games they signed still verify.
    #[arg(long, env = "TABULA_SIGNING_PUBLIC_KEYS")]
    pub signing_public_keys: Option<std::path::PathBuf>,

    /// Let webhooks call private, loopback and link-local addresses (refused by default, so a
    /// tenant cannot make the server call inside its network): tests, and deployments whose
    /// receivers sit in the same private network.
    #[arg(long, env = "TABULA_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,

    /// The deadline of one webhook call (connect, send, read the answer). Accepted: 100ms to 1m.
    #[arg(
        long,
        env = "TABULA_WEBHOOK_TIMEOUT",
        default_value = "10s",
        value_parser = bounded(WEBHOOK_TIMEOUT)
    )]
    pub webhook_timeout: Duration,

    /// Attempts of one webhook notification before it becomes a dead letter (1 to 100).
    #[arg(
        long,
        env = "TABULA_WEBHOOK_MAX_ATTEMPTS",
        default_value_t = 10,
        value_parser = clap::value_parser!(u32).range(1..=100)
    )]
    pub webhook_max_attempts: u32,

    /// The delay after a webhook call's first failure, doubled after each further one (with
    /// jitter) up to 10 minutes. Accepted: 10ms to 1m.
    #[arg(
        long,
        env = "TABULA_WEBHOOK_FIRST_BACKOFF",
        default_value = "1s",
        value_parser = bounded(WEBHOOK_FIRST_BACKOFF)
    )]
    pub webhook_first_backoff: Duration,

    /// When a clock is said to run low (`clock_running_low` notifications): the share of the
    /// decision's time left, in percent (1 to 99).
    #[arg(
        long,
        env = "TABULA_WEBHOOK_CLOCK_LOW_PERCENT",
        default_value_t = 20,
        value_parser = clap::value_parser!(u64).range(1..=99)
    )]
    pub webhook_clock_low_percent: u64,

    /// How many games this replica keeps rebuilt in memory (a tenant's game with two states: its
    /// latest and the one before, from which its notifications are derived).
    #[arg(long, env = "TABULA_CACHE_CAPACITY", default_value_t = 10_000)]
    pub cache_capacity: usize,

    /// Bot decisions this replica runs at once: the cores its bot seats may use (0: this replica
    /// plays no bot seat and leaves them to the other replicas).
    #[arg(long, env = "TABULA_BOT_THREADS", default_value_t = 1)]
    pub bot_threads: usize,

    /// The most time a bot thinks per decision, in milliseconds (a search bot stops at its
    /// iteration budget or at this limit, whichever comes first). Accepted: 1 to 60000.
    #[arg(
        long,
        env = "TABULA_BOT_THINK_MS",
        default_value_t = 2000,
        value_parser = clap::value_parser!(u64).range(1..=60_000)
    )]
    pub bot_think_ms: u64,

    /// Snapshot a game's state every this many actions (0: never).
    #[arg(long, env = "TABULA_SNAPSHOT_EVERY", default_value_t = 64)]
    pub snapshot_every: u64,

    /// How often this replica sweeps the deadline index for turn clocks that ran out (e.g.
    /// `500ms`): a timeout is appended at most about this long after its deadline. Every replica
    /// sweeps every game; the conditional append makes sure only one timeout is logged.
    /// Accepted: 50ms to 1m.
    #[arg(
        long,
        env = "TABULA_CLOCK_SWEEP_INTERVAL",
        default_value = "500ms",
        value_parser = bounded(CLOCK_SWEEP_INTERVAL)
    )]
    pub clock_sweep_interval: Duration,

    /// The random jitter of each pause between sweeps, as a fraction of the interval. Accepted: 0
    /// to 1.
    #[arg(
        long,
        env = "TABULA_CLOCK_SWEEP_JITTER",
        default_value_t = 0.2,
        value_parser = parse_fraction
    )]
    pub clock_sweep_jitter: f64,

    /// The deadline of each store call the sweeper makes (e.g. `5s`). Accepted: 100ms to 1m.
    #[arg(
        long,
        env = "TABULA_CLOCK_SWEEP_TIMEOUT",
        default_value = "5s",
        value_parser = bounded(CLOCK_SWEEP_TIMEOUT)
    )]
    pub clock_sweep_timeout: Duration,

    /// On SIGTERM or SIGINT, how long in-flight calls may take to finish before the process exits
    /// anyway (e.g. `10s`, `500ms`, `1m`; a bare number is seconds). Keep it below the
    /// orchestrator's own grace (Kubernetes: terminationGracePeriodSeconds). Accepted: 0s (stop at
    /// once) to 1h.
    #[arg(
        long,
        env = "TABULA_SHUTDOWN_GRACE",
        default_value = "10s",
        value_parser = bounded(SHUTDOWN_GRACE)
    )]
    pub shutdown_grace: Duration,

    /// Serve over TLS with this PEM certificate (chain); needs --tls-key.
    #[arg(long, env = "TABULA_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, env = "TABULA_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Let browser pages from this origin call over gRPC-Web (CORS): `scheme://host[:port]`, e.g.
    /// `https://play.example.com`. Repeat the flag (or separate with commas) for several; `*`
    /// allows any origin (development only). None: no CORS headers, so browsers on other origins
    /// are refused.
    #[arg(
        long = "cors-origin",
        env = "TABULA_CORS_ORIGIN",
        value_name = "ORIGIN",
        value_delimiter = ','
    )]
    pub cors_origins: Vec<CorsOrigin>,

    /// Serve the web client (create, play, watch and replay games in a browser) at `GET /` on the
    /// --listen address, calling the replica over gRPC-Web on the same origin: `true` or `false`.
    /// Default: on with the embedded store, off with --redis-url (a shared deployment opts in).
    #[arg(
        long,
        env = "TABULA_WEB",
        value_name = "BOOL",
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub web: Option<bool>,

    /// What the edge bounds (rates, streams, request size).
    #[command(flatten)]
    pub limits: LimitArgs,

    /// Logs, traces and metrics.
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// What one caller may make a replica do or hold; each limit is answered with RESOURCE_EXHAUSTED.
/// Rates are `RATE:BURST` (requests per second on average, and at once), `0` for no limit.
#[derive(Clone, Debug, clap::Args)]
pub struct LimitArgs {
    /// CreateGame calls per peer address.
    #[arg(
        long,
        env = "TABULA_CREATE_GAME_RATE",
        default_value_t = EdgeLimits::default().create_game_per_address
    )]
    pub create_game_rate: Rate,

    /// Act calls per peer address.
    #[arg(
        long,
        env = "TABULA_ACT_RATE_PER_ADDRESS",
        default_value_t = EdgeLimits::default().act_per_address
    )]
    pub act_rate_per_address: Rate,

    /// Act calls per seat token.
    #[arg(
        long,
        env = "TABULA_ACT_RATE_PER_TOKEN",
        default_value_t = EdgeLimits::default().act_per_token
    )]
    pub act_rate_per_token: Rate,

    /// Observe calls per peer address.
    #[arg(
        long,
        env = "TABULA_OBSERVE_RATE_PER_ADDRESS",
        default_value_t = EdgeLimits::default().observe_per_address
    )]
    pub observe_rate_per_address: Rate,

    /// Observe calls per seat token.
    #[arg(
        long,
        env = "TABULA_OBSERVE_RATE_PER_TOKEN",
        default_value_t = EdgeLimits::default().observe_per_token
    )]
    pub observe_rate_per_token: Rate,

    /// Observe streams open at once on one connection (0: no limit).
    #[arg(
        long,
        env = "TABULA_MAX_OBSERVE_PER_CONNECTION",
        default_value_t = EdgeLimits::default().observe_streams_per_connection
    )]
    pub max_observe_per_connection: usize,

    /// Observe streams open at once on this replica (0: no limit).
    #[arg(
        long,
        env = "TABULA_MAX_OBSERVE_PER_REPLICA",
        default_value_t = EdgeLimits::default().observe_streams_per_replica
    )]
    pub max_observe_per_replica: usize,

    /// The largest request message accepted, in bytes.
    #[arg(
        long,
        env = "TABULA_MAX_REQUEST_BYTES",
        default_value_t = EdgeLimits::default().max_request_bytes
    )]
    pub max_request_bytes: usize,

    /// HTTP/2 calls open at once on one connection (advertised to clients, which queue beyond it).
    #[arg(
        long,
        env = "TABULA_MAX_STREAMS_PER_CONNECTION",
        default_value_t = EdgeLimits::default().http2_streams_per_connection
    )]
    pub max_streams_per_connection: u32,

    /// The most request metadata one call may carry, in bytes (each header field counted as its
    /// name, its value and 32 bytes, as HTTP/2 does): a call over it fails alone with
    /// RESOURCE_EXHAUSTED, the connection and its other calls carry on. Accepted: 1024 to 262144.
    #[arg(
        long,
        env = "TABULA_MAX_HEADER_BYTES",
        default_value_t = EdgeLimits::default().max_header_bytes,
        value_parser = clap::value_parser!(u64)
            .range(1024..=crate::server::limits::MAX_HEADER_BYTES_CEILING as u64)
            .map(|bytes| bytes as usize)
    )]
    pub max_header_bytes: usize,
}

impl LimitArgs {
    /// The limits these flags set.
    pub fn edge_limits(&self) -> EdgeLimits {
        EdgeLimits {
            create_game_per_address: self.create_game_rate,
            act_per_address: self.act_rate_per_address,
            act_per_token: self.act_rate_per_token,
            observe_per_address: self.observe_rate_per_address,
            observe_per_token: self.observe_rate_per_token,
            observe_streams_per_connection: self.max_observe_per_connection,
            observe_streams_per_replica: self.max_observe_per_replica,
            max_request_bytes: self.max_request_bytes,
            http2_streams_per_connection: self.max_streams_per_connection.max(1),
            max_header_bytes: self.max_header_bytes,
        }
    }
}

/// Where logs, traces and metrics go.
#[derive(Clone, Debug, clap::Args)]
pub struct TelemetryArgs {
    /// Log filter in `tracing` env-filter syntax.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    pub log_filter: String,

    /// Plain text or JSON lines.
    #[arg(long, env = "TABULA_LOG_FORMAT", value_enum, default_value_t = LogFormat::Plain)]
    pub log_format: LogFormat,

    /// Export traces and metrics over OTLP/gRPC to this endpoint (e.g. otel-collector:4317;
    /// without a scheme it is plaintext http://).
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,

    /// One log line per RPC (target `tabula::access`: method, game, seat, gRPC code, duration).
    /// `--access-log false` turns it off.
    #[arg(long, env = "TABULA_ACCESS_LOG", default_value_t = true, action = clap::ArgAction::Set)]
    pub access_log: bool,

    /// Serve Prometheus metrics on this address (`GET /metrics`), e.g. 0.0.0.0:9464.
    #[arg(long, env = "TABULA_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,
}

/// A configuration that names something unusable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file named by a flag could not be read.
    #[error("cannot read {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The archive cannot be opened.
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
}

fn read_file(path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|source| ConfigError::File {
        path: path.to_owned(),
        source,
    })
}

/// `url` with its password (if any) replaced by `***`, for logs and error messages.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user_info, host)) => {
            let user = user_info
                .split_once(':')
                .map_or(user_info, |(user, _)| user);
            let hidden = if user_info.contains(':') {
                format!("{user}:***")
            } else {
                // `redis://secret@host`: Redis takes a lone user-info part as the password.
                "***".to_owned()
            };
            format!("{scheme}://{hidden}@{host}{path}")
        }
        None => url.to_owned(),
    }
}

impl ServeArgs {
    /// Which store to open (reads the --redis-ca file).
    pub fn store_choice(&self) -> Result<StoreChoice, ConfigError> {
        Ok(match &self.redis_url {
            None => StoreChoice::Memory {
                request_id_ttl: self.request_id_ttl,
            },
            Some(urls) => {
                let timeout = Duration::from_millis(self.redis_timeout_ms);
                let ca_certificate = self.redis_ca.as_deref().map(read_file).transpose()?;
                StoreChoice::Redis(RedisOptions {
                    urls: urls.split(',').map(str::trim).map(str::to_owned).collect(),
                    cluster: self.redis_cluster,
                    response_timeout: timeout,
                    connection_timeout: timeout,
                    durability: self.durability,
                    ca_certificate,
                    request_id_ttl: self.request_id_ttl,
                })
            }
        })
    }

    /// How the server behaves around the game service (reads the TLS files).
    pub fn serve_options(&self) -> Result<ServeOptions, ConfigError> {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(tonic::transport::Identity::from_pem(
                read_file(cert)?,
                read_file(key)?,
            )),
            _ => None,
        };
        Ok(ServeOptions {
            shutdown_grace: self.shutdown_grace,
            tls,
            limits: self.limits.edge_limits(),
            cors_origins: self.cors_origins.clone(),
            web: self.web_enabled(),
        })
    }

    /// Whether the web client is served: `--web` when given, else on with the embedded store.
    pub fn web_enabled(&self) -> bool {
        self.web.unwrap_or(self.redis_url.is_none())
    }

    /// The archive (opened, so a bad URL fails at start-up) and the retention task's settings.
    pub fn retention(&self) -> Result<(Option<Arc<Archive>>, RetentionOptions), ConfigError> {
        let archive = self
            .archive
            .as_deref()
            .map(|url| Archive::open(url, self.archive_timeout).map(Arc::new))
            .transpose()?;
        // Redis keeps games across restarts and replicas: deleting one that was never archived
        // would lose it for good, so without an archive finished games stay. The memory store
        // loses everything on restart anyway, and must not grow without bound.
        let retain_finished = if archive.is_none() && self.redis_url.is_some() {
            None
        } else {
            Some(self.retain_finished)
        };
        Ok((
            archive,
            RetentionOptions {
                retain_finished,
                abandon_after: self.abandon_after.0,
                interval: self.retention_interval,
                batch: self.retention_batch as usize,
                call_timeout: self.archive_timeout,
            },
        ))
    }

    /// The game service's settings.
    pub fn service_options(&self) -> ServiceOptions {
        ServiceOptions {
            new_game_rules: self
                .new_game_rules
                .iter()
                .map(|pin| (pin.kind, pin.rules_version))
                .collect(),
            allow_client_seed: self.allow_client_seed,
            cache_capacity: self.cache_capacity,
            snapshot_every: self.snapshot_every,
            operator: self.operator_token.clone().map(|token| OperatorOptions {
                token,
                required_for_create: self.require_operator_for_create,
            }),
            anonymous_create: self.anonymous_create,
            bots: crate::service::BotOptions {
                threads: self.bot_threads,
                think_time: Duration::from_millis(self.bot_think_ms),
            },
            sweeper: crate::service::SweeperOptions {
                interval: self.clock_sweep_interval,
                jitter: self.clock_sweep_jitter,
                call_timeout: self.clock_sweep_timeout,
                ..crate::service::SweeperOptions::default()
            },
            webhooks: crate::service::WebhookOptions {
                allow_private: self.webhook_allow_private,
                timeout: self.webhook_timeout,
                max_attempts: self.webhook_max_attempts,
                first_backoff: self.webhook_first_backoff,
                clock_low_percent: self.webhook_clock_low_percent,
                ..crate::service::WebhookOptions::default()
            },
            ..ServiceOptions::default()
        }
    }
}

/// `--request-id-ttl`: shorter than a minute would forget a request id before a client's retry.
pub const REQUEST_ID_TTL: DurationRange = range(ms(MINUTE), ms(365 * DAY));
/// `--retain-finished`: 0 removes a finished game at the next retention pass.
pub const RETAIN_FINISHED: DurationRange = range(ms(0), ms(3650 * DAY));
/// `--abandon-after` (unless `off`): `0s` would end every running game at the next pass.
pub const ABANDON_AFTER: DurationRange = range(ms(100), ms(3650 * DAY));
/// `--archive-timeout`.
pub const ARCHIVE_TIMEOUT: DurationRange = range(ms(100), ms(10 * MINUTE));
/// `--webhook-timeout`.
pub const WEBHOOK_TIMEOUT: DurationRange = range(ms(100), ms(MINUTE));
/// `--webhook-first-backoff`.
pub const WEBHOOK_FIRST_BACKOFF: DurationRange = range(ms(10), ms(MINUTE));
/// `--retention-interval`: each pass queries the store, so a short interval is a busy loop.
pub const RETENTION_INTERVAL: DurationRange = range(ms(100), ms(DAY));
/// `--clock-sweep-interval`: each pass queries the deadline index, so a short interval is a busy
/// loop; beyond a minute timeouts would come that much late.
pub const CLOCK_SWEEP_INTERVAL: DurationRange = range(ms(50), ms(MINUTE));
/// `--clock-sweep-timeout`.
pub const CLOCK_SWEEP_TIMEOUT: DurationRange = range(ms(100), ms(MINUTE));
/// `--shutdown-grace`: 0 stops at once.
pub const SHUTDOWN_GRACE: DurationRange = range(ms(0), ms(HOUR));
/// `tabula health --timeout`.
pub const HEALTH_TIMEOUT: DurationRange = range(ms(100), ms(10 * MINUTE));

/// One `--new-game-rules` pin: a hosted game and one of the rules versions this build plays it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewGameRules {
    /// The game.
    pub kind: crate::proto::v1::GameKind,
    /// The rules version its new games get.
    pub rules_version: &'static str,
}

/// Parses `<game>=<version>` for `--new-game-rules`: the game by any name the command line takes
/// (`manila`, `medici-vs-strozzi`), the version one this build plays it by.
pub fn parse_new_game_rules(text: &str) -> Result<NewGameRules, String> {
    let (name, version) = text.trim().split_once('=').ok_or_else(|| {
        format!(
            "{:?} is not <game>=<rules version> (e.g. manila=manila-2)",
            text.chars().take(64).collect::<String>()
        )
    })?;
    let game = crate::hosting::find_game(name.trim()).map_err(|error| error.to_string())?;
    let version = version.trim();
    let rules_version = game
        .rules_versions()
        .into_iter()
        .find(|played| *played == version)
        .ok_or_else(|| {
            format!(
                "this build does not play {} rules version {:?}: it plays {}",
                game.game_type.name,
                version.chars().take(64).collect::<String>(),
                game.rules_versions().join(", ")
            )
        })?;
    Ok(NewGameRules {
        kind: game.kind,
        rules_version,
    })
}

/// Parses a fraction from 0 to 1 (`--clock-sweep-jitter`).
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f))
        .ok_or_else(|| format!("{:?} is not a fraction from 0 to 1", text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_from_store_urls() {
        assert_eq!(
            redact_url("redis://:s3cret@redis:6379/0"),
            "redis://:***@redis:6379/0"
        );
        assert_eq!(
            redact_url("rediss://app:s3cret@cache.example:6380"),
            "rediss://app:***@cache.example:6380"
        );
        assert_eq!(redact_url("redis://s3cret@redis/"), "redis://***@redis/");
        assert_eq!(redact_url("redis://redis:6379/"), "redis://redis:6379/");
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn the_web_client_is_on_with_the_embedded_store_unless_told_otherwise() {
        #[derive(clap::Parser)]
        struct Command {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let web = |args: &[&str]| {
            <Command as clap::Parser>::try_parse_from(
                std::iter::once("tabula").chain(args.iter().copied()),
            )
            .map(|command| command.serve.web_enabled())
            .map_err(|error| error.to_string())
        };
        assert_eq!(web(&[]), Ok(true));
        assert_eq!(web(&["--redis-url", "redis://127.0.0.1:6379/"]), Ok(false));
        assert_eq!(
            web(&["--redis-url", "redis://127.0.0.1:6379/", "--web"]),
            Ok(true)
        );
        assert_eq!(web(&["--web", "false"]), Ok(false));
        assert_eq!(web(&["--web=true"]), Ok(true));
        assert!(web(&["--web", "maybe"]).is_err());
    }

    #[test]
    fn cors_origins_repeat_and_split_on_commas() {
        #[derive(clap::Parser)]
        struct Command {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let parsed = <Command as clap::Parser>::try_parse_from([
            "tabula",
            "--cors-origin",
            "https://play.example.com",
            "--cors-origin",
            "http://localhost:5173,http://127.0.0.1:5173",
        ])
        .map(|command| command.serve.cors_origins);
        let origins: Vec<String> = parsed.iter().flatten().map(ToString::to_string).collect();
        assert_eq!(
            origins,
            [
                "https://play.example.com",
                "http://localhost:5173",
                "http://127.0.0.1:5173"
            ]
        );
        let trailing_slash = <Command as clap::Parser>::try_parse_from([
            "tabula",
            "--cors-origin",
            "https://play.example.com/",
        ]);
        assert!(trailing_slash.is_err(), "an origin has no path");
    }

    #[derive(clap::Parser)]
    struct Serve {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn require_operator_for_create_needs_an_operator_token() {
        let alone =
            <Serve as clap::Parser>::try_parse_from(["tabula", "--require-operator-for-create"]);
        assert!(
            alone.is_err(),
            "--require-operator-for-create without a token"
        );
        let parsed = <Serve as clap::Parser>::try_parse_from([
            "tabula",
            "--require-operator-for-create",
            "--operator-token",
            "op_0123456789abcdef",
        ])
        .map(|command| command.serve.service_options().operator);
        let Ok(Some(operator)) = parsed else {
            panic!("a token and the requirement parse: {parsed:?}");
        };
        assert!(operator.required_for_create);
        assert!(operator.token.matches("op_0123456789abcdef"));
        let weak = <Serve as clap::Parser>::try_parse_from(["tabula", "--operator-token", "abc"]);
        assert!(
            weak.is_err(),
            "a short operator token is refused at start-up"
        );
    }

    #[test]
    fn durations_parse_with_and_without_units() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5 fortnights").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn bounded_durations_refuse_values_out_of_range() {
        let interval = bounded(RETENTION_INTERVAL);
        assert_eq!(interval("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(interval("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(
            interval("0s"),
            Err("\"0s\" is out of range: from 100ms to 1d".to_owned())
        );
        assert!(interval("99ms").is_err());
        assert!(interval("25h").is_err());
        assert!(interval("soon").is_err(), "still a duration first");
        let abandon = bounded_or_off(ABANDON_AFTER);
        assert_eq!(abandon("off"), Ok(OptionalDuration(None)));
        assert_eq!(abandon("0"), Ok(OptionalDuration(None)), "a bare 0 is off");
        assert!(
            abandon("0s").is_err(),
            "0s would abandon every game at once"
        );
        assert_eq!(
            abandon("300ms"),
            Ok(OptionalDuration(Some(Duration::from_millis(300))))
        );
        assert!(bounded(SHUTDOWN_GRACE)("0s").is_ok());
        assert!(bounded(REQUEST_ID_TTL)("100000000d").is_err());
        assert_eq!(display_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(display_duration(Duration::from_secs(120)), "2m");
        assert_eq!(parse_fraction("0.2"), Ok(0.2));
        assert!(parse_fraction("1.5").is_err());
        assert!(parse_fraction("-0.1").is_err());
    }

    /// Every interval and duration flag of `tabula serve` refuses a value below its minimum and
    /// above its maximum, naming the flag; the defaults are within range.
    #[test]
    fn every_duration_flag_of_serve_is_bounded() {
        let parse = |args: &[&str]| {
            <Serve as clap::Parser>::try_parse_from(
                std::iter::once("tabula").chain(args.iter().copied()),
            )
            .map(|_| ())
            .map_err(|error| error.to_string())
        };
        assert_eq!(parse(&[]), Ok(()), "the defaults are in range");
        let flags: [(&str, &str, &str); 11] = [
            ("--redis-timeout-ms", "0", "60001"),
            ("--request-id-ttl", "59s", "366d"),
            ("--retain-finished", "-1s", "3651d"),
            ("--abandon-after", "0s", "3651d"),
            ("--archive-timeout", "0s", "11m"),
            ("--retention-interval", "0s", "2d"),
            ("--clock-sweep-interval", "0ms", "61s"),
            ("--clock-sweep-jitter", "-0.5", "1.5"),
            ("--clock-sweep-timeout", "0s", "2m"),
            ("--shutdown-grace", "-1s", "2h"),
            ("--bot-think-ms", "0", "60001"),
        ];
        for (flag, below, above) in flags {
            for value in [below, above] {
                let refused = parse(&[&format!("{flag}={value}")])
                    .expect_err(&format!("{flag} {value} is refused"));
                assert!(refused.contains(flag), "{flag} {value}: {refused}");
            }
        }
    }

    #[test]
    fn retention_durations_take_days_and_off() {
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_optional_duration("off"), Ok(OptionalDuration(None)));
        assert_eq!(
            parse_optional_duration("300ms"),
            Ok(OptionalDuration(Some(Duration::from_millis(300))))
        );
        assert!(parse_optional_duration("soon").is_err());
    }

    #[test]
    fn without_an_archive_redis_keeps_finished_games() {
        let parse = |args: &[&str]| {
            let mut all = vec!["tabula"];
            all.extend_from_slice(args);
            <Serve as clap::Parser>::try_parse_from(all).expect("flags parse")
        };
        let (archive, retention) = parse(&["--redis-url", "redis://x/"])
            .serve
            .retention()
            .expect("no archive to open");
        assert!(archive.is_none());
        assert_eq!(
            retention.retain_finished, None,
            "Redis without an archive keeps games"
        );
        assert_eq!(
            retention.abandon_after,
            Some(Duration::from_secs(30 * 86_400))
        );
        let (_, memory) = parse(&["--retain-finished", "1h", "--abandon-after", "off"])
            .serve
            .retention()
            .expect("memory");
        assert_eq!(memory.retain_finished, Some(Duration::from_secs(3600)));
        assert_eq!(memory.abandon_after, None);
        let dir = tempfile::tempdir().expect("temp dir");
        let archived = dir.path().join("archive");
        let (archive, retention) = parse(&[
            "--redis-url",
            "redis://x/",
            "--archive",
            archived.to_str().expect("utf-8 path"),
        ])
        .serve
        .retention()
        .expect("a directory archive opens");
        assert!(archive.is_some());
        assert_eq!(
            retention.retain_finished,
            Some(Duration::from_secs(7 * 86_400))
        );
        assert!(archived.is_dir(), "the directory is created");
    }
}
