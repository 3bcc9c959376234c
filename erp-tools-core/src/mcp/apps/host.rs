//! Whether the host of a request declared the MCP Apps extension.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::cards::{CARD_MIME, EXTENSION_ID};

/// `true` when the request's client capabilities (2026-07-28 `_meta`, or the
/// `initialize` of a 2025-11-25 session) list `io.modelcontextprotocol/ui` with the
/// card MIME type (or with no settings).
pub(crate) fn host_supports_apps(context: &RequestContext<RoleServer>) -> bool {
    let Some(capabilities) = context.client_capabilities() else {
        return false;
    };
    let Some(settings) = capabilities
        .extensions
        .as_ref()
        .and_then(|e| e.get(EXTENSION_ID))
    else {
        return false;
    };
    match settings.get("mimeTypes").and_then(|m| m.as_array()) {
        None => true,
        Some(types) => types.iter().any(|t| t == CARD_MIME),
    }
}
