//! The SQL of run ownership: which principal (user and branch) an agent run belongs to.
//! A run is bound to the first principal that uses it and never changes owner.

use sqlx::Row;

/// The principal a run belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOwner {
    /// The person the run acts for.
    pub user_id: String,
    /// Their branch.
    pub branch_id: i64,
}

impl RunOwner {
    /// Whether this is `principal` (the same user and branch).
    pub fn is(&self, principal: &crate::Principal) -> bool {
        self.user_id == principal.user_id() && self.branch_id == principal.branch_id()
    }
}

/// Reads the owner of `run_id`, if the run was used before.
pub(crate) async fn owner<'c, E>(executor: E, run_id: &str) -> Result<Option<RunOwner>, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let row = sqlx::query("SELECT user_id, branch_id FROM erp_agent_runs WHERE agent_run_id = $1")
        .bind(run_id.to_string())
        .fetch_optional(executor)
        .await?;
    row.map(|row| {
        Ok(RunOwner {
            user_id: row.try_get("user_id")?,
            branch_id: row.try_get("branch_id")?,
        })
    })
    .transpose()
}

/// Binds `run_id` to `claimant` unless it is bound already, noting the tool `surface` the
/// run first saw; returns the run's owner (`claimant` when this call bound it, or when it
/// already owned it). One statement: a concurrent claim of the same run by someone else
/// loses (the primary key decides).
pub(crate) async fn claim(
    pool: &sqlx::AnyPool,
    run_id: &str,
    claimant: &RunOwner,
    surface: Option<&str>,
) -> Result<RunOwner, sqlx::Error> {
    if claim_query(CLAIM, run_id, claimant, surface)
        .execute(pool)
        .await?
        .rows_affected()
        == 1
    {
        return Ok(claimant.clone());
    }
    owner_after_conflict(pool, run_id).await
}

/// [`claim`] and a new run's row in the run log ([`START`](super::run_log::START)) as one
/// durable write, the row written only if this write binds the run: `$1` to `$5` as in
/// [`claim_query`], then the row's branch code, opening, grants, replica, lease token and
/// time. Returns the run id when the row was written. PostgreSQL: one statement, the
/// binding a data-modifying `WITH` part. SQLite: one transaction sent at once, the row
/// inserted when the binding changed a row (`changes()`).
#[cfg(feature = "agent")]
static CLAIM_STARTING: super::relaxed::Statement = super::relaxed::Statement::per_backend(
    "WITH claimed AS (INSERT INTO erp_agent_runs (agent_run_id, user_id, branch_id, \
       first_seen_at, surface) VALUES ($1, $2, $3, $4, $5) \
       ON CONFLICT (agent_run_id) DO NOTHING RETURNING agent_run_id) \
     INSERT INTO erp_run_log (agent_run_id, user_id, branch_id, branch_code, opening, grants, \
       status, replica_id, lease_token, created_at, updated_at) \
     SELECT agent_run_id, $2, $3, $6, $7, $8, 'running', $9, $10, $11, $11 FROM claimed \
     ON CONFLICT (agent_run_id) DO NOTHING RETURNING agent_run_id",
    "INSERT INTO erp_agent_runs (agent_run_id, user_id, branch_id, first_seen_at, surface) \
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agent_run_id) DO NOTHING; \
     INSERT INTO erp_run_log (agent_run_id, user_id, branch_id, branch_code, opening, grants, \
       status, replica_id, lease_token, created_at, updated_at) \
     SELECT $1, $2, $3, $6, $7, $8, 'running', $9, $10, $11, $11 WHERE changes() = 1 \
     ON CONFLICT (agent_run_id) DO NOTHING RETURNING agent_run_id",
);

/// [`claim`], and when this call binds the run, the run log's row of the new run
/// (`start`) in the same durable write ([`CLAIM_STARTING`]): a logged run's start costs
/// no commit of its own. `true` with the owner when the run log's row was written;
/// `false` when the run was bound already (its owner returned) or its row exists.
#[cfg(feature = "agent")]
pub(crate) async fn claim_starting(
    pool: &sqlx::AnyPool,
    backend: crate::tool::handles::Backend,
    run_id: &str,
    claimant: &RunOwner,
    surface: Option<&str>,
    start: &super::run_log::NewRun<'_>,
) -> Result<(RunOwner, bool), sqlx::Error> {
    let query = claim_query(CLAIM_STARTING.text(backend), run_id, claimant, surface)
        .bind(start.branch_code.to_string())
        .bind(start.opening.clone())
        .bind(start.grants.clone())
        .bind(start.replica.to_string())
        .bind(start.token.to_string())
        .bind(start.now.to_string());
    let started = {
        // Not in the queue of the file's writers (`Database::write_turn`): this commit
        // waits for the disk, and the checkpoints of other runs would wait behind it
        // (more answers lost in the crash harness when it did). It waits for SQLite's
        // write lock within the busy timeout, as the binding alone always has.
        let mut conn = pool.acquire().await?;
        match query.fetch_all(&mut *conn).await {
            Ok(rows) => rows.len() == 1,
            Err(e) => {
                // SQLite: the statements after `BEGIN` may have left it open.
                if backend == crate::tool::handles::Backend::Sqlite
                    && sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await.is_err()
                {
                    conn.close_on_drop();
                }
                return Err(e);
            }
        }
    };
    if started {
        return Ok((claimant.clone(), true));
    }
    Ok((owner_after_conflict(pool, run_id).await?, false))
}

/// Binds a run: `$1` the run id, `$2` and `$3` its person, `$4` the time, `$5` the surface.
const CLAIM: &str = "INSERT INTO erp_agent_runs (agent_run_id, user_id, branch_id, \
     first_seen_at, surface) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agent_run_id) DO NOTHING";

/// `sql` ([`CLAIM`], or a statement starting with the same parameters) with its values.
fn claim_query(
    sql: &'static str,
    run_id: &str,
    claimant: &RunOwner,
    surface: Option<&str>,
) -> sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(sql)
        .bind(run_id.to_string())
        .bind(claimant.user_id.clone())
        .bind(claimant.branch_id)
        .bind(crate::audit::now_text())
        .bind(surface.map(str::to_string))
}

/// The owner of a run whose claim found it bound already.
async fn owner_after_conflict(pool: &sqlx::AnyPool, run_id: &str) -> Result<RunOwner, sqlx::Error> {
    owner(pool, run_id).await?.ok_or_else(|| {
        sqlx::Error::Protocol(format!(
            "agent run {run_id} conflicted but could not be read"
        ))
    })
}
