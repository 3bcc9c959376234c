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
//! works whichever code wrote the rows. Which rows it closes:
//!
//! - the rows of a replica whose lease expired or is gone (`store/replicas.rs`): every
//!   live replica runs this part every third of a lease, so a dead replica's calls are
//!   closed within about a lease and a third (20 s by default); a live replica's rows are
//!   never touched;
//! - rows written before leases (no replica) older than a grace period (see
//!   [`DatabaseOptions::recovery_grace`](crate::DatabaseOptions::recovery_grace));
//! - at start-up on SQLite (one server process owns the file) and when asked with
//!   [`Database::recover_interrupted`](crate::Database::recover_interrupted): every row
//!   of another replica older than the grace.

use std::time::Duration;

use serde_json::Value;
use sqlx::{AnyPool, Row};

use super::audit::{self, AttemptFilter};
use super::replicas;
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

/// Which rows a pass closes besides those of dead replicas (always closed).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Others {
    /// Rows written before leases (no replica) older than the grace.
    Unleased(Duration),
    /// Every row of another replica (or of none) older than the grace.
    All(Duration),
}

/// Closes the `attempt` rows of tool calls that `me` finds interrupted (see the module
/// doc). `audit_pool` writes the audit log (on SQLite its own file), `main` reads the
/// idempotency keys and the leases and removes the lease rows of the dead replicas whose
/// rows it closed.
pub(crate) async fn recover(
    audit_pool: &AnyPool,
    main: &AnyPool,
    me: &str,
    others: Others,
) -> Result<Recovered, sqlx::Error> {
    let now = chrono::Utc::now();
    let cutoff_of = |grace: Duration| {
        time_text(
            now - chrono::Duration::from_std(grace)
                .unwrap_or_else(|_| chrono::Duration::days(3650)),
        )
    };
    // Dead: a replica with open rows that has no live lease (expired, or released).
    let live = replicas::live(main, me, now).await?;
    let mut rows = Vec::new();
    for replica in audit::replicas_with_attempts(audit_pool).await? {
        if !live.contains(&replica) {
            rows.extend(
                audit::open_attempts_of(audit_pool, AttemptFilter::Replica(&replica)).await?,
            );
        }
    }
    let more = match others {
        Others::Unleased(grace) => {
            let cutoff = cutoff_of(grace);
            audit::open_attempts_of(audit_pool, AttemptFilter::Unleased { cutoff: &cutoff }).await?
        }
        Others::All(grace) => {
            let cutoff = cutoff_of(grace);
            audit::open_attempts_of(
                audit_pool,
                AttemptFilter::NotMine {
                    cutoff: &cutoff,
                    me,
                },
            )
            .await?
        }
    };
    let mut seen = std::collections::HashSet::new();
    rows.extend(more);
    rows.retain(|r| seen.insert(r.id));
    let keys = main;
    let mut done = Recovered::default();
    for row in rows {
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
    replicas::forget_expired(main, me, now).await?;
    if done != Recovered::default() {
        tracing::warn!(
            interrupted = done.interrupted,
            linked = done.linked,
            "closed the audit rows of calls interrupted by a stopped server"
        );
    }
    Ok(done)
}
