//! The start-up recovery pass: closes the audit rows of calls whose server process was
//! stopped while they ran.
//!
//! A tool call's row is written with outcome `attempt` before its handler runs and gets
//! its outcome when the call ends. A process that is killed in between (`kill -9`, a
//! crash, a power cut) leaves the row at `attempt`. At start-up, [`recover`] finds such
//! rows and marks them `interrupted`: when the call's draft committed its document, the
//! row is linked to that document; otherwise its message says that nothing was committed.
//! A later retry of the same call replays what committed.
//!
//! What a call committed is read from the fact the call itself left, never from timing:
//! the idempotency key row that names its audit row (`erp_idempotency_keys.audit_id`),
//! written in the same transaction as the document. A retry of the same `client_ref` on
//! another replica writes a key row naming its own audit row, so whether it lands before,
//! during or after the pass, the interrupted call is never linked to the retry's document.
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
    /// Asks the audit writer to link the rows the pass closed.
    pub links: super::writer::LinkHandle,
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
        let linked = match replicas::live(&task.main, &task.replica, chrono::Utc::now()).await {
            Ok(live) => task.links.sweep(live).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = linked {
            tracing::warn!(error = %e, "could not link finished audit rows; the next pass does");
        }
        if task.backend == Backend::Postgres
            && let Err(e) = rate_buckets::prune(&task.main).await
        {
            tracing::debug!(error = %e, "could not prune the rate-limit buckets");
        }
        if task.backend == Backend::Postgres
            && let Err(e) = super::partitions::ensure_partitions(&task.main).await
        {
            tracing::warn!(error = %e, "could not create the audit log's next partition");
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
    let cutoff = match others {
        Others::Unleased(grace) | Others::All(grace) => cutoff_of(grace),
    };
    let mut rows = Vec::new();
    for open in open_calls(audit_pool).await? {
        let closes = match (&open.replica_id, others) {
            (Some(replica), _) if !live.contains(replica) => true,
            (None, _) => open.at <= cutoff,
            (Some(replica), Others::All(_)) => replica != me && open.at <= cutoff,
            (Some(_), Others::Unleased(_)) => false,
        };
        if closes && let Some(row) = open_attempt(audit_pool, open.id).await? {
            rows.push(row);
        }
    }
    let mut done = Recovered::default();
    for row in rows {
        let (message, document) = match committed_by(main, &row).await? {
            Committed::Document(document) => (DOCUMENT_COMMITTED, Some(document)),
            Committed::RemotePending => (REMOTE_PENDING, None),
            Committed::Nothing => (NOTHING_COMMITTED, None),
        };
        let closed =
            audit::close_interrupted(audit_pool, row.id, message, document.as_ref()).await?;
        if document.is_some() {
            done.linked += closed;
        } else {
            done.interrupted += closed;
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

/// The document an interrupted row is linked to: type, id, number.
type Linked = crate::tool::handles::DocumentRef;

/// What an interrupted call committed, as the call itself recorded it.
enum Committed {
    /// Its draft's document: the key row that names this call's audit row (`audit_id`),
    /// which the call wrote in the transaction that committed the document.
    Document(Linked),
    /// A remote draft's key is pending: its request may have reached the other system
    /// (the key names this call, or another call took it over after its lease ran out).
    RemotePending,
    /// Nothing: no key row names this call.
    Nothing,
}

/// Decides what the interrupted call `row` committed from the key row it wrote itself:
/// a key row is written, with the id of its call's audit row, in the transaction that
/// commits the call's document (or claims its remote draft). A key of the same run and
/// `client_ref` written by another call (a retry on another replica, whenever it ran) is
/// that call's, never this one's; when it is a remote draft's, this call may still have
/// sent its request before the key was taken over, so the row says so without a document.
async fn committed_by(keys: &AnyPool, row: &OpenAttempt) -> Result<Committed, sqlx::Error> {
    let own = sqlx::query(
        "SELECT document_type, document_id, document_text_id, document_number, remote_state \
         FROM erp_idempotency_keys WHERE audit_id = $1 AND agent_run_id = $2",
    )
    .bind(row.id)
    .bind(&row.agent_run_id)
    .fetch_optional(keys)
    .await?;
    if let Some(key) = own {
        let remote: Option<String> = key.try_get("remote_state")?;
        return Ok(match (super::document::document_of_row(&key)?, remote) {
            (Some(document), _) => Committed::Document(document),
            (None, Some(_)) => Committed::RemotePending,
            (None, None) => Committed::Nothing,
        });
    }
    let client_ref = row
        .arguments
        .as_deref()
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .and_then(|a| {
            a.get("client_ref")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let (Some(client_ref), Some(tool)) = (client_ref, row.tool_name.as_deref()) else {
        return Ok(Committed::Nothing);
    };
    let taken_over: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM erp_idempotency_keys WHERE agent_run_id = $1 AND client_ref = $2 \
         AND tool_name = $3 AND remote_state IS NOT NULL",
    )
    .bind(&row.agent_run_id)
    .bind(client_ref)
    .bind(tool)
    .fetch_optional(keys)
    .await?;
    Ok(if taken_over.is_some() {
        Committed::RemotePending
    } else {
        Committed::Nothing
    })
}

/// A tool call's row still at `attempt`, as the recovery pass reads it.
struct OpenAttempt {
    id: AuditId,
    agent_run_id: String,
    tool_name: Option<String>,
    arguments: Option<String>,
}

/// A tool call's row still at `attempt`: its id, replica and start.
struct OpenCall {
    id: AuditId,
    replica_id: Option<String>,
    at: String,
}

/// Every tool-call row still at `attempt`, oldest first: the calls running now and those
/// of stopped processes, a few rows read through the partial index
/// `erp_audit_log_attempts` alone, however large the log (on PostgreSQL one small index
/// per monthly partition). The values are written into the text so that the planner
/// matches the index's condition.
async fn open_calls(pool: &sqlx::AnyPool) -> Result<Vec<OpenCall>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT id, replica_id, at FROM erp_audit_log \
         WHERE outcome = '{ATTEMPT}' AND source = '{SOURCE_RUNTIME}' ORDER BY id"
    )))
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(OpenCall {
                id: row.try_get("id")?,
                replica_id: row.try_get("replica_id")?,
                at: row.try_get("at")?,
            })
        })
        .collect()
}

/// The row `id` if it is still at `attempt`, as the recovery pass reads it.
async fn open_attempt(
    pool: &sqlx::AnyPool,
    id: AuditId,
) -> Result<Option<OpenAttempt>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT id, agent_run_id, tool_name, arguments FROM erp_audit_log \
         WHERE id = $1 AND outcome = $2",
    )
    .bind(id)
    .bind(ATTEMPT)
    .fetch_optional(pool)
    .await?;
    row.map(|row| {
        Ok(OpenAttempt {
            id: row.try_get("id")?,
            agent_run_id: row.try_get("agent_run_id")?,
            tool_name: row.try_get("tool_name")?,
            arguments: row.try_get("arguments")?,
        })
    })
    .transpose()
}
