//! Metrics, with the OpenTelemetry metrics SDK: exported over OTLP (with the traces) and served in
//! the Prometheus text format on `--metrics-listen` (`GET /metrics`).
//!
//! Series (Prometheus names; the OTLP names use dots, e.g. `rpc.server.call.duration`):
//! - `rpc_server_call_duration_seconds` (histogram; `rpc_system`, `rpc_service`, `rpc_method`,
//!   `rpc_grpc_status_code`): every call, so its `_count` is the RPC rate and errors by code;
//! - `tabula_observe_streams` (gauge): open Observe streams;
//! - `tabula_store_operation_duration_seconds` (histogram; `operation`, `store`): every store round
//!   trip and its latency;
//! - `tabula_store_errors_total` (`operation`, `store`): round trips that failed;
//! - `tabula_cache_hits_total`, `tabula_cache_misses_total`, `tabula_cache_evictions_total`;
//! - `tabula_append_conflicts_total`: appends that lost to another writer (the Act is retried on
//!   the newer state);
//! - `tabula_request_retries_total`: client retries of an already-applied request id, answered
//!   from the log;
//! - `tabula_games_created_total`, `tabula_games_finished_total` (`game`);
//! - `tabula_clock_timeouts_total` (`game`): timeouts the turn-clock sweeper appended;
//!   `tabula_clock_sweep_lost_races_total`: expired deadlines where a move (or another replica's
//!   timeout) got in first.
//! - `tabula_webhook_passes_total`, `tabula_webhook_entries_told_total` (`source`: `cache`,
//!   `log`): delivery passes of tenants' games and the entries they told, by where the states
//!   before and after each entry came from: this replica's cache (the steps it committed or
//!   followed) or the game's log read and replayed (a pass that lagged far behind its game, or
//!   took over another replica's). A rising `log` share is passes costing a log read each.
//! - `tabula_retention_games_total` (`outcome`: `abandoned`, `retired`, `failed`): what this
//!   replica's retention passes did — idle games ended as abandoned, finished games archived and
//!   removed from the store, and handlings that failed (retried next pass; a rising count means
//!   the store or the archive is refusing).
//! - `tabula_edge_refusals_total` (`limit`: `header_size`, `rate_per_address`, `rate_per_token`,
//!   `observe_streams_per_connection`, `observe_streams_per_replica`): requests the edge refused
//!   with RESOURCE_EXHAUSTED before the service saw them.
//! - `tabula_tenant_acts_total`, `tabula_tenant_games_created_total`,
//!   `tabula_tenant_games_finished_total` (`tenant`): per tenant, the Acts committed in its games
//!   and its games created and finished; `tabula_tenant_bot_time_seconds_total` (`tenant`): the
//!   time the bots of this replica spent deciding in its games;
//!   `tabula_tenant_quota_refusals_total` (`tenant`, `quota`): calls refused over one of its
//!   quotas (for `bot_think_ms_per_minute`, decisions cut short);
//!   `tabula_tenant_webhook_calls_total` (`tenant`, `outcome`: `delivered`, `failed`): calls of
//!   its webhooks by this replica. The `tenant` label is the tenant id for the first
//!   [`MAX_TENANT_LABELS`] tenants a replica meets and `other` after that, so a deployment with
//!   many tenants cannot blow up the series count.
//!
//! Instruments come from the global meter provider: until [`init`] installs one (in tests that
//! run servers in-process) recording costs next to nothing.

use std::fmt::Write;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body as HttpBody, Frame};
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::body::Body;

use crate::proto::v1 as pb;

/// Latency buckets in seconds: sub-millisecond cache hits up to multi-second store timeouts.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

struct Instruments {
    rpc_duration: Histogram<f64>,
    observe_streams: UpDownCounter<i64>,
    store_duration: Histogram<f64>,
    store_errors: Counter<u64>,
    cache_hits: Counter<u64>,
    cache_misses: Counter<u64>,
    cache_evictions: Counter<u64>,
    append_conflicts: Counter<u64>,
    request_retries: Counter<u64>,
    games_created: Counter<u64>,
    games_finished: Counter<u64>,
    clock_timeouts: Counter<u64>,
    clock_lost_races: Counter<u64>,
    retention_games: Counter<u64>,
    webhook_passes: Counter<u64>,
    webhook_entries_told: Counter<u64>,
    edge_refusals: Counter<u64>,
    tenant_acts: Counter<u64>,
    tenant_games_created: Counter<u64>,
    tenant_games_finished: Counter<u64>,
    tenant_webhook_calls: Counter<u64>,
    tenant_quota_refusals: Counter<u64>,
    tenant_bot_time: Counter<f64>,
}

static INSTRUMENTS: LazyLock<Instruments> = LazyLock::new(|| {
    let meter = opentelemetry::global::meter("tabula");
    let counter = |name: &'static str, description: &'static str| {
        meter
            .u64_counter(name)
            .with_description(description)
            .build()
    };
    let latency = |name: &'static str, description: &'static str| {
        meter
            .f64_histogram(name)
            .with_unit("s")
            .with_description(description)
            .with_boundaries(LATENCY_BUCKETS.to_vec())
            .build()
    };
    Instruments {
        rpc_duration: latency(
            "rpc.server.call.duration",
            "Duration of RPCs (streams: until they end), by method and gRPC status code",
        ),
        observe_streams: meter
            .i64_up_down_counter("tabula.observe.streams")
            .with_description("Open Observe streams")
            .build(),
        store_duration: latency(
            "tabula.store.operation.duration",
            "Duration of store round trips, by operation",
        ),
        store_errors: counter("tabula.store.errors", "Store round trips that failed"),
        cache_hits: counter(
            "tabula.cache.hits",
            "Game cache lookups that found the game",
        ),
        cache_misses: counter("tabula.cache.misses", "Game cache lookups that did not"),
        cache_evictions: counter("tabula.cache.evictions", "Games evicted from the cache"),
        append_conflicts: counter(
            "tabula.append.conflicts",
            "Appends refused because another writer moved the log on",
        ),
        request_retries: counter(
            "tabula.request.retries",
            "Retried request ids answered from the log instead of applied again",
        ),
        games_created: counter("tabula.games.created", "Games created, by game"),
        games_finished: counter("tabula.games.finished", "Games finished, by game"),
        clock_timeouts: counter(
            "tabula.clock.timeouts",
            "Timeouts the turn-clock sweeper appended, by game",
        ),
        clock_lost_races: counter(
            "tabula.clock.sweep.lost_races",
            "Expired deadlines where a move or another replica's timeout got in first",
        ),
        retention_games: counter(
            "tabula.retention.games",
            "Games the retention passes ended as abandoned, retired, or failed to handle, by outcome",
        ),
        webhook_passes: counter(
            "tabula.webhook.passes",
            "Delivery passes of tenants' games, by where their states came from (cache or log)",
        ),
        webhook_entries_told: counter(
            "tabula.webhook.entries_told",
            "Entries whose notifications delivery passes derived, by where their states came from",
        ),
        edge_refusals: counter(
            "tabula.edge.refusals",
            "Requests the edge refused before the service saw them, by the limit that refused them",
        ),
        tenant_acts: counter(
            "tabula.tenant.acts",
            "Acts committed in a tenant's games, by tenant",
        ),
        tenant_games_created: counter(
            "tabula.tenant.games.created",
            "Games created by a tenant, by tenant",
        ),
        tenant_games_finished: counter(
            "tabula.tenant.games.finished",
            "A tenant's games finished, by tenant",
        ),
        tenant_webhook_calls: counter(
            "tabula.tenant.webhook_calls",
            "Calls of a tenant's webhooks, by tenant and outcome",
        ),
        tenant_quota_refusals: counter(
            "tabula.tenant.quota_refusals",
            "Calls refused over a tenant's quota, by tenant and quota",
        ),
        tenant_bot_time: meter
            .f64_counter("tabula.tenant.bot_time")
            .with_unit("s")
            .with_description(
                "Time the server's bots spent deciding in a tenant's games, by tenant",
            )
            .build(),
    }
});

/// The most tenants a replica labels by id; the others share the label `other`.
pub const MAX_TENANT_LABELS: usize = 100;

/// The `tenant` label for `tenant`: its id while fewer than [`MAX_TENANT_LABELS`] tenants have one.
fn tenant_label(tenant: &str) -> String {
    static LABELLED: LazyLock<parking_lot::Mutex<std::collections::HashSet<String>>> =
        LazyLock::new(Default::default);
    let mut labelled = LABELLED.lock();
    if labelled.contains(tenant) {
        return tenant.to_owned();
    }
    if labelled.len() < MAX_TENANT_LABELS {
        labelled.insert(tenant.to_owned());
        return tenant.to_owned();
    }
    "other".to_owned()
}

/// An Act was committed in a game of `tenant`.
pub fn tenant_act(tenant: &str) {
    INSTRUMENTS
        .tenant_acts
        .add(1, &[KeyValue::new("tenant", tenant_label(tenant))]);
}

/// `tenant` created a game.
pub fn tenant_game_created(tenant: &str) {
    INSTRUMENTS
        .tenant_games_created
        .add(1, &[KeyValue::new("tenant", tenant_label(tenant))]);
}

/// This replica called a webhook of `tenant`: `delivered` (a 2xx answer) or not.
pub fn webhook_call(tenant: &str, delivered: bool) {
    INSTRUMENTS.tenant_webhook_calls.add(
        1,
        &[
            KeyValue::new("tenant", tenant_label(tenant)),
            KeyValue::new("outcome", if delivered { "delivered" } else { "failed" }),
        ],
    );
}

/// A game of `tenant` finished.
pub fn tenant_game_finished(tenant: &str) {
    INSTRUMENTS
        .tenant_games_finished
        .add(1, &[KeyValue::new("tenant", tenant_label(tenant))]);
}

/// A bot decided in a game of `tenant`, in `took`.
pub fn tenant_bot_time(tenant: &str, took: Duration) {
    INSTRUMENTS.tenant_bot_time.add(
        took.as_secs_f64(),
        &[KeyValue::new("tenant", tenant_label(tenant))],
    );
}

/// A call was refused over `tenant`'s quota `quota`.
pub fn tenant_quota_refusal(tenant: &str, quota: &'static str) {
    INSTRUMENTS.tenant_quota_refusals.add(
        1,
        &[
            KeyValue::new("tenant", tenant_label(tenant)),
            KeyValue::new("quota", quota),
        ],
    );
}

/// The label for a game kind: `medici_vs_strozzi`, `strozzi`, `manila`, `la_strada`.
fn game_label(kind: pb::GameKind) -> String {
    kind.as_str_name()
        .trim_start_matches("GAME_KIND_")
        .to_ascii_lowercase()
}

/// A delivery pass told `entries` entries of a tenant's game from the states in this replica's
/// cache (`from_cache`) or from the game's log, read and replayed.
pub fn webhook_pass(from_cache: bool, entries: usize) {
    let source = [KeyValue::new(
        "source",
        if from_cache { "cache" } else { "log" },
    )];
    INSTRUMENTS.webhook_passes.add(1, &source);
    INSTRUMENTS
        .webhook_entries_told
        .add(entries as u64, &source);
}

/// A cache lookup found (`true`) or missed the game.
pub fn cache_lookup(hit: bool) {
    if hit {
        INSTRUMENTS.cache_hits.add(1, &[]);
    } else {
        INSTRUMENTS.cache_misses.add(1, &[]);
    }
}

/// A game was evicted from the cache to make room.
pub fn cache_eviction() {
    INSTRUMENTS.cache_evictions.add(1, &[]);
}

/// One store round trip: its operation, the store's name, how long it took and whether it failed.
pub fn store_call(operation: &'static str, store: &'static str, took: Duration, failed: bool) {
    let attributes = [
        KeyValue::new("operation", operation),
        KeyValue::new("store", store),
    ];
    INSTRUMENTS
        .store_duration
        .record(took.as_secs_f64(), &attributes);
    if failed {
        INSTRUMENTS.store_errors.add(1, &attributes);
    }
}

/// A game of `kind` was created.
pub fn game_created(kind: pb::GameKind) {
    INSTRUMENTS
        .games_created
        .add(1, &[KeyValue::new("game", game_label(kind))]);
}

/// An append found the log moved on (another replica appended first).
pub fn append_conflict() {
    INSTRUMENTS.append_conflicts.add(1, &[]);
}

/// A request id was found already appended (a client's retry).
pub fn request_retry() {
    INSTRUMENTS.request_retries.add(1, &[]);
}

/// A game of `kind` (`tabula.v1.GameKind`) reached its final state.
pub fn game_finished(kind: pb::GameKind) {
    INSTRUMENTS
        .games_finished
        .add(1, &[KeyValue::new("game", game_label(kind))]);
}

/// The sweeper appended a timeout in a game of `kind`.
pub fn clock_timeout(kind: pb::GameKind) {
    INSTRUMENTS
        .clock_timeouts
        .add(1, &[KeyValue::new("game", game_label(kind))]);
}

/// The sweeper found an expired deadline but the log had moved on (a move arrived in time, or
/// another replica appended the timeout).
pub fn clock_lost_race() {
    INSTRUMENTS.clock_lost_races.add(1, &[]);
}

/// One retention pass ended `abandoned` idle games, retired `retired` finished ones and failed
/// `failed` times.
pub fn retention_pass(abandoned: usize, retired: usize, failed: usize) {
    for (outcome, count) in [
        ("abandoned", abandoned),
        ("retired", retired),
        ("failed", failed),
    ] {
        INSTRUMENTS
            .retention_games
            .add(count as u64, &[KeyValue::new("outcome", outcome)]);
    }
}

/// The edge refused a request over `limit` (`header_size`, `rate_per_address`,
/// `rate_per_token`, `observe_streams_per_connection`, `observe_streams_per_replica`).
pub fn edge_refusal(limit: &'static str) {
    INSTRUMENTS
        .edge_refusals
        .add(1, &[KeyValue::new("limit", limit)]);
}

/// Metrics readers and exporters, shut down (flushed) by [`MetricsPipeline::shutdown`].
pub struct MetricsPipeline {
    provider: SdkMeterProvider,
    scrape: Option<Arc<ManualReader>>,
}

impl MetricsPipeline {
    /// The reader the Prometheus endpoint collects from, if one was asked for.
    pub fn scrape_reader(&self) -> Option<Arc<ManualReader>> {
        self.scrape.clone()
    }

    /// Exports what is still buffered and stops the exporters.
    pub fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("telemetry: metrics shutdown failed: {error}");
        }
    }
}

/// Installs the global meter provider: an OTLP exporter when `otlp_endpoint` is given, a reader
/// for the Prometheus endpoint when `scrape` is set. `None` when neither is wanted.
pub fn init(
    otlp_endpoint: Option<&str>,
    scrape: bool,
    resource: opentelemetry_sdk::Resource,
) -> anyhow::Result<Option<MetricsPipeline>> {
    if otlp_endpoint.is_none() && !scrape {
        return Ok(None);
    }
    let mut builder = SdkMeterProvider::builder().with_resource(resource);
    if let Some(endpoint) = otlp_endpoint {
        use opentelemetry_otlp::WithExportConfig;
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()?;
        builder = builder.with_reader(
            opentelemetry_sdk::metrics::PeriodicReader::builder(exporter)
                .with_interval(Duration::from_secs(15))
                .build(),
        );
    }
    let scrape = scrape.then(|| Arc::new(ManualReader::builder().build()));
    if let Some(reader) = &scrape {
        builder = builder.with_reader(SharedReader(reader.clone()));
    }
    let provider = builder.build();
    opentelemetry::global::set_meter_provider(provider.clone());
    Ok(Some(MetricsPipeline { provider, scrape }))
}

/// Lets the provider own a reader the scrape endpoint also holds.
#[derive(Debug)]
struct SharedReader(Arc<ManualReader>);

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, metrics: &mut ResourceMetrics) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.collect(metrics)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// Serves `GET /metrics` (Prometheus text format 0.0.4) on `listener` until the process ends.
pub async fn serve_scrape(listener: tokio::net::TcpListener, reader: Arc<ManualReader>) {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            continue;
        };
        let reader = reader.clone();
        tokio::spawn(async move {
            let mut request = vec![0_u8; 4096];
            let mut read = 0;
            // The request line is all we need; give up on clients that send nothing.
            while !request[..read].windows(4).any(|w| w == b"\r\n\r\n") && read < request.len() {
                let received =
                    tokio::time::timeout(Duration::from_secs(5), socket.read(&mut request[read..]))
                        .await;
                match received {
                    Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return,
                    Ok(Ok(n)) => read += n,
                }
            }
            let head = String::from_utf8_lossy(&request[..read]);
            let path = head.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = if head.starts_with("GET ") && path == "/metrics" {
                let mut metrics = ResourceMetrics::default();
                match reader.collect(&mut metrics) {
                    Ok(()) => ("200 OK", render_prometheus(&metrics)),
                    Err(error) => ("503 Service Unavailable", format!("{error}\n")),
                }
            } else {
                ("404 Not Found", "GET /metrics\n".to_owned())
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
            let _ = socket.shutdown().await;
        });
    }
}

/// A metric or label name as Prometheus allows it.
fn prometheus_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn escape_label_value(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels<'a>(
    attributes: impl Iterator<Item = &'a KeyValue>,
    extra: Option<(&str, &str)>,
) -> String {
    let mut pairs: Vec<String> = attributes
        .map(|kv| {
            format!(
                "{}=\"{}\"",
                prometheus_name(kv.key.as_str()),
                escape_label_value(&kv.value.as_str())
            )
        })
        .collect();
    if let Some((name, value)) = extra {
        pairs.push(format!("{name}=\"{value}\""));
    }
    if pairs.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", pairs.join(","))
    }
}

/// Renders collected metrics in the Prometheus text exposition format.
pub fn render_prometheus(metrics: &ResourceMetrics) -> String {
    let mut out = String::new();
    for scope in metrics.scope_metrics() {
        for metric in scope.metrics() {
            let mut name = prometheus_name(metric.name());
            if metric.unit() == "s" && !name.ends_with("_seconds") {
                name.push_str("_seconds");
            }
            let help = metric.description().replace('\n', " ");
            match metric.data() {
                AggregatedMetrics::F64(data) => render_data(&mut out, &name, &help, data),
                AggregatedMetrics::U64(data) => render_data(&mut out, &name, &help, data),
                AggregatedMetrics::I64(data) => render_data(&mut out, &name, &help, data),
            }
        }
    }
    out
}

/// One counter or gauge series: its `HELP` and `TYPE` lines, then a line per data point.
fn render_points<'a, T: std::fmt::Display, A: Iterator<Item = &'a KeyValue>>(
    out: &mut String,
    name: &str,
    help: &str,
    kind: &str,
    points: impl Iterator<Item = (A, T)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (attributes, value) in points {
        let _ = writeln!(out, "{name}{} {value}", labels(attributes, None));
    }
}

fn render_data<T: Copy + std::fmt::Display>(
    out: &mut String,
    name: &str,
    help: &str,
    data: &MetricData<T>,
) {
    match data {
        MetricData::Sum(sum) => {
            // A monotonic sum is a Prometheus counter (`_total`); any other sum is a gauge.
            let (name, kind) = if sum.is_monotonic() {
                (format!("{name}_total"), "counter")
            } else {
                (name.to_owned(), "gauge")
            };
            let points = sum.data_points().map(|p| (p.attributes(), p.value()));
            render_points(out, &name, help, kind, points);
        }
        MetricData::Gauge(gauge) => {
            let points = gauge.data_points().map(|p| (p.attributes(), p.value()));
            render_points(out, name, help, "gauge", points);
        }
        MetricData::Histogram(histogram) => {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            for point in histogram.data_points() {
                let mut cumulative = 0;
                let bounds: Vec<String> = point
                    .bounds()
                    .map(|bound| bound.to_string())
                    .chain(std::iter::once("+Inf".to_owned()))
                    .collect();
                for (bound, count) in bounds.iter().zip(point.bucket_counts()) {
                    cumulative += count;
                    let labels = labels(point.attributes(), Some(("le", bound)));
                    let _ = writeln!(out, "{name}_bucket{labels} {cumulative}");
                }
                let labels = labels(point.attributes(), None);
                let _ = writeln!(out, "{name}_sum{labels} {}", point.sum());
                let _ = writeln!(out, "{name}_count{labels} {}", point.count());
            }
        }
        // Not configured anywhere in Tabula; nothing to render.
        MetricData::ExponentialHistogram(_) => {}
    }
}

/// Records every call's duration and gRPC status code, and the open Observe streams.
#[derive(Clone, Copy, Debug, Default)]
pub struct RpcMetricsLayer;

impl<S> tower::Layer<S> for RpcMetricsLayer {
    type Service = RpcMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RpcMetrics { inner }
    }
}

/// See [`RpcMetricsLayer`].
#[derive(Clone, Debug)]
pub struct RpcMetrics<S> {
    inner: S,
}

const OBSERVE_PATH: &str = "/tabula.v1.GameService/Observe";

impl<S, ReqBody, ResBody> tower::Service<Request<ReqBody>> for RpcMetrics<S>
where
    S: tower::Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<tonic::codegen::StdError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let started = Instant::now();
        let path = request.uri().path().to_owned();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            // A trailers-only answer (an error before any message) carries the status in its
            // headers; otherwise it comes in the trailers at the end of the body.
            let status = grpc_status(response.headers());
            let streaming = path == OBSERVE_PATH && status.is_none();
            if streaming {
                INSTRUMENTS.observe_streams.add(1, &[]);
            }
            let call = CallRecord {
                path,
                started,
                status,
                streaming,
                recorded: false,
            };
            Ok(response.map(|body| Body::new(MeteredBody { inner: body, call })))
        })
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<i32> {
    headers
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
}

/// One call's measurement, recorded once: when its body ends, or when it is dropped (a client
/// that went away: CANCELLED unless a status was seen).
struct CallRecord {
    path: String,
    started: Instant,
    status: Option<i32>,
    streaming: bool,
    recorded: bool,
}

impl CallRecord {
    fn record(&mut self) {
        if self.recorded {
            return;
        }
        self.recorded = true;
        if self.streaming {
            INSTRUMENTS.observe_streams.add(-1, &[]);
        }
        let (service, method) = self
            .path
            .trim_start_matches('/')
            .split_once('/')
            .unwrap_or(("", self.path.as_str()));
        let code = self.status.unwrap_or(tonic::Code::Cancelled as i32);
        INSTRUMENTS.rpc_duration.record(
            self.started.elapsed().as_secs_f64(),
            &[
                KeyValue::new("rpc.system", "grpc"),
                KeyValue::new("rpc.service", service.to_owned()),
                KeyValue::new("rpc.method", method.to_owned()),
                KeyValue::new("rpc.grpc.status_code", i64::from(code)),
            ],
        );
    }
}

impl Drop for CallRecord {
    fn drop(&mut self) {
        self.record();
    }
}

pin_project_lite::pin_project! {
    struct MeteredBody<B> {
        #[pin]
        inner: B,
        call: CallRecord,
    }
}

impl<B: HttpBody<Data = Bytes>> HttpBody for MeteredBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let frame = this.inner.poll_frame(cx);
        match &frame {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref()
                    && let Some(status) = grpc_status(trailers)
                {
                    this.call.status = Some(status);
                    this.call.record();
                }
            }
            Poll::Ready(None) => this.call.record(),
            _ => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels_follow_prometheus_rules() {
        assert_eq!(
            prometheus_name("rpc.server.call.duration"),
            "rpc_server_call_duration"
        );
        let attributes = [
            KeyValue::new("rpc.method", "Act"),
            KeyValue::new("odd", "a \"b\"\n"),
        ];
        assert_eq!(
            labels(attributes.iter(), Some(("le", "+Inf"))),
            "{rpc_method=\"Act\",odd=\"a \\\"b\\\"\\n\",le=\"+Inf\"}"
        );
        assert_eq!(game_label(pb::GameKind::LaStrada), "la_strada");
    }
}
