//! A logged run's checkpoint: the one write a step adds, storing the model's answer of a
//! turn (and the outcome of the previous turn's action) the moment it arrives, before the
//! answer's action runs, in a [`Relaxed`] transaction (committed, not waiting for the
//! disk: `relaxed.rs` says why that is enough). On PostgreSQL it is one statement (the
//! lease check on the run's row, the previous turn's outcome and the new turn, as
//! data-modifying `WITH` parts): three round trips in all.

use sqlx::AnyConnection;

use super::relaxed::Relaxed;
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
    let mut tx = Relaxed::begin(db).await?;
    let held = match db.backend() {
        Backend::Postgres => postgres(tx.conn(), run_id, token, turn, prior, now).await?,
        Backend::Sqlite => sqlite(tx.conn(), run_id, token, turn, prior, now).await?,
    };
    tx.commit().await?;
    Ok(held)
}

async fn postgres(
    conn: &mut AnyConnection,
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
        .execute(&mut *conn)
        .await?
        .rows_affected();
    Ok(inserted == 1)
}

async fn sqlite(
    conn: &mut AnyConnection,
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
        .execute(&mut *conn)
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
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query(INSERT)
        .bind(run_id.to_string())
        .bind(turn.step)
        .bind(turn.action.clone())
        .bind(turn.input_tokens)
        .bind(turn.output_tokens)
        .bind(now.to_string())
        .execute(&mut *conn)
        .await?;
    Ok(true)
}
