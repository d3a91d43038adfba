//! Assembling a replica: the store it uses and the gRPC server with everything generic clients
//! expect around the game service (health checking, reflection v1 and v1alpha, gRPC-Web with CORS
//! for browser pages on the origins the operator allows), and its graceful shutdown (see
//! [`crate::shutdown`]).
//!
//! Health checking answers for three names: `""` and `tabula.v1.GameService` are *readiness*
//! (SERVING while the store answers, NOT_SERVING while it does not or while the replica drains);
//! [`LIVENESS_SERVICE`] is *liveness* and answers for the process alone, so a store outage takes
//! replicas out of load balancing without getting them restarted.
//!
//! The operator's API (`tabula.v1.AdminService`) is served only when the replica has an operator
//! token ([`ServiceOptions::operator`]) or a tenants file, behind an [`AdminGate`]: then it is in reflection and
//! health (with the game service's readiness) and reachable over gRPC-Web like the game service.
//! Without a token it is absent altogether: its calls are UNIMPLEMENTED, reflection does not list
//! it and health does not know it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_stream::StreamExt as _;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Server, ServerTlsConfig};

pub mod cors;
pub mod edge;
pub mod limits;
pub mod web;

use self::cors::{CorsLayer, CorsOrigin};
use self::limits::EdgeLimits;
use self::web::WebLayer;
use crate::metrics::RpcMetricsLayer;
use crate::proto::{self, v1 as pb};
use crate::service::workers::Workers;
use crate::service::{AdminGate, AdminServiceImpl, GameServiceImpl, ServiceOptions, Tabula};
use crate::shutdown::Drain;
use crate::store::memory::MemoryStore;
use crate::store::metered::InstrumentedStore;
use crate::store::redis::{RedisOptions, RedisStore};
use crate::store::{Store, StoreResult};
use crate::telemetry::TraceContextLayer;

/// Which store a replica uses.
#[derive(Clone, Debug)]
pub enum StoreChoice {
    /// The embedded in-memory store (one process; nothing survives a restart).
    Memory {
        /// How long a game's request ids are kept after the last one was written.
        request_id_ttl: Duration,
    },
    /// Redis, a single node or a cluster.
    Redis(RedisOptions),
}

/// Opens the store `choice` names.
pub async fn open_store(choice: &StoreChoice) -> StoreResult<Arc<dyn Store>> {
    Ok(match choice {
        StoreChoice::Memory { request_id_ttl } => {
            Arc::new(MemoryStore::with_request_id_ttl(*request_id_ttl))
        }
        StoreChoice::Redis(options) => Arc::new(RedisStore::connect(options).await?),
    })
}

/// How often health checking re-checks the store.
const HEALTH_INTERVAL: Duration = Duration::from_secs(5);

/// How often health checking re-checks a store that did not answer.
const HEALTH_RECHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The health-checking service name that reports liveness: SERVING as long as the process runs,
/// whatever the store does.
pub const LIVENESS_SERVICE: &str = "tabula.v1.Liveness";

/// How a replica's server behaves around the game service.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// After shutdown starts, how long in-flight calls may take before the server stops anyway.
    pub shutdown_grace: Duration,
    /// Serve over TLS with this certificate and key (plaintext HTTP/2 otherwise).
    pub tls: Option<tonic::transport::Identity>,
    /// What the edge bounds (rates, streams, request size; see [`edge`]).
    pub limits: EdgeLimits,
    /// The browser origins allowed to call over gRPC-Web (see [`cors`]); none: no CORS headers.
    pub cors_origins: Vec<CorsOrigin>,
    /// Serve the web client (`GET /` and its files, see [`web`]) on the same port.
    pub web: bool,
}

impl Default for ServeOptions {
    /// A 10 s shutdown grace, no TLS, the default caps and no rate limits
    /// ([`EdgeLimits::unmetered`]), no CORS, no web client: for embedding a replica in tests and
    /// benchmarks.
    fn default() -> Self {
        ServeOptions {
            shutdown_grace: Duration::from_secs(10),
            tls: None,
            limits: EdgeLimits::unmetered(),
            cors_origins: Vec::new(),
            web: false,
        }
    }
}

/// Serves the game service on `listener` until `shutdown` completes, with default
/// [`ServeOptions`].
pub async fn serve(
    listener: TcpListener,
    store: Arc<dyn Store>,
    options: ServiceOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    serve_with(listener, store, options, ServeOptions::default(), shutdown).await
}

/// Serves the game service on `listener` until `shutdown` completes, enforcing `limits` at the
/// edge (see [`edge`]), with the other [`ServeOptions`] at their defaults.
pub async fn serve_with_limits(
    listener: TcpListener,
    store: Arc<dyn Store>,
    options: ServiceOptions,
    limits: &EdgeLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let serve_options = ServeOptions {
        limits: limits.clone(),
        ..ServeOptions::default()
    };
    serve_with(listener, store, options, serve_options, shutdown).await
}

/// Serves the game service on `listener` until `shutdown` completes, then shuts down gracefully:
/// readiness goes NOT_SERVING, the listener closes, clients are sent GOAWAY, calls arriving on open
/// connections are refused with UNAVAILABLE, streams end with UNAVAILABLE, and unary calls in
/// flight finish — all within `serve_options.shutdown_grace`, after which the server returns anyway.
pub async fn serve_with(
    listener: TcpListener,
    store: Arc<dyn Store>,
    options: ServiceOptions,
    serve_options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let limits = &serve_options.limits;
    let store = InstrumentedStore::wrap(store);
    // The operator's API is served to the operator and to tenants: with an operator token, or
    // with tenants declared in a file (tenants the operator creates need the token anyway).
    let admin_served = options.operator.is_some() || options.tenants_file.is_some();
    let tenants_file = options.tenants_file.clone();
    let tabula = Tabula::new(store.clone(), options);
    // The tenant directory is read before the first call, so that tenant keys work at once; a
    // store that does not answer yet leaves it to the workers, which read it every few seconds.
    let declared = match &tenants_file {
        Some(file) => tabula.tenants().declare(file).await,
        None => tabula.tenants().refresh().await,
    };
    if let Err(error) = declared {
        tracing::warn!(%error, "tenant directory not read at start; retried in the background");
    }
    // Every replica runs the workers (retention, the turn-clock sweeper, the bot-turn sweep): no
    // replica owns a game (see `service::workers`). Stopped with the server, within its grace.
    let workers = Workers::start(&tabula);
    let stop_workers = workers.stopper();
    let readiness_names = readiness_names(admin_served);
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_service_status(LIVENESS_SERVICE, tonic_health::ServingStatus::Serving)
        .await;
    // Readiness is registered before the first connection is accepted, as NOT_SERVING until the
    // first store check answers: a Watch that arrives early sees "not yet", never "unknown service".
    set_readiness(
        &health_reporter,
        &readiness_names,
        tonic_health::ServingStatus::NotServing,
    )
    .await;
    let health_task = tokio::spawn(report_health(
        health_reporter.clone(),
        readiness_names.clone(),
        store,
    ));
    let drain = Drain::new();
    let stop_accepting = {
        let drain = drain.clone();
        async move {
            shutdown.await;
            // No more timeouts, bot turns or retention passes from a replica that is going
            // away; the others carry on.
            stop_workers.stop();
            // Readiness first, so load balancers stop routing here; the health loop must not
            // flip it back.
            health_task.abort();
            set_readiness(
                &health_reporter,
                &readiness_names,
                tonic_health::ServingStatus::NotServing,
            )
            .await;
            tracing::info!("shutting down: NOT_SERVING, draining calls and streams");
            drain.start();
        }
    };

    let served = admin_served;
    let reflection_v1 = reflection(served, "grpc.reflection.v1.ServerReflection")
        .build_v1()
        .map_err(|e| log_reflection_error(&e))
        .ok();
    let reflection_v1alpha = reflection(served, "grpc.reflection.v1alpha.ServerReflection")
        .build_v1alpha()
        .map_err(|e| log_reflection_error(&e))
        .ok();

    // Small request/response exchanges: without TCP_NODELAY, Nagle and delayed ACKs add ~40 ms.
    // Each connection's frames leave in one write per burst (see `coalesce`).
    let incoming = TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .map(|accepted| accepted.map(crate::coalesce::Coalesced::new));
    let game_service =
        pb::game_service_server::GameServiceServer::new(GameServiceImpl(tabula.clone()))
            .max_decoding_message_size(limits.max_request_bytes);
    // The gate runs before a call's message is decoded: a caller without the token costs nothing.
    let admin_service = admin_served.then(|| {
        tonic::service::interceptor::InterceptedService::new(
            pb::admin_service_server::AdminServiceServer::new(AdminServiceImpl(tabula.clone()))
                .max_decoding_message_size(limits.max_request_bytes),
            AdminGate::new(tabula),
        )
    });
    let mut builder = Server::builder();
    if let Some(identity) = serve_options.tls.clone() {
        builder = builder.tls_config(ServerTlsConfig::new().identity(identity))?;
    }
    let server = builder
        .accept_http1(true)
        .max_concurrent_streams(limits.http2_streams_per_connection)
        // Large enough that an oversized header block reaches the edge, which fails that call
        // alone; hyper's default (16 KiB) made h2 close the whole connection instead.
        .http2_max_header_list_size(limits::HEADER_BLOCK_HARD_LIMIT)
        // CORS outermost: a preflight from an allowed origin is answered there and is no RPC, and
        // the CORS headers go on every answer, the method gate's and the edge's refusals too.
        .layer(CorsLayer::new(&serve_options.cors_origins))
        // The web client's files are GET requests: answered before the method gate refuses
        // everything that is not a call.
        .layer(WebLayer::new(serve_options.web))
        // What is not a POST is no call: refused before it can be taken for one (see `edge`).
        .layer(edge::MethodGateLayer)
        // gRPC-Web next: the edge then sees plain gRPC requests and responses either way.
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(TraceContextLayer)
        .layer(RpcMetricsLayer)
        .layer(edge::EdgeLayer::new(limits))
        .layer(drain.layer())
        .add_service(health_service)
        .add_optional_service(reflection_v1)
        .add_optional_service(reflection_v1alpha)
        .add_service(game_service)
        .add_optional_service(admin_service)
        .serve_with_incoming_shutdown(incoming, stop_accepting);
    let grace_over = {
        let started = drain.started();
        async move {
            started.await;
            tokio::time::sleep(serve_options.shutdown_grace).await;
        }
    };
    let served = tokio::select! {
        served = server => served,
        () = grace_over => {
            tracing::warn!(
                grace = ?serve_options.shutdown_grace,
                "shutdown grace over: closing the connections still open"
            );
            Ok(())
        }
    };
    workers.join(serve_options.shutdown_grace).await;
    served
}

fn log_reflection_error(error: &tonic_reflection::server::Error) {
    tracing::error!(%error, "server reflection disabled: the descriptor set did not load");
}

/// The reflection service (v1 or v1alpha, named `reflection_name`): it describes every Tabula
/// message, and lists the services this replica serves, the operator's API only when `admin`.
fn reflection(admin: bool, reflection_name: &str) -> tonic_reflection::server::Builder<'static> {
    let mut builder = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .with_service_name(GAME_SERVICE)
        .with_service_name("grpc.health.v1.Health")
        .with_service_name(reflection_name);
    if admin {
        builder = builder.with_service_name(ADMIN_SERVICE);
    }
    builder
}

/// The game service's name, `tabula.v1.GameService`.
const GAME_SERVICE: &str =
    <pb::game_service_server::GameServiceServer<GameServiceImpl> as tonic::server::NamedService>::NAME;

/// The operator API's name, `tabula.v1.AdminService`.
const ADMIN_SERVICE: &str = <pb::admin_service_server::AdminServiceServer<AdminServiceImpl> as tonic::server::NamedService>::NAME;

/// The health-checking names that report readiness: `""`, the game service, and the operator's
/// API when it is served.
fn readiness_names(admin: bool) -> Vec<&'static str> {
    let mut names = vec!["", GAME_SERVICE];
    if admin {
        names.push(ADMIN_SERVICE);
    }
    names
}

/// Sets the readiness names, leaving liveness alone.
async fn set_readiness(
    reporter: &tonic_health::server::HealthReporter,
    names: &[&'static str],
    status: tonic_health::ServingStatus,
) {
    for name in names {
        reporter.set_service_status(name, status).await;
    }
}

/// Keeps readiness in step with the store: NOT_SERVING while it does not answer.
async fn report_health(
    reporter: tonic_health::server::HealthReporter,
    names: Vec<&'static str>,
    store: Arc<dyn Store>,
) {
    let mut serving = None;
    loop {
        // A failed ping retires a dead connection, so one immediate retry on a fresh connection
        // tells a connection that went silent (healed now) from a store that is unreachable.
        let healthy = store.ping().await.is_ok() || store.ping().await.is_ok();
        if serving != Some(healthy) {
            if healthy {
                if serving.is_some() {
                    tracing::info!(store = store.kind(), "store reachable again: SERVING");
                }
                set_readiness(&reporter, &names, tonic_health::ServingStatus::Serving).await;
            } else {
                tracing::warn!(
                    store = store.kind(),
                    "store unreachable: reporting NOT_SERVING"
                );
                set_readiness(&reporter, &names, tonic_health::ServingStatus::NotServing).await;
            }
            serving = Some(healthy);
        }
        // While unhealthy, look again soon: SERVING should come back by itself, promptly.
        let interval = if healthy {
            HEALTH_INTERVAL
        } else {
            HEALTH_RECHECK_INTERVAL
        };
        tokio::time::sleep(interval).await;
    }
}
