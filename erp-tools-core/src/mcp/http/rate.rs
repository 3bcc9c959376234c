//! The POST gate: reads the whole body within the edge limits, and refuses a
//! `tools/call` over the caller's rate limit before it reaches the MCP layer.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;

use super::errors::{body_too_large, body_too_slow, too_many_calls};
use super::state::GuardState;
use crate::mcp::edge::EdgeLimits;
use crate::mcp::rate::is_tool_call;
use crate::tool::context::Principal;

/// `request` with its body read, or the refusal: the body too large or too slow, or a
/// tool call from `principal` over the rate limit.
pub(super) async fn gate_post(
    state: &GuardState,
    principal: &Principal,
    request: Request,
) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let bytes = read_body(body, &state.limits).await?;
    if let Some(calls) = &state.calls
        && is_tool_call(&bytes)
        && let Err(wait) = calls.check(principal).await
    {
        crate::telemetry::record::rate_limited();
        // On the request's span (`POST /mcp`): no call span is opened for it.
        if let Some(edge) = parts.extensions.get::<crate::telemetry::EdgeSpan>() {
            edge.0.record("erp_tools.outcome", "rate_limited");
        }
        return Err(too_many_calls(wait));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// The whole body of a POST, within the body timeout and size limit.
async fn read_body(body: Body, limits: &EdgeLimits) -> Result<Bytes, Response> {
    let read = axum::body::to_bytes(body, limits.max_body_bytes);
    match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(body_too_large(limits.max_body_bytes)),
        Err(_) => Err(body_too_slow(limits.body_timeout)),
    }
}
