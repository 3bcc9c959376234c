//! The protocol's side of a call for its span ([`CallTrace`]): read from the MCP request
//! and, over HTTP, from the request's headers.

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::RequestContext;

use crate::telemetry::CallTrace;

/// The protocol's side of a call for its span: the JSON-RPC id, the protocol revision,
/// the session, and the caller's `traceparent` from `_meta` (SEP-414).
pub(super) fn call_trace(
    context: &RequestContext<RoleServer>,
    request: &CallToolRequestParams,
) -> CallTrace {
    let session_id = context
        .extensions
        .get::<::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let traceparent = request
        .meta
        .as_ref()
        .and_then(|m| m.get_traceparent())
        .or_else(|| context.meta.get_traceparent())
        .map(str::to_string);
    CallTrace {
        jsonrpc_id: Some(request_id_string(&context.id)),
        protocol_version: context.protocol_version().map(|v| v.to_string()),
        session_id,
        traceparent,
    }
}

/// A JSON-RPC request id as text (the call's tool call id and `jsonrpc.request.id`).
pub(super) fn request_id_string(id: &NumberOrString) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}
