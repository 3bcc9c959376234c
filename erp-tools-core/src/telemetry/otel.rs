//! [`init_otel`]: the `tracing` spans and the metrics exported over OTLP/HTTP (protobuf).

use std::time::Duration;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use super::otel_client::OtlpHttpClient;

/// Why [`init_otel`] could not install the exporter.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The exporter could not be built (a bad `OTEL_EXPORTER_OTLP_*` value, ...).
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(String),
    /// Another global `tracing` subscriber is installed already.
    #[error(
        "a global tracing subscriber is installed already: call init_otel instead of \
         log_to_stderr or your own subscriber, or add otel_layer() to yours"
    )]
    SubscriberTaken,
}

/// Keeps the exporters running; dropping it flushes the spans and metrics still queued
/// (waiting at most the export timeout for the collector) and stops them.
#[must_use = "dropping the guard stops the export"]
pub struct OtelGuard {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl std::fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelGuard").finish_non_exhaustive()
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        let _ = self.tracer.shutdown();
        let _ = self.meter.shutdown();
    }
}

/// Installs the global `tracing` subscriber: the log on stderr (filtered by `RUST_LOG`,
/// default `info,rmcp=warn`, as [`log_to_stderr`](crate::log_to_stderr)) plus the `info`
/// spans exported as OpenTelemetry traces (filtered by [`SPAN_FILTER_VAR`], default
/// [`DEFAULT_SPAN_FILTER`], whatever `RUST_LOG` says), and the metrics exported every 60 s
/// (`OTEL_METRIC_EXPORT_INTERVAL`, in ms), both over OTLP/HTTP with protobuf.
///
/// Configured by the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (default
/// `http://localhost:4318`; `/v1/traces` and `/v1/metrics` are appended, or set
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT` in full),
/// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`
/// (default `erp-tools`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and
/// `OTEL_TRACES_SAMPLER_ARG` (default `parentbased_always_on`), `OTEL_BSP_*` (batching).
///
/// Spans are batched (at most 2048 queued, `OTEL_BSP_MAX_QUEUE_SIZE`) and sent from a
/// thread of their own: a call never waits for the collector; when it is slow or down,
/// spans beyond the queue are dropped. Keep the returned guard for the life of the
/// server; dropping it flushes what is queued.
pub fn init_otel() -> Result<OtelGuard, OtelError> {
    let (layer, guard) = otel_layer()?;
    let log_filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_filter(log_filter),
        )
        .with(layer)
        .try_init()
        .map_err(|_| OtelError::SubscriberTaken)?;
    Ok(guard)
}

/// The exporting half of [`init_otel`], for an application with a subscriber of its own:
/// the layer that exports spans (filtered by [`SPAN_FILTER_VAR`]) to add to it, and the
/// guard. Installs the OTLP meter provider as the global one (the metrics' instruments
/// record into it). Configured by the same `OTEL_*` variables.
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt;
/// use tracing_subscriber::util::SubscriberInitExt;
///
/// let (otel, _guard) = erp_tools_core::telemetry::otel_layer().expect("exporter");
/// tracing_subscriber::registry()
///     .with(tracing_subscriber::fmt::layer())
///     .with(otel)
///     .init();
/// ```
pub fn otel_layer<S>() -> Result<(OtelLayer<S>, OtelGuard), OtelError>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let client =
        OtlpHttpClient::start(export_timeout()).map_err(|e| OtelError::Exporter(e.to_string()))?;
    let resource = resource();
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client.clone())
        .with_timeout(export_timeout())
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_timeout(export_timeout())
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics).build())
        .with_resource(resource)
        .build();
    let span_filter = std::env::var(SPAN_FILTER_VAR)
        .ok()
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(DEFAULT_SPAN_FILTER));
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer.tracer("erp-tools"))
        .with_tracked_inactivity(false)
        .with_threads(false)
        .with_filter(span_filter);
    opentelemetry::global::set_meter_provider(meter.clone());
    super::otel_metrics::register_gauges();
    Ok((Box::new(layer), OtelGuard { tracer, meter }))
}

/// The span-exporting layer [`otel_layer`] returns.
pub type OtelLayer<S> = Box<dyn tracing_subscriber::Layer<S> + Send + Sync>;

/// The variable naming which spans are exported (an `EnvFilter` directive, as
/// `RUST_LOG`); the log's `RUST_LOG` does not change what is exported.
pub const SPAN_FILTER_VAR: &str = "ERP_TOOLS_OTEL_SPANS";

/// The spans exported unless [`SPAN_FILTER_VAR`] says otherwise: erp-tools' own and the
/// application's `info` spans, not the HTTP and database libraries' internals, and
/// nothing of rmcp's (its `response error` warnings quote the JSON-RPC error's message,
/// which can carry a tool's question with argument values; the call's span says the
/// error's code, and the log on stderr keeps the warning).
pub const DEFAULT_SPAN_FILTER: &str = "info,rmcp=off,h2=warn,hyper=warn,reqwest=warn,sqlx=warn";

/// `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds), 10 s by default.
fn export_timeout() -> Duration {
    std::env::var("OTEL_EXPORTER_OTLP_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(10))
}

/// The resource of every span and metric: the SDK's defaults and `OTEL_*` variables,
/// with `service.name` `erp-tools` unless `OTEL_SERVICE_NAME` (or
/// `OTEL_RESOURCE_ATTRIBUTES`) names one.
fn resource() -> Resource {
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| a.contains("service.name="));
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name("erp-tools").build()
    }
}

/// See [`super::continue_trace`].
pub(super) fn continue_trace(span: &tracing::Span, traceparent: &str) {
    let carrier = std::collections::HashMap::from([(
        "traceparent".to_string(),
        traceparent.trim().to_string(),
    )]);
    let parent = TraceContextPropagator::new().extract(&carrier);
    use opentelemetry::trace::TraceContextExt as _;
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}
