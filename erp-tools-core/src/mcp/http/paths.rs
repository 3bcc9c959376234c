//! The paths the HTTP router serves.

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Path of the RFC 9728 protected-resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Path of the Server Card: the MCP URL and `/server-card`.
pub const SERVER_CARD_PATH: &str = "/mcp/server-card";
