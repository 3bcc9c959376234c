//! The MCP surface (`rmcp`): a server handler that filters tools per caller, streamable
//! HTTP behind bearer tokens, and stdio.
//!
//! ```no_run
//! # async fn run(runtime: erp_tools_core::ToolRuntime) -> std::io::Result<()> {
//! use erp_tools_core::auth::{DEV_ADDR, TokenConfig};
//! use erp_tools_core::mcp::{HttpConfig, router, serve_http};
//!
//! let config = HttpConfig::new(TokenConfig::development());
//! let options = config.serve_options(); // edge limits, cancellation, loopback-only check
//! serve_http(DEV_ADDR.parse().unwrap(), router(runtime, config), options).await
//! # }
//! ```
//!
//! Protocol revisions: `rmcp` negotiates 2024-11-05 through 2025-11-25 with the
//! `initialize` handshake (sessions over HTTP) and serves 2026-07-28 (`server/discover`,
//! per-request metadata, stateless HTTP).
//!
//! The guide's chapter: *Your first server* (`guide/src/first-server.md` in the repository).

pub mod apps;
mod asking;
mod caller;
mod documents;
#[cfg(feature = "mcp-http")]
mod edge;
mod handler;
#[cfg(feature = "mcp-http")]
mod http;
mod input;
mod listing;
#[cfg(feature = "mcp-http")]
mod origin;
mod progress;
#[cfg(feature = "mcp-http")]
mod rate;
mod result;
#[cfg(feature = "mcp-http")]
mod sessions;
#[cfg(feature = "mcp-stdio")]
mod stdio;
mod tasks;
mod trace;

#[cfg(feature = "mcp-http")]
pub use self::edge::{EdgeLimits, ServeOptions};
#[cfg(feature = "mcp-http")]
pub use self::http::{
    HEALTH_PATH, HttpConfig, MCP_PATH, METADATA_PATH, READY_PATH, SERVER_CARD_MEDIA_TYPE,
    SERVER_CARD_PATH, SERVER_CARD_SCHEMA, router, serve_http, serve_listener,
};
#[cfg(all(feature = "mcp-http", feature = "metrics"))]
pub use self::http::{METRICS_PATH, METRICS_SCOPE};
#[cfg(feature = "mcp-http")]
pub use self::rate::RateLimit;
pub use handler::{
    AGENT_RUN_HEADER, Authenticated, DEFAULT_INPUT_TTL, ERROR_META_KEY, ErpMcpServer,
    call_tool_result, instructions,
};
#[cfg(feature = "mcp-stdio")]
pub use stdio::{StdioError, serve_stdio};
pub use tasks::DEFAULT_TASK_TTL;
