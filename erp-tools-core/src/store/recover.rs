//! The start-up recovery pass: closes the audit rows of calls whose server process was
//! stopped while they ran.
//!
//! A tool call's row is written with outcome `attempt` before its handler runs and gets
//! its outcome when the call ends. A process that is killed in between (`kill -9`, a
//! crash, a power cut) leaves the row at `attempt`. At start-up, [`recover`] finds such
//! rows and marks them `interrupted`: when a draft's document committed (its idempotency
//! key row exists), the row is linked to that document; otherwise its message says that
//! nothing was committed. A later retry of the same call replays what committed.
//!
//! Plain SQL on `erp_audit_log` (in `store/audit.rs`) and `erp_idempotency_keys`, so it
//! works whichever code wrote the rows. Only rows older than a grace period are touched, so on a database
//! shared by several server processes the calls another process is running are left
//! alone (see [`DatabaseOptions::recovery_grace`](crate::DatabaseOptions::recovery_grace)).

use std::time::Duration;

use serde_json::Value;
use sqlx::{AnyPool, Row};

use super::audit;
use crate::audit::time_text;

/// What one recovery pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Rows closed as `interrupted` without a document (nothing had committed).
    pub interrupted: u64,
    /// Rows closed as `interrupted` and linked to the document that had committed.
    pub linked: u64,
}

/// The message of a row closed with nothing committed.
pub(crate) const NOTHING_COMMITTED: &str = "interrupted: the server stopped while the call ran; \
     nothing was committed, a retry runs the call again";

/// The message of a row closed after its draft committed.
pub(crate) const DOCUMENT_COMMITTED: &str = "interrupted: the server stopped after the draft \
     committed; a retry with the same client_ref replays it";

/// Closes every `attempt` row of a tool call older than `grace`. `audit` writes the audit
/// log (on SQLite its own file), `keys` reads the idempotency keys (the main database).
pub(crate) async fn recover(
    audit_pool: &AnyPool,
    keys: &AnyPool,
    grace: Duration,
) -> Result<Recovered, sqlx::Error> {
    let cutoff = chrono::Utc::now()
        - chrono::Duration::from_std(grace).unwrap_or_else(|_| chrono::Duration::days(3650));
    let cutoff = time_text(cutoff);
    let mut done = Recovered::default();
    for row in audit::attempts_until(audit_pool, &cutoff).await? {
        let client_ref = row
            .arguments
            .as_deref()
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .and_then(|a| {
                a.get("client_ref")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let document = match (client_ref, row.tool_name.as_deref()) {
            (Some(client_ref), Some(tool)) => {
                sqlx::query(
                    "SELECT document_type, document_id, document_number FROM erp_idempotency_keys \
                     WHERE agent_run_id = $1 AND client_ref = $2 AND tool_name = $3 AND created_at >= $4 \
                     AND document_id IS NOT NULL",
                )
                .bind(&row.agent_run_id)
                .bind(&client_ref)
                .bind(tool)
                .bind(&row.at)
                .fetch_optional(keys)
                .await?
            }
            _ => None,
        };
        match document {
            Some(doc) => {
                let document = (
                    doc.try_get("document_type")?,
                    doc.try_get("document_id")?,
                    doc.try_get("document_number")?,
                );
                done.linked += audit::close_interrupted(
                    audit_pool,
                    row.id,
                    DOCUMENT_COMMITTED,
                    Some(document),
                )
                .await?;
            }
            None => {
                done.interrupted +=
                    audit::close_interrupted(audit_pool, row.id, NOTHING_COMMITTED, None).await?;
            }
        }
    }
    if done != Recovered::default() {
        tracing::warn!(
            interrupted = done.interrupted,
            linked = done.linked,
            "closed the audit rows of calls interrupted by a stopped server"
        );
    }
    Ok(done)
}
