//! Pausing and resuming a run: a paused run kept for approval, and resumed with an
//! approval or a person's answer (from a [`PausedRun`] in hand, or from the
//! [`ApprovalQueue`] that stored it), checked against the run it belongs to.

use std::sync::Arc;

use super::approval::Approval;
use super::approvals_store::{ApprovalQueue, StoredResumeError};
use super::audit::{AgentEventKind, AuditError, RunNote};
use super::builder::Agent;
use super::model::Model;
use super::outcome::{PausedRun, ResumeError, RunOutcome, RunStatus};
use super::signature::action_signature;
use super::state::{CallRef, Event, State};
use crate::StoreError;
use crate::runtime::run_id;
use crate::store::approvals as sql;
use crate::tool::context::Principal;

/// Why a paused run goes on: the approval to add (if any) and the event to record.
struct Resumed {
    approval: Option<Approval>,
    kind: AgentEventKind,
    detail: String,
}

impl Agent {
    /// Resumes a run that stopped with [`RunStatus::AwaitingApproval`]. `approval` must
    /// name exactly the pending action's signature (see
    /// [`PendingAction::approve`](super::PendingAction::approve)); admission runs again
    /// (scopes and hard limits still apply), then exactly that action runs and the loop
    /// continues. A different action proposed later needs its own approval.
    pub async fn resume(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        paused: PausedRun,
        approval: Approval,
    ) -> Result<RunOutcome, ResumeError> {
        if paused.input.is_some() {
            return Err(ResumeError::WrongResume {
                waits_for: "an answer",
                use_instead: "Agent::answer",
            });
        }
        Self::check_paused(principal, &paused)?;
        self.check_waiting(&paused.run_id).await?;
        let pending = &paused.pending;
        if !approval.covers(&paused.run_id, &pending.signature) {
            return Err(ResumeError::ApprovalMismatch {
                pending: pending.signature.clone(),
                approved: approval.signature,
            });
        }
        let detail = format!("approved by {}", approval.approved_by);
        let resumed = Resumed {
            approval: Some(approval),
            kind: AgentEventKind::Approved,
            detail,
        };
        self.continue_paused(principal, model, paused, resumed)
            .await
    }

    /// Resumes a run that stopped with [`RunStatus::AwaitingInput`] with the person's
    /// `answer`, which must be one of the question's choices. The waiting call is
    /// admitted again (scopes, limits and approvals still apply) and runs with the answer
    /// ([`ToolContext::input`](crate::ToolContext::input)); then the loop continues. The
    /// answer is recorded as an `input_given` event naming the resuming user.
    pub async fn answer(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        mut paused: PausedRun,
        answer: impl Into<String>,
    ) -> Result<RunOutcome, ResumeError> {
        let answer = answer.into();
        let Some(input) = paused.input.take() else {
            return Err(ResumeError::WrongResume {
                waits_for: "an approval",
                use_instead: "Agent::resume",
            });
        };
        Self::check_paused(principal, &paused)?;
        self.check_waiting(&paused.run_id).await?;
        if !input.accepts(&answer) {
            return Err(ResumeError::AnswerNotAllowed {
                answer,
                choices: input.choices,
            });
        }
        let detail = super::text::input_given(&input.key, &answer, principal.user_id());
        paused.answers.insert(input.key, answer);
        let resumed = Resumed {
            approval: None,
            kind: AgentEventKind::InputGiven,
            detail,
        };
        self.continue_paused(principal, model, paused, resumed)
            .await
    }

    /// Checks that `paused` may be resumed by `principal` and is consistent.
    fn check_paused(principal: &Principal, paused: &PausedRun) -> Result<(), ResumeError> {
        if paused.version != PausedRun::VERSION {
            return Err(ResumeError::Inconsistent(format!(
                "unsupported format version {}",
                paused.version
            )));
        }
        if principal.user_id() != paused.on_behalf_of || principal.branch_id() != paused.branch_id {
            return Err(ResumeError::WrongPrincipal {
                expected_user: paused.on_behalf_of.clone(),
                expected_branch: paused.branch_id,
            });
        }
        if let Some(bound) = principal.agent_run_id()
            && bound != paused.run_id
        {
            return Err(ResumeError::WrongRun {
                expected: paused.run_id.clone(),
                bound: bound.to_string(),
            });
        }
        let pending = &paused.pending;
        if action_signature(&pending.tool, &pending.arguments) != pending.signature
            || pending.run_id != paused.run_id
        {
            return Err(ResumeError::Inconsistent(
                "the pending action does not match its own signature".into(),
            ));
        }
        Ok(())
    }

    /// Checks, with a run log, that run `run_id` still waits (paused for an approval or
    /// an answer): an ended run, or one a process drives, is not resumed, and its record
    /// is left as it is. A run the log does not know (logged elsewhere, or before the
    /// log) is resumed from its paused state.
    async fn check_waiting(&self, run_id: &str) -> Result<(), ResumeError> {
        let Some(log) = &self.runs else {
            return Ok(());
        };
        let row = crate::store::run_log::get(log.db.pool(), run_id)
            .await
            .map_err(|e| ResumeError::RunLog(e.to_string()))?;
        match row {
            Some(row) if !crate::store::run_log::is_paused(&row.status) => {
                Err(ResumeError::NotWaiting {
                    run_id: run_id.to_string(),
                    status: row.status,
                })
            }
            _ => Ok(()),
        }
    }

    /// Continues a checked paused run: records why it resumed, proposes the pending call
    /// again, and drives the loop on. A run another process took back to `running` first
    /// (or ended meanwhile) is [`ResumeError::NotWaiting`], and nothing is recorded.
    async fn continue_paused(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        paused: PausedRun,
        resumed: Resumed,
    ) -> Result<RunOutcome, ResumeError> {
        let principal = &self.run_principal(principal, model);
        let (mut st, pending) = State::resumed(paused, self.clock.now());
        let chosen = run_id::choose(principal, Some(&st.run_id));
        if let Some(status) = self.refused_run(principal, &mut st, chosen).await {
            return Ok(st.finish(principal, status, self.clock.as_ref()));
        }
        if let Some(approval) = resumed.approval {
            st.approvals.push(approval);
        }
        let reopened = self.log_reopen(&mut st).await;
        if let Ok(Some(status)) = reopened {
            return Err(ResumeError::NotWaiting {
                run_id: st.run_id,
                status,
            });
        }
        let status = async {
            reopened?;
            let call = CallRef {
                call_id: &pending.call_id,
                tool: &pending.tool,
                arguments: &pending.arguments,
                signature: &pending.signature,
            };
            self.record(
                &mut st,
                principal,
                Event::new(resumed.kind).call(&call).detail(resumed.detail),
            )
            .await?;
            let mark = st.history.len();
            if let Some(end) = self
                .propose(
                    principal,
                    &mut st,
                    &pending.call_id,
                    &pending.tool,
                    &pending.arguments,
                )
                .await?
            {
                return Ok(end);
            }
            self.log_outcome(&mut st, mark)?;
            Ok::<_, AuditError>(self.drive(principal, model, &mut st).await)
        }
        .await
        .unwrap_or_else(|e| RunStatus::Aborted {
            reason: e.to_string(),
        });
        Ok(self.end_run(principal, st, status).await)
    }

    /// Stores `outcome`'s pending action if the run paused and a queue is set, and notes
    /// how the run ended in the audit sinks.
    pub(super) async fn keep_pending(
        &self,
        principal: &Principal,
        mut outcome: RunOutcome,
    ) -> RunOutcome {
        if let (Some(queue), Some(paused)) = (&self.queue, outcome.paused()) {
            let limits = self.limits_text(&paused.pending.tool);
            if let Err(e) = queue.keep(&paused, principal.branch_code(), limits).await {
                outcome.status = RunStatus::Aborted {
                    reason: format!("the pending action could not be stored for approval: {e}"),
                };
            }
        }
        let text = match &outcome.status {
            RunStatus::Done { answer } => Some(answer.clone()),
            RunStatus::Aborted { reason } => Some(reason.clone()),
            RunStatus::AwaitingApproval { action, .. } => Some(action.reason.clone()),
            RunStatus::AwaitingInput { input, .. } => Some(input.question.clone()),
            RunStatus::NoProgress { .. } | RunStatus::BudgetExhausted { .. } => {
                outcome.audit.iter().rev().find_map(|e| e.detail.clone())
            }
            RunStatus::StepLimit | RunStatus::Timeout => None,
        };
        let note = RunNote::Ended {
            status: outcome.status.as_str(),
            text: text.as_deref(),
        };
        self.note_run(principal, &outcome.run_id, note).await;
        outcome
    }

    /// Notes `note` about `run_id` in every audit sink. A failure is logged: the run's
    /// story lacks it, the run itself is not affected.
    pub(super) async fn note_run(&self, principal: &Principal, run_id: &str, note: RunNote<'_>) {
        for sink in &self.sinks {
            if let Err(e) = sink.note_run(principal, run_id, note).await {
                tracing::warn!(error = %e, run_id, "could not note the run's task or ending");
            }
        }
    }

    /// The hard limits on `tool`, the tool's own and this policy's, as a reviewer reads
    /// them.
    fn limits_text(&self, tool: &str) -> Option<String> {
        let own = self
            .exec
            .registry()
            .get(tool)
            .map(|t| t.def.limits())
            .unwrap_or_default()
            .iter()
            .map(|l| format!("{} ≤ {} (tool)", l.path, l.max));
        let policy = self
            .policy
            .limits_for(tool)
            .into_iter()
            .map(|l| format!("{} ≤ {} (policy)", l.path, l.max));
        let all: Vec<String> = own.chain(policy).collect();
        (!all.is_empty()).then(|| all.join("; "))
    }
}

impl ApprovalQueue {
    /// Resumes the run of approved action `id` for `principal` (the person it acts for,
    /// authenticated now): exactly the approved signature runs, once, then the loop goes
    /// on with `model`. An approval a run already went on from is not resumed again
    /// ([`StoredResumeError::AlreadyResumed`]), nor is a run the run log has ended
    /// ([`ResumeError::NotWaiting`]); nothing changes then. Two resumes at once run the
    /// action once (its idempotency key replays it to the second); a changed action needs
    /// a new approval. If the resumed run pauses again, the agent stores the new pending
    /// action.
    pub async fn resume(
        &self,
        agent: &Agent,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        id: i64,
    ) -> Result<RunOutcome, StoredResumeError> {
        let stored = self.get(id).await?.ok_or(StoredResumeError::NotFound(id))?;
        let Some(approval) = stored.approval() else {
            return Err(StoredResumeError::NotApproved {
                id,
                status: stored.status,
            });
        };
        if let Some(status) = stored.resume_status {
            return Err(StoredResumeError::AlreadyResumed {
                id,
                at: stored.resumed_at.unwrap_or_default(),
                status,
            });
        }
        let text = sql::paused_run(self.db.pool(), id)
            .await
            .map_err(StoreError::from)?
            .ok_or(StoredResumeError::NotFound(id))?;
        let paused: PausedRun =
            serde_json::from_str(&text).map_err(|e| StoredResumeError::Unreadable {
                id,
                detail: e.to_string(),
            })?;
        let outcome = agent.resume(principal, model, paused, approval).await?;
        sql::mark_resumed(self.db.pool(), id, &self.now(), outcome.status.as_str())
            .await
            .map_err(StoreError::from)?;
        Ok(outcome)
    }
}
