//! Traces and metrics a team's own monitoring reads.
//!
//! **Spans.** Every tool call runs in one span, named after the OpenTelemetry MCP
//! conventions (`otel.name = "tools/call {tool}"`, `_unknown` for an unknown tool, as in
//! the metrics), with `mcp.method.name`,
//! `gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`, `jsonrpc.request.id`,
//! `mcp.protocol.version`, `mcp.session.id` (when there is one), and erp-tools' own
//! `erp_tools.tier`, `erp_tools.outcome` (`ok`, `replayed`, `denied`, `invalid`,
//! `failed`, `needs_input`), `erp_tools.run_id` and `enduser.id` (the principal's user
//! id; never anything of the token). A call that ends in an error has the span status
//! Error and `error.type` as the conventions say: `tool_error` for a result with
//! `isError: true`, the JSON-RPC error code (`-32602`, also in
//! `rpc.response.status_code`) for a protocol error; the finer reason is in
//! `erp_tools.error.kind` and the status description. Argument values and results are
//! not recorded. Inside it, child spans name the stages ([`span`]): admission, the
//! handler, the draft transaction and its idempotency claim, the wait for the audit row
//! to be durable, and calls to an external ERP ([`span::ERP_CALL`], marked failed with
//! [`span::record_error`]). The agent loop's run is a GenAI `invoke_agent` span and its
//! model calls are GenAI spans (`chat {model}`, `gen_ai.request.model`, and the integers
//! `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`); a failed model call or a
//! run that stops without an answer has the status Error too. These are plain `tracing`
//! spans: any subscriber sees them, and with the `otel` feature `init_otel` exports
//! them; numbers are recorded as integers, so they are exported as OTLP `int` values.
//!
//! **Metrics** (feature `metrics`): the call-duration histogram
//! `mcp.server.operation.duration` and the counters and gauges listed in [`metrics`],
//! rendered as Prometheus text by [`metrics::render`] (the HTTP router serves it on
//! `/metrics`), and exported over OTLP with the `otel` feature.
//!
//! **Caller's trace.** A W3C `traceparent` in the HTTP request or in the request's
//! `_meta` (MCP SEP-414) becomes the parent of the server's spans, so an agent host's
//! trace and the tool server's are one trace.
//!
//! The guide's chapter: *Traces and metrics* (`guide/src/telemetry.md` in the repository).

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

#[cfg(any(feature = "mcp", feature = "agent"))]
pub(crate) use labels::QuestionForm;
#[cfg(feature = "mcp")]
pub(crate) use labels::rpc_code;
pub(crate) use labels::{Answering, CallTrace, call_end};
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
