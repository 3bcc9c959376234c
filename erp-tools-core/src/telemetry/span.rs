//! The names of the spans inside a call's `tools/call {tool}` span, one a stage, and the
//! span a handler opens around a call to an external ERP ([`erp_call`]).
//!
//! A trace of one MCP draft reads, from the top: the HTTP request at the edge
//! (`POST /mcp`), the call (`tools/call purchasing_create_po_draft`), [`ADMISSION`], the
//! [`DRAFT_TRANSACTION`] with its [`IDEMPOTENCY_CLAIM`] and the [`HANDLER`] inside it,
//! and [`AUDIT_DURABLE`] (the wait for the call's `attempt` row to be committed before
//! the draft commits or a result leaves). Each is an `info` span.

/// Admission: tool known, scopes held, arguments valid and normalised, limits.
pub const ADMISSION: &str = "erp_tools.admission";
/// The tool's own handler.
pub const HANDLER: &str = "erp_tools.handler";
/// The transaction of a draft call (claim, handler, key row, commit).
pub const DRAFT_TRANSACTION: &str = "erp_tools.draft_transaction";
/// Claiming (PostgreSQL) or checking (SQLite) the call's idempotency key.
pub const IDEMPOTENCY_CLAIM: &str = "erp_tools.idempotency_claim";
/// Waiting for the call's `attempt` audit row to be durable.
pub const AUDIT_DURABLE: &str = "erp_tools.audit_durable";
/// A call to an external ERP (a remote draft, a remote read): see [`erp_call`].
pub const ERP_CALL: &str = "erp_tools.erp_call";

/// The span of one call to an external ERP, for a handler or a remote ERP adapter to run
/// the request in (`.instrument(erp_call("tryton", "model.purchase.purchase.create"))`):
/// named `erp_tools.erp_call` with `otel.name = "{system} {operation}"`,
/// `otel.kind = "client"`, `erp_tools.erp.system` and `erp_tools.erp.operation`. On a
/// failure, mark it with [`record_error`] (`record_error(&span, "timeout", "timeout")`):
/// `error.type` and the span status Error. Arguments and answers are not recorded.
pub fn erp_call(system: &str, operation: &str) -> tracing::Span {
    tracing::info_span!(
        "erp_tools.erp_call",
        otel.name = %format_args!("{system} {operation}"),
        otel.kind = "client",
        erp_tools.erp.system = %system,
        erp_tools.erp.operation = %operation,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    )
}

/// Marks `span` as ended in an error, as the OpenTelemetry conventions ask: `error.type`
/// (a low-cardinality class of the error: `tool_error`, a JSON-RPC code such as
/// `-32602`, an HTTP status such as `503`, `timeout`) and the span status Error
/// (`otel.status_code`), described by `description`: a short reason of your own, never
/// a message that could echo argument values or answers.
///
/// The span must declare the three fields (`error.type`, `otel.status_code`,
/// `otel.status_description`, as `tracing::field::Empty`), as erp-tools' own spans and
/// [`erp_call`] do; on another span only the fields it declares are recorded.
///
/// ```
/// let span = erp_tools_core::telemetry::span::erp_call("tryton", "model.purchase.purchase.create");
/// // ... the request timed out:
/// erp_tools_core::telemetry::span::record_error(&span, "timeout", "no answer within 10 s");
/// ```
pub fn record_error(span: &tracing::Span, error_type: &str, description: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
    if !description.is_empty() {
        span.record("otel.status_description", description);
    }
}

/// Records how a call ended on its `tools/call` span: `erp_tools.outcome`, and on an
/// error `error.type`, `erp_tools.error.kind`, `rpc.response.status_code` (a protocol
/// error) and the status Error described by the kind.
pub(crate) fn record_call_end(span: &tracing::Span, end: &super::labels::CallEnd) {
    span.record("erp_tools.outcome", end.outcome);
    if let Some(failure) = end.error {
        span.record("erp_tools.error.kind", failure.kind);
        if let Some(code) = failure.rpc_code() {
            span.record("rpc.response.status_code", code);
        }
        record_error(span, failure.error_type, failure.kind);
    }
}
