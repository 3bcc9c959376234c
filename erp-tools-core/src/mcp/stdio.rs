//! MCP over stdio: one client (the process that started the server), one caller.

use rmcp::ServiceExt;
use rmcp::service::QuitReason;

use super::handler::ErpMcpServer;
use crate::runtime::ToolRuntime;
use crate::tool::context::Principal;

/// Serves MCP on this process's stdin/stdout for `principal` until the client
/// disconnects, then closes the database ([`Database::close`](crate::Database::close):
/// the audit rows still queued are committed before this returns).
///
/// stdio has no per-request credentials, so the caller is fixed at start-up: verify the
/// token the process was given (for example with [`crate::auth::verify`] on an
/// `ERP_TOOLS_TOKEN` environment variable) and pass the resulting principal. Nothing
/// else may be written to stdout while serving; log to stderr.
pub async fn serve_stdio(
    runtime: ToolRuntime,
    principal: Principal,
) -> Result<QuitReason, StdioError> {
    let db = runtime.database().clone();
    let server = ErpMcpServer::with_principal(runtime, principal);
    let served = async {
        let running = server
            .serve(rmcp::transport::io::stdio())
            .await
            .map_err(|e| StdioError(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| StdioError(e.to_string()))
    }
    .await;
    db.close().await;
    served
}

/// The stdio session could not start or ended abnormally.
#[derive(Debug, thiserror::Error)]
#[error("MCP over stdio failed: {0}")]
pub struct StdioError(String);
