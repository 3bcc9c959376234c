//! The SQL of tool calls run as MCP tasks (`erp_tasks`), shared by every replica of one
//! database: the row is the task, so whichever replica a client reaches reads, answers
//! and cancels the same task, and a restart forgets none.
//!
//! Every change of state is one conditional `UPDATE` (`transition`: on the status it
//! expects and, for the replica running the task, on its id), so two replicas racing (a
//! cancel against the result, two replicas taking over one dead replica's task, a dead
//! replica's task taken over while it comes back) leave exactly one outcome.

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
    /// JSON text of the principal who started it (`None` for a task stored before
    /// principals were kept).
    pub principal: Option<String>,
    /// The replica that took it over last, and when.
    pub taken_over_by: Option<String>,
    pub taken_over_at: Option<String>,
    /// How many times it was taken over.
    pub takeovers: i64,
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
    /// JSON text of the principal (see `TaskRow::principal`).
    pub principal: &'a str,
}

const COLUMNS: &str = "id, user_id, branch_id, agent_run_id, tool_name, arguments, status, \
     status_message, question, input_requests, answers, result, error, replica_id, \
     created_at, updated_at, ttl_ms, principal, taken_over_by, taken_over_at, takeovers";

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
         status, answers, replica_id, created_at, updated_at, ttl_ms, expires_at, principal) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
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
    .bind(task.principal.to_string())
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
        principal: row.try_get("principal")?,
        taken_over_by: row.try_get("taken_over_by")?,
        taken_over_at: row.try_get("taken_over_at")?,
        takeovers: row.try_get("takeovers")?,
    })
}

/// The status of task `id` and the replica holding it (`None` once deleted).
pub(crate) async fn holder(
    pool: &AnyPool,
    id: &str,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    let row: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT status, replica_id FROM erp_tasks WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?;
    Ok(row)
}

/// A value a transition writes: text (or `NULL`), or a SQL expression of the row itself.
#[derive(Clone, Copy)]
enum Set<'a> {
    Text(Option<&'a str>),
    Sql(&'static str),
}

/// Which replica a transition expects to hold the task.
#[derive(Clone, Copy)]
enum Holder<'a> {
    /// Any (or none).
    Any,
    /// This one.
    Is(&'a str),
    /// This one, or none when the name is empty (a task whose lease was released).
    WasOrNone(&'a str),
}

/// One change of state: sets `columns` (and `updated_at`) on task `id` if its status is
/// one of `from` and `holder` holds it. `true` when it did (exactly one row changed).
async fn transition(
    pool: &AnyPool,
    id: &str,
    columns: &[(&str, Set<'_>)],
    from: &[&str],
    holder: Holder<'_>,
) -> Result<bool, StoreError> {
    let mut sql = String::from("UPDATE erp_tasks SET ");
    let mut n = 0;
    let mut binds: Vec<Option<&str>> = Vec::new();
    for (column, value) in columns {
        match value {
            Set::Text(text) => {
                n += 1;
                sql.push_str(&format!("{column} = ${n}, "));
                binds.push(*text);
            }
            Set::Sql(expr) => sql.push_str(&format!("{column} = {expr}, ")),
        }
    }
    let now = now_text();
    binds.push(Some(now.as_str()));
    binds.push(Some(id));
    sql.push_str(&format!("updated_at = ${} WHERE id = ${}", n + 1, n + 2));
    n += 2;
    let statuses: Vec<String> = from
        .iter()
        .map(|status| {
            n += 1;
            binds.push(Some(*status));
            format!("${n}")
        })
        .collect();
    sql.push_str(&format!(" AND status IN ({})", statuses.join(", ")));
    match holder {
        Holder::Any => {}
        Holder::Is(replica) => {
            binds.push(Some(replica));
            sql.push_str(&format!(" AND replica_id = ${}", n + 1));
        }
        Holder::WasOrNone(replica) => {
            binds.push(Some(replica));
            sql.push_str(&format!(" AND COALESCE(replica_id, '') = ${}", n + 1));
        }
    }
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for bind in binds {
        query = query.bind(bind.map(str::to_string));
    }
    Ok(query.execute(pool).await?.rows_affected() == 1)
}

/// Records the latest progress of a task `replica` runs; `false` when it no longer does.
pub(crate) async fn progress(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    message: &str,
) -> Result<bool, StoreError> {
    let columns = [("status_message", Set::Text(Some(message)))];
    transition(pool, id, &columns, &[WORKING], Holder::Is(replica)).await
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
    let columns = [
        ("status", Set::Text(Some(status))),
        ("result", Set::Text(result)),
        ("error", Set::Text(error)),
        ("replica_id", Set::Text(None)),
        ("status_message", Set::Text(None)),
    ];
    transition(pool, id, &columns, &[WORKING], Holder::Is(replica)).await
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
    let columns = [
        ("status", Set::Text(Some(INPUT_REQUIRED))),
        ("question", Set::Text(Some(question))),
        ("input_requests", Set::Text(Some(input_requests))),
        ("status_message", Set::Text(Some(message))),
        ("replica_id", Set::Text(None)),
    ];
    transition(pool, id, &columns, &[WORKING], Holder::Is(replica)).await
}

/// Takes an answered task (`input_required`) to run it again on `replica` with
/// `answers`; `false` when another request took it first or it is no longer waiting.
pub(crate) async fn resume(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    answers: &str,
) -> Result<bool, StoreError> {
    let columns = [
        ("status", Set::Text(Some(WORKING))),
        ("answers", Set::Text(Some(answers))),
        ("question", Set::Text(None)),
        ("input_requests", Set::Text(None)),
        ("status_message", Set::Text(None)),
        ("replica_id", Set::Text(Some(replica))),
    ];
    transition(pool, id, &columns, &[INPUT_REQUIRED], Holder::Any).await
}

/// Cancels task `id` if it has not ended; `false` when it had (cancelling is idempotent).
/// The replica running it sees the status and cancels the handler.
pub(crate) async fn cancel(pool: &AnyPool, id: &str) -> Result<bool, StoreError> {
    let columns = [
        ("status", Set::Text(Some(CANCELLED))),
        ("question", Set::Text(None)),
        ("input_requests", Set::Text(None)),
        ("status_message", Set::Text(None)),
    ];
    transition(pool, id, &columns, &[WORKING, INPUT_REQUIRED], Holder::Any).await
}

/// Fails a task left `working` by the replica `dead` (`""`: released by a drain) with
/// `error`; `false` when it ended or moved meanwhile.
pub(crate) async fn fail_orphan(
    pool: &AnyPool,
    id: &str,
    dead: &str,
    error: &str,
) -> Result<bool, StoreError> {
    let columns = [
        ("status", Set::Text(Some(FAILED))),
        ("error", Set::Text(Some(error))),
        ("replica_id", Set::Text(None)),
        ("status_message", Set::Text(None)),
    ];
    transition(pool, id, &columns, &[WORKING], Holder::WasOrNone(dead)).await
}

/// Takes a task left `working` by the replica `dead` (`""`: released by a drain) for
/// `replica`, recording the take-over (by whom, when, how many so far) and `message` as
/// its status; `false` when another replica took it first, or it ended or moved.
pub(crate) async fn take_over(
    pool: &AnyPool,
    id: &str,
    dead: &str,
    replica: &str,
    message: &str,
) -> Result<bool, StoreError> {
    let now = now_text();
    let columns = [
        ("replica_id", Set::Text(Some(replica))),
        ("taken_over_by", Set::Text(Some(replica))),
        ("taken_over_at", Set::Text(Some(&now))),
        ("takeovers", Set::Sql("takeovers + 1")),
        ("status_message", Set::Text(Some(message))),
    ];
    transition(pool, id, &columns, &[WORKING], Holder::WasOrNone(dead)).await
}

/// Releases a task `replica` runs (a drain that ran out of time): still `working`, held
/// by no replica, so the next live replica takes it over at once; `false` when it ended.
pub(crate) async fn release(
    pool: &AnyPool,
    id: &str,
    replica: &str,
    message: &str,
) -> Result<bool, StoreError> {
    let columns = [
        ("replica_id", Set::Text(None)),
        ("status_message", Set::Text(Some(message))),
    ];
    transition(pool, id, &columns, &[WORKING], Holder::Is(replica)).await
}

/// The tasks `working` and not expired, with the replica holding each (`None`: released).
pub(crate) async fn working(pool: &AnyPool) -> Result<Vec<(String, Option<String>)>, StoreError> {
    let rows: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT id, replica_id FROM erp_tasks WHERE status = $1 AND expires_at > $2",
    )
    .bind(WORKING)
    .bind(now_ms())
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// The replicas holding a live lease now (`me` always counts as live).
pub(crate) async fn live_replicas(pool: &AnyPool, me: &str) -> Result<Vec<String>, StoreError> {
    Ok(super::replicas::live(pool, me, chrono::Utc::now()).await?)
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
