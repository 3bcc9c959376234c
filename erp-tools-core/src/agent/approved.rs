//! Approved actions whose process died before acting on them: the part of the take-over
//! pass ([`Agent::recover_runs`]) that resumes a run from a decision already stored.
//!
//! ```text
//!  approve ──▶ erp_approvals: approved, resume_status empty ─╮ the process dies here
//!  erp_run_log: awaiting_approval, pending this very action ─┤
//!  take-over pass ──▶ ApprovalQueue::resume (once: the run log's reopen lets one
//!                     process in, the others get ResumeError::NotWaiting)
//! ```

use std::sync::Arc;

use super::builder::Agent;
use super::model::Model;
use super::outcome::RunStatus;
use super::run_log::LoggedRun;
use super::stored::StoredApproval;
use super::takeover::{Recovered, TakeOverError};
use crate::store::approvals as sql;
use crate::tool::context::Principal;

impl Agent {
    /// Resumes, from its stored approval, every run still paused for an action that was
    /// approved but never acted on (at most `limit`, oldest first), as the principal and
    /// with the model `continue_with` gives for the run. Needs the agent's
    /// [`ApprovalQueue`](super::ApprovalQueue) and run log, in one database. A run whose
    /// principal or model `continue_with` refuses stays paused, its approval standing (a
    /// later pass or [`ApprovalQueue::resume`](super::ApprovalQueue::resume) goes on).
    pub(super) async fn resume_approved<F>(
        &self,
        limit: i64,
        continue_with: &mut F,
    ) -> Result<Vec<(String, Recovered)>, TakeOverError>
    where
        F: FnMut(&LoggedRun) -> Result<(Arc<Principal>, Box<dyn Model>), String>,
    {
        let (Some(queue), Some(log)) = (&self.queue, &self.runs) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for approval in sql::approved_unresumed(queue.db.pool(), limit).await? {
            let Some(run) = log.get(&approval.run_id).await? else {
                continue;
            };
            if !waits_for(&run, &approval) {
                continue;
            }
            let id = approval.id;
            let done = match continue_with(&run) {
                Ok((principal, mut model)) => {
                    match queue.resume(self, &principal, model.as_mut(), id).await {
                        Ok(outcome) => Recovered::Resumed {
                            approval: id,
                            outcome: Box::new(outcome),
                        },
                        Err(e) => Recovered::NotResumed {
                            approval: id,
                            error: e.to_string(),
                        },
                    }
                }
                Err(why) => Recovered::NotResumed {
                    approval: id,
                    error: why,
                },
            };
            out.push((approval.run_id, done));
        }
        Ok(out)
    }
}

/// Whether `run` still waits for exactly `approval`'s action (not for a later one it
/// paused at after resuming from it).
fn waits_for(run: &LoggedRun, approval: &StoredApproval) -> bool {
    run.status == "awaiting_approval"
        && matches!(&run.result, Some(RunStatus::AwaitingApproval { action, .. })
            if action.call_id == approval.call_id && action.signature == approval.signature)
}
