//! The SQL of durable agent runs (`erp_run_log`, `erp_run_turns`): a run's row, one row
//! per model turn, and the lease that lets one replica at a time drive a run.
//!
//! Every write of a driver names its `lease_token`; a driver whose run was taken over
//! (its replica was taken for dead) changes nothing and learns it lost the run.

use sqlx::{AnyConnection, AnyPool, Row};

/// A run's columns, read from `erp_run_log r`: its steps, tokens and last write from its
/// turns (a checkpoint appends a turn and does not write the run's row, `run_turn.rs`).
const RUN_COLUMNS: &str = "r.agent_run_id, r.user_id, r.branch_id, r.branch_code, r.opening, \
     r.grants, r.status, r.result, r.replica_id, r.lease_token, \
     COALESCE((SELECT MAX(t.step) FROM erp_run_turns t \
       WHERE t.agent_run_id = r.agent_run_id), 0) AS steps, \
     CAST(COALESCE((SELECT SUM(t.input_tokens) FROM erp_run_turns t \
       WHERE t.agent_run_id = r.agent_run_id), 0) AS BIGINT) AS input_tokens, \
     CAST(COALESCE((SELECT SUM(t.output_tokens) FROM erp_run_turns t \
       WHERE t.agent_run_id = r.agent_run_id), 0) AS BIGINT) AS output_tokens, \
     r.created_at, \
     COALESCE((SELECT MAX(t.asked_at) FROM erp_run_turns t \
       WHERE t.agent_run_id = r.agent_run_id AND t.asked_at > r.updated_at), \
       r.updated_at) AS updated_at, \
     r.interrupted_at, r.resumed_by, r.resumed_at, r.resume_count";

/// A run's row as stored.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunRow {
    pub run_id: String,
    pub user_id: String,
    pub branch_id: i64,
    pub branch_code: String,
    /// The opening messages (system, user), JSON.
    pub opening: String,
    /// The approvals and answers given to the run, JSON.
    pub grants: String,
    pub status: String,
    pub result: Option<String>,
    pub replica_id: Option<String>,
    pub lease_token: Option<String>,
    pub steps: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub created_at: String,
    pub updated_at: String,
    pub interrupted_at: Option<String>,
    pub resumed_by: Option<String>,
    pub resumed_at: Option<String>,
    pub resume_count: i64,
}

/// One model turn as stored.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TurnRow {
    pub step: i64,
    /// The model's answer (a `ModelAction`), JSON.
    pub action: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// What the action's end fed back (JSON), `None` while it has not ended.
    pub outcome: Option<String>,
}

/// A new run, driven by `replica` under `token`.
pub(crate) struct NewRun<'a> {
    pub run_id: &'a str,
    pub user_id: &'a str,
    pub branch_id: i64,
    pub branch_code: &'a str,
    pub opening: String,
    pub grants: String,
    pub replica: &'a str,
    pub token: &'a str,
    pub now: &'a str,
}

/// A new run's row, `running`: binds [`start_query`] to `$1` to `$9`; returns the run
/// id, or no row when the run id is logged already.
pub(crate) const START: &str = "INSERT INTO erp_run_log (agent_run_id, user_id, branch_id, \
     branch_code, opening, grants, status, replica_id, lease_token, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9, $9) \
     ON CONFLICT (agent_run_id) DO NOTHING RETURNING agent_run_id";

/// [`START`] (or the same statement in another text, `sql`) with its values.
pub(crate) fn start_query(
    sql: &'static str,
    new: &NewRun<'_>,
) -> sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(sql)
        .bind(new.run_id.to_string())
        .bind(new.user_id.to_string())
        .bind(new.branch_id)
        .bind(new.branch_code.to_string())
        .bind(new.opening.clone())
        .bind(new.grants.clone())
        .bind(new.replica.to_string())
        .bind(new.token.to_string())
        .bind(new.now.to_string())
}

/// Starts a new log under a run id logged before, unless a driver still holds it
/// (`false`: nothing written).
pub(crate) async fn restart(tx: &mut AnyConnection, new: NewRun<'_>) -> Result<bool, sqlx::Error> {
    let restarted = sqlx::query(
        "UPDATE erp_run_log SET opening = $1, grants = $2, status = 'running', \
             result = NULL, replica_id = $3, lease_token = $4, steps = 0, input_tokens = 0, \
             output_tokens = 0, created_at = $5, updated_at = $5, interrupted_at = NULL, \
             resumed_by = NULL, resumed_at = NULL, resume_count = 0 \
             WHERE agent_run_id = $6 AND status <> 'running'",
    )
    .bind(new.opening)
    .bind(new.grants)
    .bind(new.replica.to_string())
    .bind(new.token.to_string())
    .bind(new.now.to_string())
    .bind(new.run_id.to_string())
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if restarted == 0 {
        return Ok(false);
    }
    sqlx::query("DELETE FROM erp_run_turns WHERE agent_run_id = $1")
        .bind(new.run_id.to_string())
        .execute(&mut *tx)
        .await?;
    Ok(true)
}

/// Whether a run's `status` is a pause a resume goes on from (waiting for an approval
/// or an answer); [`reopen`] takes only such a run.
pub(crate) fn is_paused(status: &str) -> bool {
    status == "awaiting_approval" || status == "awaiting_input"
}

/// Takes a logged run that paused back to `running` for a driver going on with it, with
/// the `grants` given since; `false` if it is not logged, has ended, or a driver holds it
/// (an ended run's record is never reopened).
pub(crate) async fn reopen(
    pool: &AnyPool,
    run_id: &str,
    grants: String,
    replica: &str,
    token: &str,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let taken = sqlx::query(
        "UPDATE erp_run_log SET status = 'running', replica_id = $1, lease_token = $2, \
         grants = $3, updated_at = $4, result = NULL \
         WHERE agent_run_id = $5 AND status IN ('awaiting_approval', 'awaiting_input')",
    )
    .bind(replica.to_string())
    .bind(token.to_string())
    .bind(grants)
    .bind(now.to_string())
    .bind(run_id.to_string())
    .execute(pool)
    .await?
    .rows_affected();
    Ok(taken == 1)
}

/// Stores a run's end (or pause): binds [`finish_query`] to `$1` to `$5`. A run its last
/// turn's checkpoint ended as `done` (`run_turn.rs`) still holds its driver's token: that
/// driver may store another end over it (a brake or a failure after the answer arrived).
pub(crate) const FINISH: &str = "UPDATE erp_run_log SET status = $1, result = $2, \
     updated_at = $3, lease_token = NULL \
     WHERE agent_run_id = $4 AND lease_token = $5 AND status IN ('running', 'done') \
     RETURNING agent_run_id";

/// [`FINISH`] (or the same statement in another text, `sql`) with its values.
pub(crate) fn finish_query(
    sql: &'static str,
    run_id: &str,
    token: &str,
    status: &str,
    result: String,
    now: &str,
) -> sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(sql)
        .bind(status.to_string())
        .bind(result)
        .bind(now.to_string())
        .bind(run_id.to_string())
        .bind(token.to_string())
}

/// Stores the status the run ended (or paused) with, through `exec` (the pool, or a
/// transaction's connection); `false` if the lease is lost.
pub(crate) async fn finish<'e>(
    exec: impl sqlx::Executor<'e, Database = sqlx::Any>,
    run_id: &str,
    token: &str,
    status: &str,
    result: String,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let done = finish_query(FINISH, run_id, token, status, result, now)
        .execute(exec)
        .await?
        .rows_affected();
    Ok(done == 1)
}

/// Takes run `run_id` from a dead driver holding it under `old_token`: one of several
/// concurrent takers wins (`true`).
pub(crate) async fn take_over(
    pool: &AnyPool,
    run_id: &str,
    old_token: &str,
    replica: &str,
    token: &str,
    by: &str,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE erp_run_log SET replica_id = $1, lease_token = $2, resumed_by = $3, \
         resumed_at = $4, resume_count = resume_count + 1, \
         interrupted_at = COALESCE((SELECT MAX(t.asked_at) FROM erp_run_turns t \
           WHERE t.agent_run_id = erp_run_log.agent_run_id \
             AND t.asked_at > erp_run_log.updated_at), updated_at), \
         updated_at = $4 \
         WHERE agent_run_id = $5 AND lease_token = $6 AND status = 'running'",
    )
    .bind(replica.to_string())
    .bind(token.to_string())
    .bind(by.to_string())
    .bind(now.to_string())
    .bind(run_id.to_string())
    .bind(old_token.to_string())
    .execute(pool)
    .await?
    .rows_affected();
    Ok(done == 1)
}

/// Run `run_id`'s row.
pub(crate) async fn get(pool: &AnyPool, run_id: &str) -> Result<Option<RunRow>, sqlx::Error> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM erp_run_log r WHERE r.agent_run_id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(run_id.to_string())
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(run_row).transpose()
}

/// The running runs (whoever drives them), oldest first, at most `limit`.
pub(crate) async fn running(pool: &AnyPool, limit: i64) -> Result<Vec<RunRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM erp_run_log r WHERE r.status = 'running' \
         ORDER BY r.created_at LIMIT $1"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.iter().map(run_row).collect()
}

/// The latest `limit` runs of `branch_id`, newest first.
pub(crate) async fn recent(
    pool: &AnyPool,
    branch_id: i64,
    limit: i64,
) -> Result<Vec<RunRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM erp_run_log r WHERE r.branch_id = $1 \
         ORDER BY updated_at DESC LIMIT $2"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.iter().map(run_row).collect()
}

/// Run `run_id`'s turns, in order, each with its action's outcome: stored in the next
/// turn's row (`prior_outcome`, `run_turn.rs`), or in its own.
pub(crate) async fn turns(pool: &AnyPool, run_id: &str) -> Result<Vec<TurnRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT t.step, t.action, t.input_tokens, t.output_tokens, \
           COALESCE(t.outcome, n.prior_outcome) AS outcome \
         FROM erp_run_turns t LEFT JOIN erp_run_turns n \
           ON n.agent_run_id = t.agent_run_id AND n.step = t.step + 1 \
         WHERE t.agent_run_id = $1 ORDER BY t.step",
    )
    .bind(run_id.to_string())
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(TurnRow {
                step: row.try_get("step")?,
                action: row.try_get("action")?,
                input_tokens: row.try_get("input_tokens")?,
                output_tokens: row.try_get("output_tokens")?,
                outcome: row.try_get("outcome")?,
            })
        })
        .collect()
}

fn run_row(row: &sqlx::any::AnyRow) -> Result<RunRow, sqlx::Error> {
    Ok(RunRow {
        run_id: row.try_get("agent_run_id")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        branch_code: row.try_get("branch_code")?,
        opening: row.try_get("opening")?,
        grants: row.try_get("grants")?,
        status: row.try_get("status")?,
        result: row.try_get("result")?,
        replica_id: row.try_get("replica_id")?,
        lease_token: row.try_get("lease_token")?,
        steps: row.try_get("steps")?,
        input_tokens: row.try_get("input_tokens")?,
        output_tokens: row.try_get("output_tokens")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        interrupted_at: row.try_get("interrupted_at")?,
        resumed_by: row.try_get("resumed_by")?,
        resumed_at: row.try_get("resumed_at")?,
        resume_count: row.try_get("resume_count")?,
    })
}

/// The running runs whose driver's replica is not live at `now` (`me` is), oldest first:
/// runs cut off by a dead process.
pub(crate) async fn orphaned(
    pool: &AnyPool,
    me: &str,
    now: chrono::DateTime<chrono::Utc>,
    limit: i64,
) -> Result<Vec<RunRow>, sqlx::Error> {
    let live = super::replicas::live(pool, me, now).await?;
    let running = running(pool, limit).await?;
    Ok(running
        .into_iter()
        .filter(|r| r.replica_id.as_ref().is_none_or(|id| !live.contains(id)))
        .collect())
}

/// Whether `replica` holds a live lease at `now` (`me` always does).
pub(crate) async fn is_live(
    pool: &AnyPool,
    me: &str,
    replica: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, sqlx::Error> {
    Ok(super::replicas::live(pool, me, now)
        .await?
        .iter()
        .any(|id| id == replica))
}
