//! MCP over stdio: one client (the process that started the server), one caller.

use std::time::{Duration, SystemTime};

use rmcp::ServiceExt;
use rmcp::service::QuitReason;

use super::handler::ErpMcpServer;
use crate::auth::Identity;
use crate::runtime::ToolRuntime;

/// Serves MCP on this process's stdin/stdout for `caller` until the client disconnects
/// or the caller's token expires,
/// then closes the database ([`Database::close`](crate::Database::close): the audit rows
/// still queued are committed before this returns).
///
/// stdio has no per-request credentials, so the caller is fixed at start-up: verify the
/// token the process was given (for example with [`crate::auth::verify_identity`] on an
/// `ERP_TOOLS_TOKEN` environment variable, or [`crate::auth::Authenticator::authenticate`])
/// and pass the resulting [`Identity`]. When its token expires, the session ends with
/// [`StdioError::TokenExpired`], whose message tells the person to restart the server
/// with a fresh token. A bare [`Principal`](crate::Principal) (trusted configuration, not
/// a token) has no expiry. Nothing else may be written to stdout while serving; log to
/// stderr.
pub async fn serve_stdio(
    runtime: ToolRuntime,
    caller: impl Into<Identity>,
) -> Result<QuitReason, StdioError> {
    let Identity {
        principal,
        expires_at,
    } = caller.into();
    if let Some(at) = expires_at
        && at <= SystemTime::now()
    {
        return Err(StdioError::TokenExpired(at));
    }
    let db = runtime.database().clone();
    let server = ErpMcpServer::with_principal(runtime, principal);
    let served = serve_until_expiry(server, expires_at).await;
    db.close().await;
    served
}

/// Serves `server` on stdio until the client disconnects or `expires_at` passes.
async fn serve_until_expiry(
    server: ErpMcpServer,
    expires_at: Option<SystemTime>,
) -> Result<QuitReason, StdioError> {
    let running = server
        .serve(rmcp::transport::io::stdio())
        .await
        .map_err(|e| StdioError::Failed(e.to_string()))?;
    let cancel = running.cancellation_token();
    let expiry = async {
        match expires_at {
            Some(at) => {
                let left = at
                    .duration_since(SystemTime::now())
                    .unwrap_or(Duration::ZERO);
                tokio::time::sleep(left).await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        quit = running.waiting() => quit.map_err(|e| StdioError::Failed(e.to_string())),
        _ = expiry => {
            let at = expires_at.expect("only a token with an expiry expires");
            tracing::error!("{}", StdioError::TokenExpired(at));
            cancel.cancel();
            Err(StdioError::TokenExpired(at))
        }
    }
}

/// The stdio session could not start, ended abnormally, or its token expired.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The MCP session failed.
    #[error("MCP over stdio failed: {0}")]
    Failed(String),
    /// The caller's token expired: the session ends, nothing more is served.
    #[error(
        "the token of this stdio server expired at {}: restart the server with a fresh token",
        humantime_utc(*.0)
    )]
    TokenExpired(SystemTime),
}

/// `YYYY-MM-DD HH:MM:SS UTC`.
fn humantime_utc(at: SystemTime) -> String {
    let dt: chrono::DateTime<chrono::Utc> = at.into();
    dt.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}
