//! Command-line and environment configuration of a replica.

use std::net::SocketAddr;
use std::time::Duration;

use crate::server::StoreChoice;
use crate::service::ServiceOptions;
use crate::store::redis::RedisOptions;
use crate::telemetry::LogFormat;

#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to serve gRPC (and gRPC-Web) on.
    #[arg(long, env = "TABULA_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// Keep games in Redis instead of this process's memory. For a cluster, give one or more
    /// comma-separated seed nodes and --redis-cluster.
    #[arg(long, env = "TABULA_REDIS_URL")]
    pub redis_url: Option<String>,

    /// Treat --redis-url as Redis Cluster seed nodes.
    #[arg(long, env = "TABULA_REDIS_CLUSTER")]
    pub redis_cluster: bool,

    /// Deadline for one Redis command, in milliseconds: past it the RPC fails with UNAVAILABLE.
    #[arg(long, env = "TABULA_REDIS_TIMEOUT_MS", default_value_t = 2000)]
    pub redis_timeout_ms: u64,

    /// Accept client-chosen seeds in CreateGame (tests, reproducible tournaments). Never in
    /// ordinary play: a player who knows the seed knows every future draw.
    #[arg(long, env = "TABULA_ALLOW_CLIENT_SEED")]
    pub allow_client_seed: bool,

    /// How many games this replica keeps rebuilt in memory.
    #[arg(long, env = "TABULA_CACHE_CAPACITY", default_value_t = 10_000)]
    pub cache_capacity: usize,

    /// Snapshot a game's state every this many actions (0: never).
    #[arg(long, env = "TABULA_SNAPSHOT_EVERY", default_value_t = 64)]
    pub snapshot_every: u64,

    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

#[derive(Clone, Debug, clap::Args)]
pub struct TelemetryArgs {
    /// Log filter in `tracing` env-filter syntax.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    pub log_filter: String,

    #[arg(long, env = "TABULA_LOG_FORMAT", value_enum, default_value_t = LogFormat::Plain)]
    pub log_format: LogFormat,

    /// Export traces over OTLP/gRPC to this endpoint (e.g. http://localhost:4317).
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
}

impl ServeArgs {
    pub fn store_choice(&self) -> StoreChoice {
        match &self.redis_url {
            None => StoreChoice::Memory,
            Some(urls) => {
                let timeout = Duration::from_millis(self.redis_timeout_ms);
                StoreChoice::Redis(RedisOptions {
                    urls: urls.split(',').map(str::trim).map(str::to_owned).collect(),
                    cluster: self.redis_cluster,
                    response_timeout: timeout,
                    connection_timeout: timeout,
                })
            }
        }
    }

    pub fn service_options(&self) -> ServiceOptions {
        ServiceOptions {
            allow_client_seed: self.allow_client_seed,
            cache_capacity: self.cache_capacity,
            snapshot_every: self.snapshot_every,
        }
    }
}
