//! What a run was asked and how it ended, kept on the run (`erp_agent_runs`) for the
//! review console's story of it.

use super::Database;
use super::error::StoreError;

impl Database {
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
