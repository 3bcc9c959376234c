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
//! - at start-up on SQLite (one server process owns the file) or with a grace set by
//!   hand, and when asked with
//!   [`Database::recover_interrupted`](crate::Database::recover_interrupted): every row
//!   of another replica older than the grace.

use std::time::Duration;

use serde_json::Value;
use sqlx::{AnyPool, Row};

use super::audit;
use super::{rate_buckets, replicas};
use crate::audit::time_text;
use crate::audit::{ATTEMPT, AuditId, SOURCE_RUNTIME};
use crate::tool::handles::Backend;

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

/// The message of a row closed while its remote draft's key is pending: the other system
/// may have the document (see `remote/`).
pub(crate) const REMOTE_PENDING: &str = "interrupted: the server stopped while the call was \
     writing to another system; nothing is confirmed there; the remote drafts' reconcile pass \
     or a retry with the same client_ref looks the document up by its marker";

/// What the lease task of one `Database` works with.
pub(super) struct LeaseTask {
    pub audit_pool: AnyPool,
    pub main: AnyPool,
    pub replica: std::sync::Arc<str>,
    pub lease: Duration,
    pub grace: Duration,
    pub backend: Backend,
}

/// Renews the lease of `task.replica` every third of its lease and runs the lease pass
/// (`Database::recover_dead_replicas`; on PostgreSQL also prunes the full rate-limit
/// buckets); stops when `alive` (the `Database`) is gone.
pub(super) async fn heartbeat<T>(alive: std::sync::Weak<T>, task: LeaseTask) {
    let period = (task.lease / 3).max(Duration::from_millis(50));
    loop {
        tokio::time::sleep(period).await;
        let Some(_alive) = alive.upgrade() else {
            return;
        };
        if let Err(e) = replicas::renew(&task.main, &task.replica, task.lease).await {
            tracing::warn!(error = %e, "could not renew this replica's lease");
            continue;
        }
        let others = Others::Unleased(task.grace);
        if let Err(e) = recover(&task.audit_pool, &task.main, &task.replica, others).await {
            tracing::warn!(error = %e, "the lease pass failed; it runs again");
        }
        if task.backend == Backend::Postgres
            && let Err(e) = rate_buckets::prune(&task.main).await
        {
            tracing::debug!(error = %e, "could not prune the rate-limit buckets");
        }
    }
}

/// Which rows a pass closes besides those of dead replicas (always closed).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Others {
    /// Rows written before leases (no replica) older than the grace.
    Unleased(Duration),
    /// Every row of another replica (or of none) older than the grace.
    All(Duration),
}

impl Others {
    /// At start-up: on SQLite one server process owns the file, and a grace set by hand
    /// (`DatabaseOptions::recovery_grace`) says how long a call may take, so every other
    /// replica's open row older than the grace is a stopped call's; otherwise (PostgreSQL
    /// by default) only rows written before leases are aged out.
    pub(crate) fn at_start_up(backend: Backend, grace: Duration, set_by_hand: bool) -> Others {
        match backend {
            Backend::Sqlite => Others::All(grace),
            Backend::Postgres if set_by_hand => Others::All(grace),
            Backend::Postgres => Others::Unleased(grace),
        }
    }
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
    for replica in replicas_with_attempts(audit_pool).await? {
        if !live.contains(&replica) {
            rows.extend(open_attempts_of(audit_pool, AttemptFilter::Replica(&replica)).await?);
        }
    }
    let more = match others {
        Others::Unleased(grace) => {
            let cutoff = cutoff_of(grace);
            open_attempts_of(audit_pool, AttemptFilter::Unleased { cutoff: &cutoff }).await?
        }
        Others::All(grace) => {
            let cutoff = cutoff_of(grace);
            open_attempts_of(
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
                    "SELECT document_type, document_id, document_text_id, document_number, \
                     remote_state FROM erp_idempotency_keys \
                     WHERE agent_run_id = $1 AND client_ref = $2 AND tool_name = $3 AND created_at >= $4 \
                     AND (document_id IS NOT NULL OR document_text_id IS NOT NULL \
                     OR remote_state IS NOT NULL)",
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
        let document = match &document {
            Some(row) => Some(super::document::document_of_row(row)?),
            None => None,
        };
        match document {
            Some(None) => {
                // A remote draft's key still pending: no document yet.
                done.interrupted +=
                    audit::close_interrupted(audit_pool, row.id, REMOTE_PENDING, None).await?;
            }
            Some(Some(document)) => {
                done.linked += audit::close_interrupted(
                    audit_pool,
                    row.id,
                    DOCUMENT_COMMITTED,
                    Some(&document),
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

/// A tool call's row still at `attempt`, as the recovery pass reads it.
struct OpenAttempt {
    id: AuditId,
    at: String,
    agent_run_id: String,
    tool_name: Option<String>,
    arguments: Option<String>,
}

/// Which `attempt` rows [`open_attempts_of`] returns.
enum AttemptFilter<'a> {
    /// Rows without a replica (written before leases) at or before the cutoff.
    Unleased { cutoff: &'a str },
    /// Rows of any replica but `me` (or of none) at or before the cutoff.
    NotMine { cutoff: &'a str, me: &'a str },
    /// Every row of the replica.
    Replica(&'a str),
}

/// The tool-call rows at `attempt` that `filter` selects, oldest first.
async fn open_attempts_of(
    pool: &sqlx::AnyPool,
    filter: AttemptFilter<'_>,
) -> Result<Vec<OpenAttempt>, sqlx::Error> {
    const SELECT: &str = "SELECT id, at, agent_run_id, tool_name, arguments FROM erp_audit_log \
         WHERE outcome = $1 AND source = $2";
    let query = match filter {
        AttemptFilter::Unleased { cutoff } => sqlx::query(sqlx::AssertSqlSafe(format!(
            "{SELECT} AND replica_id IS NULL AND at <= $3 ORDER BY id"
        )))
        .bind(ATTEMPT)
        .bind(SOURCE_RUNTIME)
        .bind(cutoff.to_string()),
        AttemptFilter::NotMine { cutoff, me } => sqlx::query(sqlx::AssertSqlSafe(format!(
            "{SELECT} AND (replica_id IS NULL OR replica_id <> $3) AND at <= $4 ORDER BY id"
        )))
        .bind(ATTEMPT)
        .bind(SOURCE_RUNTIME)
        .bind(me.to_string())
        .bind(cutoff.to_string()),
        AttemptFilter::Replica(replica) => sqlx::query(sqlx::AssertSqlSafe(format!(
            "{SELECT} AND replica_id = $3 ORDER BY id"
        )))
        .bind(ATTEMPT)
        .bind(SOURCE_RUNTIME)
        .bind(replica.to_string()),
    };
    let rows = query.fetch_all(pool).await?;
    rows.iter()
        .map(|row| {
            Ok(OpenAttempt {
                id: row.try_get("id")?,
                at: row.try_get("at")?,
                agent_run_id: row.try_get("agent_run_id")?,
                tool_name: row.try_get("tool_name")?,
                arguments: row.try_get("arguments")?,
            })
        })
        .collect()
}

/// The replicas that have tool-call rows at `attempt`.
async fn replicas_with_attempts(pool: &sqlx::AnyPool) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT DISTINCT replica_id FROM erp_audit_log \
         WHERE outcome = $1 AND source = $2 AND replica_id IS NOT NULL",
    )
    .bind(ATTEMPT)
    .bind(SOURCE_RUNTIME)
    .fetch_all(pool)
    .await
}
