//! The SQL of tool calls run as MCP tasks (`erp_tasks`), shared by every replica of one
//! database: the row is the task, so whichever replica a client reaches reads, answers
//! and cancels the same task, and a restart forgets none.
//!
//! Every change of state is one conditional `UPDATE` (on the status it expects and, for
//! the replica running the task, on its id), so two replicas racing (a cancel against
//! the result, a dead replica's task failed while it comes back) leave exactly one
//! outcome.

use sqlx::{AnyPool, Row};

use crate::audit::{AuditEntry, now_text};
use crate::store::{Database, StoreError};

/// `working`: a replica runs the call.
pub(crate) const WORKING: &str = "working";
/// `input_required`: the call asked a question; no replica runs it until it is answered.
pub(crate) const INPUT_REQUIRED: &str = "input_required";
/// `completed`: the call ended (its result may be a tool error).
pub(crate) const COMPLETED: &str = "completed";
/// `failed`: the call could not end (the server failed, or the replica running it died).
pub(crate) const FAILED: &str = "failed";
/// `cancelled`: the caller cancelled it.
pub(crate) const CANCELLED: &str = "cancelled";

/// A task as stored.
#[derive(Clone, Debug)]
pub(crate) struct TaskRow {
    pub id: String,
    pub user_id: String,
    pub branch_id: i64,
    pub agent_run_id: String,
    pub tool_name: String,
    /// JSON text.
    pub arguments: String,
    pub status: String,
    pub status_message: Option<String>,
    /// JSON text of the question asked (`input_required`).
    pub question: Option<String>,
    /// JSON text of the MCP `inputRequests` (`input_required`).
    pub input_requests: Option<String>,
    /// JSON text of the answers given so far.
    pub answers: String,
    /// JSON text of the `CallToolResult` (`completed`).
    pub result: Option<String>,
    /// JSON text of the JSON-RPC error object (`failed`).
    pub error: Option<String>,
    pub replica_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub ttl_ms: i64,
}

/// A task to insert, `working` on `replica_id`.
pub(crate) struct NewTask<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub branch_id: i64,
    pub agent_run_id: &'a str,
    pub tool_name: &'a str,
    pub arguments: &'a str,
    pub answers: &'a str,
    pub replica_id: &'a str,
    pub ttl_ms: i64,
}

const COLUMNS: &str = "id, user_id, branch_id, agent_run_id, tool_name, arguments, status, \
     status_message, question, input_requests, answers, result, error, replica_id, \
     created_at, updated_at, ttl_ms";

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Inserts `task` (created now), after deleting the tasks expired at `now_ms`. Returns
/// the creation time as stored.
pub(crate) async fn insert(pool: &AnyPool, task: &NewTask<'_>) -> Result<String, StoreError> {
    let now = now_ms();
    delete_expired(pool, now).await?;
    let created = now_text();
    sqlx::query(
        "INSERT INTO erp_tasks (id, user_id, branch_id, agent_run_id, tool_name, arguments, \
         status, answers, replica_id, created_at, updated_at, ttl_ms, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(task.id.to_string())
    .bind(task.user_id.to_string())
    .bind(task.branch_id)
    .bind(task.agent_run_id.to_string())
    .bind(task.tool_name.to_string())
    .bind(task.arguments.to_string())
    .bind(WORKING)
    .bind(task.answers.to_string())
    .bind(task.replica_id.to_string())
    .bind(created.clone())
    .bind(created.clone())
    .bind(task.ttl_ms)
    .bind(now.saturating_add(task.ttl_ms))
    .execute(pool)
    .await?;
    Ok(created)
}

/// Deletes the tasks whose time to live had passed at `now_ms`; returns how many.
pub(crate) async fn delete_expired(pool: &AnyPool, now_ms: i64) -> Result<u64, StoreError> {
    let done = sqlx::query("DELETE FROM erp_tasks WHERE expires_at <= $1")
        .bind(now_ms)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

/// The task `id`, if it exists and has not expired.
pub(crate) async fn get(pool: &AnyPool, id: &str) -> Result<Option<TaskRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM erp_tasks WHERE id = $1 AND expires_at > $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_string())
        .bind(now_ms())
        .fetch_optional(pool)
        .await?;
    row.map(|row| task_row(&row)).transpose()
}

fn task_row(row: &sqlx::any::AnyRow) -> Result<TaskRow, StoreError> {
    Ok(TaskRow {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        agent_run_id: row.try_get("agent_run_id")?,
        tool_name: row.try_get("tool_name")?,
        arguments: row.try_get("arguments")?,
        status: row.try_get("status")?,
        status_message: row.try_get("status_message")?,
        question: row.try_get("question")?,
        input_requests: row.try_get("input_requests")?,
        answers: row.try_get("answers")?,
        result: row.try_get("result")?,
        error: row.try_get("error")?,
        replica_id: row.try_get("replica_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        ttl_ms: row.try_get("ttl_ms")?,
    })
}

/// The status of task `id` (`None` once deleted).
pub(crate) async fn status(pool: &AnyPool, id: &str) -> Result<Option<String>, StoreError> {
    let row: Option<(String,)> = sqlx::query_as("SELECT status FROM erp_tasks WHERE id = $1")
        .bind(id.to_string())
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|(s,)| s))
}

/// Records the latest progress of a task `replica` runs; `false` when it no longer does.
pub(crate) async fn progress(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    message: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE erp_tasks SET status_message = $1, updated_at = $2 \
         WHERE id = $3 AND status = $4 AND replica_id = $5",
    )
    .bind(message.to_string())
    .bind(now_text())
    .bind(id.to_string())
    .bind(WORKING)
    .bind(replica.to_string())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends a task `replica` runs as `status` (`completed` with `result`, or `failed` with
/// `error`); `false` when it was cancelled or taken from the replica first.
pub(crate) async fn finish(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    status: &str,
    result: Option<&str>,
    error: Option<&str>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE erp_tasks SET status = $1, result = $2, error = $3, replica_id = NULL, \
         status_message = NULL, updated_at = $4 \
         WHERE id = $5 AND status = $6 AND replica_id = $7",
    )
    .bind(status.to_string())
    .bind(result.map(str::to_string))
    .bind(error.map(str::to_string))
    .bind(now_text())
    .bind(id.to_string())
    .bind(WORKING)
    .bind(replica.to_string())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Parks a task `replica` runs on a question: `input_required`, run by no replica.
pub(crate) async fn ask(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    question: &str,
    input_requests: &str,
    message: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE erp_tasks SET status = $1, question = $2, input_requests = $3, \
         status_message = $4, replica_id = NULL, updated_at = $5 \
         WHERE id = $6 AND status = $7 AND replica_id = $8",
    )
    .bind(INPUT_REQUIRED)
    .bind(question.to_string())
    .bind(input_requests.to_string())
    .bind(message.to_string())
    .bind(now_text())
    .bind(id.to_string())
    .bind(WORKING)
    .bind(replica.to_string())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Takes an answered task (`input_required`) to run it again on `replica` with
/// `answers`; `false` when another request took it first or it is no longer waiting.
pub(crate) async fn resume(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    answers: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE erp_tasks SET status = $1, answers = $2, question = NULL, \
         input_requests = NULL, status_message = NULL, replica_id = $3, updated_at = $4 \
         WHERE id = $5 AND status = $6",
    )
    .bind(WORKING)
    .bind(answers.to_string())
    .bind(replica.to_string())
    .bind(now_text())
    .bind(id.to_string())
    .bind(INPUT_REQUIRED)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Cancels task `id` if it has not ended; `false` when it had (cancelling is idempotent).
/// The replica running it sees the status and cancels the handler.
pub(crate) async fn cancel(pool: &AnyPool, id: &str) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE erp_tasks SET status = $1, question = NULL, input_requests = NULL, \
         status_message = NULL, updated_at = $2 WHERE id = $3 AND status IN ($4, $5)",
    )
    .bind(CANCELLED)
    .bind(now_text())
    .bind(id.to_string())
    .bind(WORKING)
    .bind(INPUT_REQUIRED)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Fails a task left `working` by the replica `dead` with `error`; `false` when it ended
/// or moved meanwhile.
pub(crate) async fn fail_orphan(
    pool: &AnyPool,
    id: &str,
    dead: &str,
    error: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE erp_tasks SET status = $1, error = $2, replica_id = NULL, \
         status_message = NULL, updated_at = $3 WHERE id = $4 AND status = $5 AND replica_id = $6",
    )
    .bind(FAILED)
    .bind(error.to_string())
    .bind(now_text())
    .bind(id.to_string())
    .bind(WORKING)
    .bind(dead.to_string())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether the replica `id` holds a live lease at `now` (its row exists and was renewed
/// within its lease).
pub(crate) async fn replica_live(
    pool: &AnyPool,
    id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, StoreError> {
    let row: Option<(String, i64)> =
        sqlx::query_as("SELECT heartbeat_at, lease_ms FROM erp_replicas WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?;
    Ok(row.is_some_and(|(heartbeat, lease_ms)| {
        chrono::DateTime::parse_from_rfc3339(&heartbeat).is_ok_and(|t| {
            t.with_timezone(&chrono::Utc) + chrono::Duration::milliseconds(lease_ms) >= now
        })
    }))
}

impl Database {
    /// Writes one finished audit row about a task (`task_created`, `task_completed`,
    /// `task_failed`, `task_cancelled`), written by the call pipeline's side of the log.
    pub(crate) async fn record_task_event(&self, entry: AuditEntry) -> Result<(), StoreError> {
        let row = super::audit_row::NewRow::finished(entry, crate::audit::SOURCE_RUNTIME);
        self.inner.audit.insert_finished(row).await?;
        Ok(())
    }
}
