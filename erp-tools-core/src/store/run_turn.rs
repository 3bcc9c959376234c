//! A logged run's checkpoint: the one write a step adds, storing the model's answer of a
//! turn (and the outcome of the previous turn's action) the moment it arrives, before the
//! answer's action runs, committed without waiting for the disk (`relaxed.rs` says why
//! that is enough). It is one statement on both backends: the lease check, a read of the
//! run's row, and the new turn's row, which carries the previous turn's outcome
//! (`prior_outcome`: the turn rows are only appended to; a previous step other than the
//! one just before is updated in place). The run's row is not written: its steps, tokens
//! and last write are read from its turns (`run_log.rs`). A turn whose answer is the
//! run's final answer also ends the run (`done`, with its result) in the same statement:
//! a run's last turn costs no commit of its own.
//!
//! - **PostgreSQL**: data-modifying `WITH` parts, run on its own (a single statement is
//!   its own transaction): one round trip, no `BEGIN` or `COMMIT`.
//! - **SQLite**: an `INSERT` into the view `erp_run_checkpoints`, whose trigger does the
//!   writes (migrations `0028_run_checkpoint`, `0029_run_answer_ends` and
//!   `0030_run_turn_appends`), between
//!   `BEGIN IMMEDIATE` and `COMMIT` sent with it.
//!
//! Both run on the run log's own connection ([`Journal`](super::relaxed::Journal)), whose
//! commits do not wait for the disk.

use super::relaxed::Statement;
use super::run_log::TurnRow;
use crate::Database;
use crate::tool::handles::Backend;

/// The lease check (the run's row locked `FOR SHARE`, so a take-over waits for it or it
/// sees the take-over), the run's end when `$10`, the result, is set, and the new turn
/// with the previous turn's outcome, in one PostgreSQL statement; inserts nothing (no row
/// returned) when the lease is lost.
const PG_TURN: &str = "WITH run AS ( \
       SELECT agent_run_id FROM erp_run_log \
       WHERE agent_run_id = $5 AND lease_token = $6 AND status = 'running' FOR SHARE), \
     ended AS ( \
       UPDATE erp_run_log SET status = 'done', result = $10::text, updated_at = $4 \
       WHERE $10::text IS NOT NULL AND agent_run_id IN (SELECT agent_run_id FROM run) \
       RETURNING agent_run_id), \
     prior AS ( \
       UPDATE erp_run_turns SET outcome = $7, done_at = $4 \
       WHERE agent_run_id IN (SELECT agent_run_id FROM run) AND step = $8 AND $8 <> $1 - 1 \
       RETURNING step) \
     INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, output_tokens, \
       asked_at, prior_outcome) \
     SELECT agent_run_id, $1, $9, $2, $3, $4, CASE WHEN $8 = $1 - 1 THEN $7 END FROM run \
     RETURNING step";

/// [`PG_TURN`], and the same on SQLite through the view's trigger (which fails with
/// [`LEASE_LOST`] when the lease is lost).
static TURN: Statement = Statement::per_backend(
    PG_TURN,
    "INSERT INTO erp_run_checkpoints (step, input_tokens, output_tokens, at, \
     agent_run_id, lease_token, prior_outcome, prior_step, action, result) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
);

/// The error the SQLite trigger raises for a driver that lost its run.
const LEASE_LOST: &str = "erp_run_lease_lost";

/// Stores turn `turn`'s answer of run `run_id` under lease `token`, with the outcome of
/// the previous turn's action (`prior`: its step and outcome); `false` (nothing written)
/// if the lease is lost. `ends`: the run's result (a `RunStatus`, JSON) when the turn's
/// answer is the run's final answer, which ends the run as `done` in the same statement.
/// The run keeps its lease token, so that its driver can still store another end (a brake
/// that stopped it after all) with [`FINISH`](super::run_log::FINISH).
pub(crate) async fn checkpoint(
    db: &Database,
    run_id: &str,
    token: &str,
    turn: TurnRow,
    prior: Option<(i64, String)>,
    now: &str,
    ends: Option<String>,
) -> Result<bool, sqlx::Error> {
    let (prior_step, prior_outcome) = prior.unzip();
    let query = sqlx::query(TURN.text(db.backend()))
        .bind(turn.step)
        .bind(turn.input_tokens)
        .bind(turn.output_tokens)
        .bind(now.to_string())
        .bind(run_id.to_string())
        .bind(token.to_string())
        .bind(prior_outcome)
        .bind(prior_step)
        .bind(turn.action)
        .bind(ends);
    match (db.journal().run(db, query).await, db.backend()) {
        (Ok(rows), Backend::Postgres) => Ok(rows.len() == 1),
        (Ok(_), Backend::Sqlite) => Ok(true),
        (Err(e), Backend::Sqlite) if is_lease_lost(&e) => Ok(false),
        (Err(e), _) => Err(e),
    }
}

fn is_lease_lost(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.message().contains(LEASE_LOST))
}

#[cfg(all(test, feature = "postgres"))]
#[path = "run_turn_tests.rs"]
mod tests;

#[cfg(all(test, feature = "sqlite"))]
#[path = "run_turn_sqlite_tests.rs"]
mod sqlite_tests;
