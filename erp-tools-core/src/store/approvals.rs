//! The SQL of durable approvals (`erp_approvals`): a pending action stored when a run
//! pauses, decided once by a conditional update, marked when a run resumes from it.

use sqlx::Row;

use super::outbox::{self, NewNotification};
use crate::agent::stored::{ApprovalStatus, StoredApproval};

const COLUMNS: &str = "id, agent_run_id, tool_call_id, tool_name, arguments, action_signature, \
     reason, limits, user_id, branch_id, branch_code, status, created_at, expires_at, decided_by, \
     decided_at, decision_note, resumed_at, resume_count, resume_status, preview";

/// A pending action to store.
pub(crate) struct NewApproval<'a> {
    pub run_id: &'a str,
    pub call_id: &'a str,
    pub tool: &'a str,
    pub arguments: String,
    pub signature: &'a str,
    pub digest: String,
    pub reason: &'a str,
    pub limits: Option<String>,
    pub user_id: &'a str,
    pub branch_id: i64,
    pub branch_code: &'a str,
    pub paused_run: String,
    /// The preview as JSON, and its digest.
    pub preview: Option<(String, String)>,
    pub created_at: String,
    pub expires_at: String,
}

/// Stores `new` as pending, unless the same action of the same call in the same run is
/// stored already (a run resumed twice pauses at the same place twice). Returns the id.
/// `notify` makes, from the id, the notification written in the same transaction (once
/// per delivery id).
pub(crate) async fn insert(
    pool: &sqlx::AnyPool,
    new: NewApproval<'_>,
    notify: Option<&(dyn Fn(i64) -> NewNotification + Send + Sync)>,
) -> Result<i64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO erp_approvals (agent_run_id, tool_call_id, tool_name, arguments, \
         action_signature, action_digest, reason, limits, user_id, branch_id, branch_code, \
         paused_run, status, created_at, expires_at, preview, preview_digest) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13, $14, $15, \
         $16) \
         ON CONFLICT (agent_run_id, tool_call_id, action_digest) DO NOTHING",
    )
    .bind(new.run_id.to_string())
    .bind(new.call_id.to_string())
    .bind(new.tool.to_string())
    .bind(new.arguments)
    .bind(new.signature.to_string())
    .bind(new.digest.clone())
    .bind(new.reason.to_string())
    .bind(new.limits)
    .bind(new.user_id.to_string())
    .bind(new.branch_id)
    .bind(new.branch_code.to_string())
    .bind(new.paused_run)
    .bind(new.created_at)
    .bind(new.expires_at)
    .bind(new.preview.as_ref().map(|p| p.0.clone()))
    .bind(new.preview.map(|p| p.1))
    .execute(&mut *tx)
    .await?;
    let id: i64 = sqlx::query_scalar(
        "SELECT id FROM erp_approvals WHERE agent_run_id = $1 AND tool_call_id = $2 \
         AND action_digest = $3",
    )
    .bind(new.run_id.to_string())
    .bind(new.call_id.to_string())
    .bind(new.digest)
    .fetch_one(&mut *tx)
    .await?;
    if let Some(notify) = notify {
        outbox::insert(&mut *tx, notify(id)).await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// Pending approvals that expired at `now` and whose expiry was not announced yet (no
/// `approval-<id>-expired` notification), oldest first.
pub(crate) async fn expired_unannounced(
    pool: &sqlx::AnyPool,
    now: &str,
    limit: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT a.id FROM erp_approvals a WHERE a.status = 'pending' AND a.expires_at <= $1 \
         AND NOT EXISTS (SELECT 1 FROM erp_outbox o \
         WHERE o.delivery_id = 'approval-' || a.id || '-expired') ORDER BY a.id LIMIT $2",
    )
    .bind(now.to_string())
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// One stored approval.
pub(crate) async fn get(
    pool: &sqlx::AnyPool,
    id: i64,
) -> Result<Option<StoredApproval>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM erp_approvals WHERE id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// The paused run stored with approval `id`, as JSON text.
pub(crate) async fn paused_run(
    pool: &sqlx::AnyPool,
    id: i64,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT paused_run FROM erp_approvals WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// Which rows [`list`] returns.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Which {
    /// Pending and not expired at the given time.
    Open,
    /// Decided, or expired undecided.
    Closed,
}

/// Approvals of `branch_id` (optionally of one run), newest first.
pub(crate) async fn list(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    run_id: Option<&str>,
    which: Which,
    now: &str,
    limit: i64,
) -> Result<Vec<StoredApproval>, sqlx::Error> {
    let status = match which {
        Which::Open => "status = 'pending' AND expires_at > $2",
        Which::Closed => "(status <> 'pending' OR expires_at <= $2)",
    };
    let run = if run_id.is_some() {
        " AND agent_run_id = $3"
    } else {
        ""
    };
    // The limit written into the text (bound, SQLite would prepare the statement again at
    // every run).
    let sql = format!(
        "SELECT {COLUMNS} FROM erp_approvals WHERE branch_id = $1 AND {status}{run} \
         ORDER BY id DESC LIMIT {}",
        limit.max(0)
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(now.to_string());
    if let Some(run) = run_id {
        q = q.bind(run.to_string());
    }
    q.fetch_all(pool).await?.iter().map(from_row).collect()
}

/// Decides a pending, unexpired approval: `true` if this update won, `false` if the row
/// was no longer pending (someone else decided first) or had expired at `at`.
pub(crate) async fn decide(
    pool: &sqlx::AnyPool,
    id: i64,
    status: ApprovalStatus,
    by: &str,
    at: &str,
    note: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE erp_approvals SET status = $1, decided_by = $2, decided_at = $3, \
         decision_note = $4 WHERE id = $5 AND status = 'pending' AND expires_at > $3",
    )
    .bind(status.as_str())
    .bind(by.to_string())
    .bind(at.to_string())
    .bind(note.map(str::to_string))
    .bind(id)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Approved actions never acted on whose run (logged in the same database) still waits
/// for approval: their process died between the decision and the resume. Oldest first, at
/// most `limit`.
pub(crate) async fn approved_unresumed(
    pool: &sqlx::AnyPool,
    limit: i64,
) -> Result<Vec<StoredApproval>, sqlx::Error> {
    let columns = COLUMNS
        .split(", ")
        .map(|c| format!("a.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT {columns} FROM erp_approvals a JOIN erp_run_log r \
         ON r.agent_run_id = a.agent_run_id AND r.status = 'awaiting_approval' \
         WHERE a.status = 'approved' AND a.resume_status IS NULL ORDER BY a.id LIMIT $1"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.iter().map(from_row).collect()
}

/// Records that a run resumed from approval `id` and how it ended.
pub(crate) async fn mark_resumed(
    pool: &sqlx::AnyPool,
    id: i64,
    at: &str,
    ended: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE erp_approvals SET resumed_at = COALESCE(resumed_at, $1), \
         resume_count = resume_count + 1, resume_status = $2 WHERE id = $3",
    )
    .bind(at.to_string())
    .bind(ended.to_string())
    .bind(id)
    .execute(pool)
    .await?;
    Ok(())
}

fn from_row(row: &sqlx::any::AnyRow) -> Result<StoredApproval, sqlx::Error> {
    let arguments: String = row.try_get("arguments")?;
    let status: String = row.try_get("status")?;
    let preview: Option<String> = row.try_get("preview")?;
    let preview = preview
        .map(|p| serde_json::from_str(&p))
        .transpose()
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(StoredApproval {
        id: row.try_get("id")?,
        run_id: row.try_get("agent_run_id")?,
        call_id: row.try_get("tool_call_id")?,
        tool: row.try_get("tool_name")?,
        arguments: serde_json::from_str(&arguments)
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        signature: row.try_get("action_signature")?,
        reason: row.try_get("reason")?,
        limits: row.try_get("limits")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        branch_code: row.try_get("branch_code")?,
        status: ApprovalStatus::parse(&status).ok_or_else(|| {
            sqlx::Error::Protocol(format!("erp_approvals: unknown status `{status}`"))
        })?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        decided_by: row.try_get("decided_by")?,
        decided_at: row.try_get("decided_at")?,
        note: row.try_get("decision_note")?,
        resumed_at: row.try_get("resumed_at")?,
        resume_count: row.try_get("resume_count")?,
        resume_status: row.try_get("resume_status")?,
        preview,
    })
}
