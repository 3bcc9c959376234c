//! [`log_to_stderr`]: the framework's log, for a server without a subscriber of its own.

/// Sends the framework's log (and the application's `tracing` events) to stderr, filtered
/// by `RUST_LOG` (default `info,rmcp=warn`: rmcp's dump of every session's client
/// information stays out unless asked for). Without a `tracing` subscriber nothing is shown: not
/// the warning about the development signing key, not the detail of an internal error
/// (which the model is never told). stdout stays free for the MCP stdio transport.
///
/// Returns `false`, and changes nothing, if a global subscriber is already installed;
/// applications with their own (`tracing-subscriber`, OpenTelemetry) skip this.
///
/// ```
/// erp_tools_core::log_to_stderr();
/// tracing::info!("shown on stderr");
/// assert!(!erp_tools_core::log_to_stderr(), "installed once");
/// ```
pub fn log_to_stderr() -> bool {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(filter)
        .try_init()
        .is_ok()
}
