//! The SQL of the notification outbox (`erp_outbox`): a row written in the transaction of
//! what it announces, claimed by one delivery worker at a time, delivered, retried with
//! backoff, or dead after its last attempt.

use sqlx::{AnyPool, Row};

const COLUMNS: &str = "id, delivery_id, kind, branch_id, payload, status, attempts, \
     next_attempt_at, last_error, created_at, delivered_at";

/// One outbox row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OutboxRow {
    pub id: i64,
    pub delivery_id: String,
    pub kind: String,
    pub branch_id: i64,
    pub payload: String,
    pub status: String,
    pub attempts: i64,
    pub next_attempt_at: String,
    pub last_error: Option<String>,
    pub created_at: String,
    pub delivered_at: Option<String>,
}

/// A notification to write.
pub(crate) struct NewNotification {
    pub delivery_id: String,
    pub kind: &'static str,
    pub branch_id: i64,
    pub payload: String,
    pub now: String,
}

/// Writes `n` as pending unless its delivery id is written already (`false` then).
pub(crate) async fn insert<'c, E>(executor: E, n: NewNotification) -> Result<bool, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let done = sqlx::query(
        "INSERT INTO erp_outbox (delivery_id, kind, branch_id, payload, status, attempts, \
         next_attempt_at, created_at) VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5) \
         ON CONFLICT (delivery_id) DO NOTHING",
    )
    .bind(n.delivery_id)
    .bind(n.kind.to_string())
    .bind(n.branch_id)
    .bind(n.payload)
    .bind(n.now)
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Claims up to `limit` pending rows due at `now` for this worker until `until`: each row
/// is claimed by one worker (a conditional update decides).
pub(crate) async fn claim_due(
    pool: &AnyPool,
    now: &str,
    until: &str,
    limit: i64,
) -> Result<Vec<OutboxRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM erp_outbox WHERE status = 'pending' AND next_attempt_at <= $1 \
         AND (claimed_until IS NULL OR claimed_until <= $1) ORDER BY next_attempt_at, id \
         LIMIT $2"
    );
    let due = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(now.to_string())
        .bind(limit)
        .fetch_all(pool)
        .await?;
    let mut claimed = Vec::new();
    for row in due.iter().map(from_row) {
        let row = row?;
        let won = sqlx::query(
            "UPDATE erp_outbox SET claimed_until = $1 WHERE id = $2 AND status = 'pending' \
             AND (claimed_until IS NULL OR claimed_until <= $3)",
        )
        .bind(until.to_string())
        .bind(row.id)
        .bind(now.to_string())
        .execute(pool)
        .await?
        .rows_affected()
            == 1;
        if won {
            claimed.push(row);
        }
    }
    Ok(claimed)
}

/// Marks row `id` delivered (attempt `attempts`).
pub(crate) async fn delivered(
    pool: &AnyPool,
    id: i64,
    attempts: i64,
    now: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE erp_outbox SET status = 'delivered', attempts = $1, delivered_at = $2, \
         claimed_until = NULL, last_error = NULL WHERE id = $3",
    )
    .bind(attempts)
    .bind(now.to_string())
    .bind(id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records failed attempt `attempts` of row `id`: retried at `retry_at`, or `dead` when
/// `None`.
pub(crate) async fn failed(
    pool: &AnyPool,
    id: i64,
    attempts: i64,
    error: &str,
    retry_at: Option<&str>,
) -> Result<(), sqlx::Error> {
    let status = if retry_at.is_some() {
        "pending"
    } else {
        "dead"
    };
    sqlx::query(
        "UPDATE erp_outbox SET status = $1, attempts = $2, last_error = $3, \
         next_attempt_at = COALESCE($4, next_attempt_at), claimed_until = NULL WHERE id = $5",
    )
    .bind(status)
    .bind(attempts)
    .bind(error.to_string())
    .bind(retry_at.map(str::to_string))
    .bind(id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Sends dead row `id` again: pending, due at `now`, attempts counted afresh. `false` if
/// it is not dead (in `branch_id`).
pub(crate) async fn resend(
    pool: &AnyPool,
    id: i64,
    branch_id: i64,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE erp_outbox SET status = 'pending', attempts = 0, next_attempt_at = $1, \
         claimed_until = NULL WHERE id = $2 AND branch_id = $3 AND status = 'dead'",
    )
    .bind(now.to_string())
    .bind(id)
    .bind(branch_id)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Rows of `branch_id` with `status`, newest first.
pub(crate) async fn list(
    pool: &AnyPool,
    branch_id: i64,
    status: &str,
    limit: i64,
) -> Result<Vec<OutboxRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM erp_outbox WHERE branch_id = $1 AND status = $2 \
         ORDER BY id DESC LIMIT {}",
        limit.max(0)
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(status.to_string())
        .fetch_all(pool)
        .await?;
    rows.iter().map(from_row).collect()
}

/// Row `delivery_id`.
pub(crate) async fn get(
    pool: &AnyPool,
    delivery_id: &str,
) -> Result<Option<OutboxRow>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM erp_outbox WHERE delivery_id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(delivery_id.to_string())
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(from_row).transpose()
}

fn from_row(row: &sqlx::any::AnyRow) -> Result<OutboxRow, sqlx::Error> {
    Ok(OutboxRow {
        id: row.try_get("id")?,
        delivery_id: row.try_get("delivery_id")?,
        kind: row.try_get("kind")?,
        branch_id: row.try_get("branch_id")?,
        payload: row.try_get("payload")?,
        status: row.try_get("status")?,
        attempts: row.try_get("attempts")?,
        next_attempt_at: row.try_get("next_attempt_at")?,
        last_error: row.try_get("last_error")?,
        created_at: row.try_get("created_at")?,
        delivered_at: row.try_get("delivered_at")?,
    })
}
