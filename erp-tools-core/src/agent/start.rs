//! Starting a run: its principal and run id, the run checked as the runtime checks
//! every call's, and the loop driven until it stops.

use std::sync::Arc;

use super::audit::{AgentEventKind, RunNote};
use super::builder::Agent;
use super::model::{Message, Model};
use super::outcome::{RunOutcome, RunRequest, RunStatus};
use super::state::{Event, State};
use crate::runtime::run_id::{self, BadRunId};
use crate::tool::context::Principal;

impl Agent {
    /// Runs `task` for `principal` until the model answers or a brake stops it.
    pub async fn run(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        task: impl Into<String>,
    ) -> RunOutcome {
        self.run_with(principal, model, RunRequest::new(task)).await
    }

    /// Runs `request` for `principal`.
    ///
    /// The run is the principal's bound run (its token's `run` claim), else
    /// `request.run_id`, else a fresh one. Before the model is asked anything, the run is
    /// checked as [`ToolRuntime::call`](crate::ToolRuntime::call) checks it: an invalid run id, another person's
    /// scope, or a run another person (user and branch) used first ends the run at once
    /// with [`RunStatus::Aborted`] and one `denied` audit event.
    pub async fn run_with(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        request: RunRequest,
    ) -> RunOutcome {
        let principal = &self.run_principal(principal, model);
        let named = request.run_id.unwrap_or_else(|| run_id::fresh("run"));
        let chosen = run_id::choose(principal, Some(&named));
        let run_id = match &chosen {
            Ok(run) => run.clone(),
            Err(bad) => bad.audit_id().to_string(),
        };
        let approvals = request
            .approvals
            .into_iter()
            .filter(|a| a.run_id == run_id)
            .collect();
        let history = vec![
            Message::System {
                content: self.system_message_for(principal),
            },
            Message::User {
                content: request.task.clone(),
            },
        ];
        let mut st = State::new(run_id, history, approvals, self.clock.now());
        let status = match self.start(principal, &mut st, chosen).await {
            Ok(()) => {
                let task = RunNote::Task(&request.task);
                self.note_run(principal, &st.run_id, task).await;
                self.drive(principal, model, &mut st).await
            }
            Err(status) => status,
        };
        self.end_run(principal, st, status).await
    }

    /// Checks a new run and logs its start: with a run log on the runtime's database, a
    /// new run's row is written in the transaction that binds the run to `principal`
    /// (its start costs no commit of its own), else on its own. The status it ends with
    /// if it may not start.
    async fn start(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        chosen: Result<String, BadRunId>,
    ) -> Result<(), RunStatus> {
        let (Some(log), Ok(run)) = (&self.runs, &chosen) else {
            // Unlogged, or a run id that is refused.
            return self
                .refused_run(principal, st, chosen)
                .await
                .map_or(Ok(()), Err);
        };
        let aborted = |reason: String| RunStatus::Aborted { reason };
        let opening = Agent::opening(st).map_err(|e| aborted(e.to_string()))?;
        let new = opening.row(principal, run, log.db.replica_id());
        let checked = self.exec.check_run_starting(principal, run, &log.db, &new);
        match checked.await.map_err(|e| aborted(e.to_string()))? {
            (Some(refusal), _) => Err(self.refuse_run(principal, st, refusal).await),
            (None, true) => {
                st.lease = Some(opening.token);
                Ok(())
            }
            (None, false) => self
                .log_start(principal, st, opening)
                .await
                .map_err(|e| aborted(e.to_string())),
        }
    }

    /// Ends a run that may not start: its run id is invalid, or the run is not the
    /// principal's. `None` if it may start.
    pub(super) async fn refused_run(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        chosen: Result<String, BadRunId>,
    ) -> Option<RunStatus> {
        let refusal = match chosen {
            Err(bad) => {
                // The events name the run by a stand-in; an invalid id is never stored.
                st.run_id = bad.audit_id().to_string();
                bad.refusal()
            }
            Ok(run) => match self.exec.check_run(principal, Ok(run)).await {
                Ok(None) => return None,
                Ok(Some(refusal)) => refusal,
                Err(e) => {
                    return Some(RunStatus::Aborted {
                        reason: e.to_string(),
                    });
                }
            },
        };
        Some(self.refuse_run(principal, st, refusal).await)
    }

    /// Ends a run that may not start, for `refusal`: one `denied` audit event.
    async fn refuse_run(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        refusal: crate::ToolError,
    ) -> RunStatus {
        let reason = refusal.to_string();
        let event = Event::new(AgentEventKind::Denied).detail(reason.clone());
        match self.record(st, principal, event).await {
            Ok(()) => RunStatus::Aborted { reason },
            Err(e) => RunStatus::Aborted {
                reason: e.to_string(),
            },
        }
    }
}
