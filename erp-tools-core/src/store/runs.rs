//! The SQL of run ownership: which principal (user and branch) an agent run belongs to.
//! A run is bound to the first principal that uses it and never changes owner.

use sqlx::Row;

use super::StoreError;

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

impl crate::Database {
    /// Longest task kept on a run, in bytes (a longer one is cut and marked).
    pub const MAX_RUN_TASK_BYTES: usize = 4 * 1024;
    /// Longest final answer kept on a run, in bytes (a longer one is cut and marked).
    pub const MAX_RUN_ANSWER_BYTES: usize = 16 * 1024;

    /// Keeps on run `run_id` the task it was given (cut to [`MAX_RUN_TASK_BYTES`](Self::MAX_RUN_TASK_BYTES)), for
    /// the review console's story of the run. The agent loop calls it when a run starts;
    /// a host that runs its own loop calls it with the person's request. The run must be
    /// known (a call or [`claim_agent_run`](Self::claim_agent_run) bound it): an unknown
    /// run is an error. The first task kept stays.
    pub async fn note_run_task(&self, run_id: &str, task: &str) -> Result<(), StoreError> {
        let task = crate::audit::bounded_text(task, Self::MAX_RUN_TASK_BYTES);
        let updated = sqlx::query(
            "UPDATE erp_agent_runs SET task = COALESCE(task, $2) WHERE agent_run_id = $1",
        )
        .bind(run_id.to_string())
        .bind(task)
        .execute(self.pool())
        .await?
        .rows_affected();
        known(run_id, updated)
    }

    /// Keeps on run `run_id` how it ended: `status` (`done`, `awaiting_approval`, ...)
    /// and the final answer or the reason it stopped (cut to [`MAX_RUN_ANSWER_BYTES`](Self::MAX_RUN_ANSWER_BYTES)).
    /// A resumed run that ends again replaces both. An unknown run is an error.
    pub async fn note_run_end(
        &self,
        run_id: &str,
        status: &str,
        text: Option<&str>,
    ) -> Result<(), StoreError> {
        let text = text.map(|t| crate::audit::bounded_text(t, Self::MAX_RUN_ANSWER_BYTES));
        let updated = sqlx::query(
            "UPDATE erp_agent_runs SET ended_status = $2, answer = $3, ended_at = $4 \
             WHERE agent_run_id = $1",
        )
        .bind(run_id.to_string())
        .bind(status.to_string())
        .bind(text)
        .bind(crate::audit::now_text())
        .execute(self.pool())
        .await?
        .rows_affected();
        known(run_id, updated)
    }
}

fn known(run_id: &str, updated: u64) -> Result<(), StoreError> {
    if updated == 0 {
        return Err(StoreError::BadInput(format!(
            "agent run {run_id} is not known: a call or claim_agent_run binds a run to its \
             person before anything is kept on it"
        )));
    }
    Ok(())
}
