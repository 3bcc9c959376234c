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
    let inserted = sqlx::query(
        "INSERT INTO erp_agent_runs (agent_run_id, user_id, branch_id, first_seen_at, surface) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agent_run_id) DO NOTHING",
    )
    .bind(run_id.to_string())
    .bind(claimant.user_id.clone())
    .bind(claimant.branch_id)
    .bind(crate::audit::now_text())
    .bind(surface.map(str::to_string))
    .execute(pool)
    .await?
    .rows_affected()
        == 1;
    if inserted {
        return Ok(claimant.clone());
    }
    owner(pool, run_id).await?.ok_or_else(|| {
        sqlx::Error::Protocol(format!(
            "agent run {run_id} conflicted but could not be read"
        ))
    })
}
