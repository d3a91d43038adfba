//! Logs, traces and metrics: `tracing` everywhere, filtered with `RUST_LOG`-style directives,
//! written as plain text (coloured only on a terminal) or JSON; traces and metrics exported over
//! OTLP (gRPC) when an endpoint is given, metrics also scraped (see [`crate::metrics`]).

use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Plain,
    /// One JSON object per line (with trace and span ids).
    Json,
}

/// Flushes the OTLP exporters (spans, metrics) when dropped.
pub struct Telemetry {
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
    metrics: Option<crate::metrics::MetricsPipeline>,
}

impl Telemetry {
    /// The reader the Prometheus scrape endpoint collects from, when one was asked for.
    pub fn scrape_reader(
        &self,
    ) -> Option<std::sync::Arc<opentelemetry_sdk::metrics::ManualReader>> {
        self.metrics
            .as_ref()
            .and_then(crate::metrics::MetricsPipeline::scrape_reader)
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("telemetry: OTLP shutdown failed: {error}");
        }
        if let Some(metrics) = self.metrics.take() {
            metrics.shutdown();
        }
    }
}

/// An OTLP/gRPC endpoint as a URI: `host:port` without a scheme is plaintext `http://`, as
/// collectors inside a cluster usually are.
pub fn otlp_uri(endpoint: &str) -> String {
    crate::address::with_scheme(endpoint)
}

/// Whether log lines may carry ANSI colours: only on a terminal, and never with `NO_COLOR` set.
fn colours_wanted() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Installs the global subscriber. `filter` uses `EnvFilter` syntax (e.g. `info,tabula=debug`).
/// `metrics_scrape` keeps a metrics reader for the Prometheus endpoint; `access_log` writes one
/// line per RPC.
pub fn init(
    filter: &str,
    format: LogFormat,
    otlp_endpoint: Option<&str>,
    metrics_scrape: bool,
    access_log: bool,
) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_new(filter)?;
    let otlp_endpoint = otlp_endpoint.map(otlp_uri);
    let otlp_endpoint = otlp_endpoint.as_deref();
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("tabula")
        .build();
    let metrics = crate::metrics::init(otlp_endpoint, metrics_scrape, resource.clone())?;
    let output = match format {
        LogFormat::Plain => tracing_subscriber::fmt::layer()
            .with_ansi(colours_wanted())
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .event_format(JsonWithTraceIds(
                tracing_subscriber::fmt::format().json().flatten_event(true),
            ))
            .boxed(),
    };
    let access_log = access_log.then_some(AccessLog);
    let (otel_layer, provider) = match otlp_endpoint {
        Some(endpoint) => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint)
                .build()?;
            let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource)
                .build();
            let tracer = provider.tracer("tabula");
            (
                Some(tracing_opentelemetry::layer().with_tracer(tracer)),
                Some(provider),
            )
        }
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(output)
        .with(access_log)
        .with(otel_layer)
        .try_init()?;
    Ok(Telemetry { provider, metrics })
}

/// Continues the caller's trace: the W3C `traceparent` (and `tracestate`) of each request becomes
/// the OpenTelemetry context the RPC's SERVER span starts in, so its parent is the caller's span.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceContextLayer;

impl<S> tower::Layer<S> for TraceContextLayer {
    type Service = TraceContext<S>;

    fn layer(&self, inner: S) -> Self::Service {
        TraceContext { inner }
    }
}

/// See [`TraceContextLayer`].
#[derive(Clone, Debug)]
pub struct TraceContext<S> {
    inner: S,
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl opentelemetry::propagation::Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

impl<S, Req> tower::Service<http::Request<Req>> for TraceContext<S>
where
    S: tower::Service<http::Request<Req>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = opentelemetry::context::WithContext<S::Future>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Req>) -> Self::Future {
        use opentelemetry::context::FutureExt;
        use opentelemetry::propagation::TextMapPropagator;
        let propagator = opentelemetry_sdk::propagation::TraceContextPropagator::new();
        let context = propagator.extract(&HeaderExtractor(request.headers()));
        self.inner.call(request).with_context(context)
    }
}

/// Writes one access-log line per RPC (target `tabula::access`) when its SERVER span closes:
/// method, game, seat, tenant (the game's, or the caller's for the operator's API), gRPC code and
/// duration.
pub struct AccessLog;

#[derive(Default)]
struct AccessFields {
    method: String,
    game_id: Option<String>,
    tenant: Option<String>,
    seat: Option<u64>,
    code: Option<i64>,
    started: Option<std::time::Instant>,
}

impl tracing::field::Visit for AccessFields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "rpc.method" => self.method = format!("{value:?}").trim_matches('"').to_owned(),
            "game_id" => self.game_id = Some(format!("{value:?}").trim_matches('"').to_owned()),
            "tenant" => self.tenant = Some(format!("{value:?}").trim_matches('"').to_owned()),
            _ => {}
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "rpc.method" => self.method = value.to_owned(),
            "game_id" => self.game_id = Some(value.to_owned()),
            "tenant" => self.tenant = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        match field.name() {
            "seat" => self.seat = Some(value),
            "rpc.grpc.status_code" => self.code = i64::try_from(value).ok(),
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        match field.name() {
            "seat" => self.seat = u64::try_from(value).ok(),
            "rpc.grpc.status_code" => self.code = Some(value),
            _ => {}
        }
    }
}

impl<S> Layer<S> for AccessLog
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attributes: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attributes.metadata().fields().field("rpc.method").is_none() {
            return;
        }
        let mut fields = AccessFields {
            started: Some(std::time::Instant::now()),
            ..AccessFields::default()
        };
        attributes.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<AccessFields>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: tracing::span::Id, ctx: tracing_subscriber::layer::Context<'_, S>) {
        use opentelemetry::trace::TraceContextExt;
        let Some(span) = ctx.span(&id) else {
            return;
        };
        if span.extensions().get::<AccessFields>().is_none() {
            return;
        }
        // The span's own trace and span ids (it is no longer the current span here).
        let span_context = tracing::dispatcher::get_default(|dispatch| {
            tracing_opentelemetry::get_otel_context(&id, dispatch)
        })
        .map(|context| context.span().span_context().clone())
        .filter(opentelemetry::trace::SpanContext::is_valid);
        let Some(fields) = span.extensions_mut().remove::<AccessFields>() else {
            return;
        };
        let trace_id = span_context
            .as_ref()
            .map(|context| context.trace_id().to_string());
        let span_id = span_context
            .as_ref()
            .map(|context| context.span_id().to_string());
        let duration_ms = fields
            .started
            .map(|started| started.elapsed().as_secs_f64() * 1000.0)
            .unwrap_or_default();
        tracing::info!(
            target: "tabula::access",
            method = %fields.method,
            game_id = fields.game_id.as_deref().unwrap_or(""),
            tenant = fields.tenant.as_deref().unwrap_or(""),
            seat = fields.seat,
            code = fields.code,
            duration_ms,
            trace_id = trace_id.as_deref(),
            span_id = span_id.as_deref(),
            "rpc"
        );
    }
}

/// The JSON event format plus the OpenTelemetry `trace_id` and `span_id` of the current span,
/// so log lines can be joined with traces.
pub struct JsonWithTraceIds(
    tracing_subscriber::fmt::format::Format<tracing_subscriber::fmt::format::Json>,
);

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for JsonWithTraceIds
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let context = tracing::Span::current().context();
        let span_context = context.span().span_context().clone();
        let mut line = String::new();
        self.0.format_event(
            ctx,
            tracing_subscriber::fmt::format::Writer::new(&mut line),
            event,
        )?;
        if span_context.is_valid()
            && let Some(body) = line.trim_end().strip_suffix('}')
        {
            write!(
                writer,
                "{body},\"trace_id\":\"{}\",\"span_id\":\"{}\"}}",
                span_context.trace_id(),
                span_context.span_id()
            )?;
            writeln!(writer)
        } else {
            write!(writer, "{line}")
        }
    }
}
