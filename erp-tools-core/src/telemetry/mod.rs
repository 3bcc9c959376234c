//! Traces and metrics a team's own monitoring reads.
//!
//! **Spans.** Every tool call runs in one span, named after the OpenTelemetry MCP
//! conventions (`otel.name = "tools/call {tool}"`), with `mcp.method.name`,
//! `gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`, `jsonrpc.request.id`,
//! `mcp.protocol.version`, `mcp.session.id` (when there is one), `error.type` on failure,
//! and erp-tools' own `erp_tools.tier`, `erp_tools.outcome` (`ok`, `replayed`, `denied`,
//! `invalid`, `failed`), `erp_tools.run_id` and `enduser.id` (the principal's user id;
//! never anything of the token). Argument values and results are not recorded. Inside it,
//! child spans name the stages ([`span`]): admission, the handler, the draft transaction
//! and its idempotency claim, the wait for the audit row to be durable, and calls to an
//! external ERP ([`span::ERP_CALL`]). The agent loop's model calls are GenAI spans
//! (`chat {model}`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`,
//! `gen_ai.usage.output_tokens`) inside the run's span. These are plain `tracing` spans:
//! any subscriber sees them, and with the `otel` feature `init_otel` exports them.
//!
//! **Metrics** (feature `metrics`): the call-duration histogram
//! `mcp.server.operation.duration` and the counters and gauges listed in [`metrics`],
//! rendered as Prometheus text by [`metrics::render`] (the HTTP router serves it on
//! `/metrics`), and exported over OTLP with the `otel` feature.
//!
//! **Caller's trace.** A W3C `traceparent` in the HTTP request or in the request's
//! `_meta` (MCP SEP-414) becomes the parent of the server's spans, so an agent host's
//! trace and the tool server's are one trace.

mod labels;
pub(crate) mod record;
pub mod span;

#[cfg(feature = "metrics")]
pub mod metrics;

#[cfg(feature = "otel")]
mod otel;
#[cfg(feature = "otel")]
mod otel_client;
#[cfg(feature = "otel")]
mod otel_metrics;

pub(crate) use labels::{CallTrace, outcome_labels};
#[cfg(feature = "otel")]
pub use otel::{
    DEFAULT_SPAN_FILTER, OtelError, OtelGuard, OtelLayer, SPAN_FILTER_VAR, init_otel, otel_layer,
};

/// The span of the HTTP request a call arrived in, put into the request's extensions by
/// the HTTP router so the call's span is its child.
#[cfg(feature = "mcp")]
#[derive(Clone, Debug)]
pub(crate) struct EdgeSpan(pub tracing::Span);

/// Makes `span` continue the caller's trace named by a W3C `traceparent` header value
/// (`00-{trace id}-{parent id}-{flags}`). Call it before the span is entered. Without the
/// `otel` feature, or when the value is not a valid `traceparent`, nothing changes.
pub fn continue_trace(span: &tracing::Span, traceparent: &str) {
    #[cfg(feature = "otel")]
    otel::continue_trace(span, traceparent);
    #[cfg(not(feature = "otel"))]
    let _ = (span, traceparent);
}
