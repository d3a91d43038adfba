//! Logs and traces: `tracing` everywhere, filtered with `RUST_LOG`-style directives, written as
//! plain text or JSON, and exported over OTLP (gRPC) when an endpoint is given.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Plain,
    Json,
}

/// Flushes the OTLP exporter when dropped.
pub struct Telemetry {
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("telemetry: OTLP shutdown failed: {error}");
        }
    }
}

/// Installs the global subscriber. `filter` uses `EnvFilter` syntax (e.g. `info,tabula=debug`).
pub fn init(
    filter: &str,
    format: LogFormat,
    otlp_endpoint: Option<&str>,
) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_new(filter)?;
    let output = match format {
        LogFormat::Plain => tracing_subscriber::fmt::layer().boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .boxed(),
    };
    let (otel_layer, provider) = match otlp_endpoint {
        Some(endpoint) => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint)
                .build()?;
            let resource = opentelemetry_sdk::Resource::builder()
                .with_service_name("tabula")
                .build();
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
        .with(otel_layer)
        .try_init()?;
    Ok(Telemetry { provider })
}
