//! A logged run's checkpoint: the one write a step adds, storing the model's answer of a
//! turn (and the outcome of the previous turn's action) before the answer's action runs.
//!
//! The checkpoint must survive the death of the process that asked the model, so it is
//! committed before the action runs. It does not wait for the disk:
//!
//! - **PostgreSQL**: one statement (the lease check on the run's row, the previous
//!   turn's outcome and the new turn, as data-modifying `WITH` parts) in a transaction
//!   with `SET LOCAL synchronous_commit TO OFF`: three round trips, no flush of its own.
//! - **SQLite**: the statements in one `BEGIN IMMEDIATE` on the writer connection, with
//!   `PRAGMA synchronous = NORMAL` for that commit (put back afterwards): the commit is in
//!   the write-ahead log, not yet flushed to the disk.
//!
//! Why that keeps the promise: once the commit returned, the server (PostgreSQL) or the
//! operating system (SQLite's write-ahead log file) holds it, so a killed process loses
//! nothing. And the log is flushed in order: the next synchronous commit (the action's
//! draft, which commits in full) flushes the checkpoint with it, so no effect of an action
//! is ever durable without the turn that asked for it. Only a crash of the database
//! server or of the machine can lose the latest checkpoints; those turns are then asked
//! again, and their actions replayed through their idempotency keys.

use sqlx::pool::PoolConnection;
use sqlx::{Any, AssertSqlSafe};

use super::run_log::TurnRow;
use crate::Database;
use crate::tool::handles::Backend;

/// The lease check, the previous turn's outcome and the new turn in one PostgreSQL
/// statement; inserts nothing (0 rows) when the lease is lost.
const PG_TURN: &str = "WITH run AS ( \
       UPDATE erp_run_log SET steps = $1, input_tokens = input_tokens + $2, \
       output_tokens = output_tokens + $3, updated_at = $4 \
       WHERE agent_run_id = $5 AND lease_token = $6 AND status = 'running' \
       RETURNING agent_run_id), \
     prior AS ( \
       UPDATE erp_run_turns SET outcome = $7, done_at = $4 \
       WHERE agent_run_id IN (SELECT agent_run_id FROM run) AND step = $8 \
       RETURNING step) \
     INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, output_tokens, \
       asked_at) \
     SELECT agent_run_id, $1, $9, $2, $3, $4 FROM run";

const HOLD: &str = "UPDATE erp_run_log SET steps = $1, input_tokens = input_tokens + $2, \
     output_tokens = output_tokens + $3, updated_at = $4 \
     WHERE agent_run_id = $5 AND lease_token = $6 AND status = 'running'";

const PRIOR: &str = "UPDATE erp_run_turns SET outcome = $1, done_at = $2 \
     WHERE agent_run_id = $3 AND step = $4";

const INSERT: &str = "INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, \
     output_tokens, asked_at) VALUES ($1, $2, $3, $4, $5, $6)";

/// The writer connection while a checkpoint's transaction is open. Dropped before it
/// ended (an error, or the run's future dropped mid-write), the connection is closed
/// rather than returned to the pool: its transaction and its relaxed `synchronous` go
/// with it.
struct Open {
    conn: PoolConnection<Any>,
    ended: bool,
}

impl Drop for Open {
    fn drop(&mut self) {
        if !self.ended {
            self.conn.close_on_drop();
        }
    }
}

/// Stores turn `turn`'s answer of run `run_id` under lease `token`, with the outcome of
/// the previous turn's action (`prior`: its step and outcome); `false` (nothing written)
/// if the lease is lost.
pub(crate) async fn checkpoint(
    db: &Database,
    run_id: &str,
    token: &str,
    turn: &TurnRow,
    prior: Option<(i64, String)>,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let (begin, end) = match db.backend() {
        Backend::Postgres => (
            "BEGIN; SET LOCAL synchronous_commit TO OFF".to_string(),
            "COMMIT".to_string(),
        ),
        Backend::Sqlite => (
            "PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE".to_string(),
            format!("COMMIT; PRAGMA synchronous = {}", db.write_sync()),
        ),
    };
    let mut open = Open {
        conn: db.pool().acquire().await?,
        ended: false,
    };
    sqlx::raw_sql(AssertSqlSafe(begin))
        .execute(&mut *open.conn)
        .await?;
    let held = match db.backend() {
        Backend::Postgres => postgres(&mut open.conn, run_id, token, turn, prior, now).await?,
        Backend::Sqlite => sqlite(&mut open.conn, run_id, token, turn, prior, now).await?,
    };
    sqlx::raw_sql(AssertSqlSafe(end))
        .execute(&mut *open.conn)
        .await?;
    open.ended = true;
    Ok(held)
}

async fn postgres(
    conn: &mut PoolConnection<Any>,
    run_id: &str,
    token: &str,
    turn: &TurnRow,
    prior: Option<(i64, String)>,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let (prior_step, prior_outcome) = prior.unzip();
    let inserted = sqlx::query(PG_TURN)
        .bind(turn.step)
        .bind(turn.input_tokens)
        .bind(turn.output_tokens)
        .bind(now.to_string())
        .bind(run_id.to_string())
        .bind(token.to_string())
        .bind(prior_outcome)
        .bind(prior_step)
        .bind(turn.action.clone())
        .execute(&mut **conn)
        .await?
        .rows_affected();
    Ok(inserted == 1)
}

async fn sqlite(
    conn: &mut PoolConnection<Any>,
    run_id: &str,
    token: &str,
    turn: &TurnRow,
    prior: Option<(i64, String)>,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let held = sqlx::query(HOLD)
        .bind(turn.step)
        .bind(turn.input_tokens)
        .bind(turn.output_tokens)
        .bind(now.to_string())
        .bind(run_id.to_string())
        .bind(token.to_string())
        .execute(&mut **conn)
        .await?
        .rows_affected();
    if held != 1 {
        return Ok(false);
    }
    if let Some((step, outcome)) = prior {
        sqlx::query(PRIOR)
            .bind(outcome)
            .bind(now.to_string())
            .bind(run_id.to_string())
            .bind(step)
            .execute(&mut **conn)
            .await?;
    }
    sqlx::query(INSERT)
        .bind(run_id.to_string())
        .bind(turn.step)
        .bind(turn.action.clone())
        .bind(turn.input_tokens)
        .bind(turn.output_tokens)
        .bind(now.to_string())
        .execute(&mut **conn)
        .await?;
    Ok(true)
}
