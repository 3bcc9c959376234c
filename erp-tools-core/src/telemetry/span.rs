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
/// `otel.kind = "client"`, `erp_tools.erp.system` and `erp_tools.erp.operation`, plus
/// `error.type`, empty until the caller records it on a failure
/// (`span.record("error.type", "timeout")`). Arguments and answers are not recorded.
pub fn erp_call(system: &str, operation: &str) -> tracing::Span {
    tracing::info_span!(
        "erp_tools.erp_call",
        otel.name = %format_args!("{system} {operation}"),
        otel.kind = "client",
        erp_tools.erp.system = %system,
        erp_tools.erp.operation = %operation,
        error.type = tracing::field::Empty,
    )
}
