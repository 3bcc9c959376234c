//! One proposed tool call: admission (the same step MCP calls go through, with the
//! policy's limits), repeat detection, the policy's approvals, execution, and the result
//! fed back to the model as data.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::approval::PendingAction;
use super::audit::{AgentEventKind, AuditError};
use super::builder::Agent;
use super::model::{ResultSource, ResultStatus};
use super::outcome::RunStatus;
use super::policy::{Decision, Denial};
use super::signature::action_signature;
use super::state::{CallRef, Event, State};
use crate::audit::Outcome;
use crate::runtime::Preview;
use crate::runtime::admit::Check;
use crate::runtime::prepare::{Prepared, prepare};
use crate::runtime::preview::changed_preview;
use crate::runtime::{CallError, ToolCall};
use crate::text;
use crate::tool::context::{Principal, ToolContext};
use crate::tool::input::InputAnswers;

impl Agent {
    /// Handles one proposed call of `name` with `arguments`. Returns the status the run
    /// ends with, or `None` to continue.
    pub(super) async fn propose(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        call_id: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Option<RunStatus>, AuditError> {
        let limits = self.policy.limits_for(name);
        let tool_call = ToolCall {
            agent_run_id: st.run_id.clone(),
            tool_call_id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments.clone(),
        };
        let mut prepared = prepare(
            self.exec.registry(),
            principal,
            tool_call,
            &limits,
            &crate::telemetry::CallTrace::default(),
        );
        // The loop's key of the call: the same on the runtime's row and the loop's events,
        // in this process and in the one that resumes the run.
        prepared.entry.call_key = Some(crate::CallKey::loop_call(st.steps, call_id).into_string());
        // A tool's question pauses the run for a person: not an error of the call.
        prepared.answering.question = crate::telemetry::QuestionForm::Asked;
        // Sign the arguments as the runtime will execute them (normalised), so key order
        // and number spelling never change an action's identity.
        let normalised = prepared.arguments().clone();
        let signature = action_signature(name, &normalised);
        let call = CallRef {
            call_id,
            tool: name,
            arguments: &normalised,
            signature: &signature,
        };

        let seen = st.counts.entry(signature.clone()).or_insert(0);
        *seen += 1;
        if *seen > self.config.max_repeats {
            let times = *seen;
            prepared.record_outcome("no_progress");
            st.push_result(
                &call,
                ResultStatus::Denied,
                ResultSource::Policy,
                &text::repeated_action(times - 1),
            );
            let detail = format!("no_progress: same action proposed {times} times");
            let event = Event::new(AgentEventKind::Stopped)
                .call(&call)
                .detail(detail);
            self.record(st, principal, event).await?;
            return Ok(Some(RunStatus::NoProgress { signature }));
        }

        match &prepared.admission {
            Ok(_) => {}
            // Arguments the model can correct: the runtime records the refusal, like any
            // tool error, and the model is told what to fix.
            Err(refused) if matches!(refused.check, Check::InvalidArguments | Check::ClientRef) => {
                self.record(
                    st,
                    principal,
                    Event::new(AgentEventKind::Started).call(&call),
                )
                .await?;
                let result = self
                    .exec
                    .finish(principal, prepared, InputAnswers::default(), None)
                    .await;
                return self.answered(principal, st, &call, Some(result)).await;
            }
            Err(refused) => {
                let denial = Denial::from(refused);
                prepared.record_outcome(Outcome::Denied.as_str());
                return self.denied(principal, st, &call, denial).await;
            }
        }

        let approved_by = match self.policy.approval(name, &normalised, &st.approvals) {
            Decision::Deny(denial) => {
                prepared.record_outcome(Outcome::Denied.as_str());
                return self.denied(principal, st, &call, denial).await;
            }
            Decision::RequireApproval { signature, reason } => {
                // The preview runs the tool's code: not before the turn is stored.
                st.settle_turn().await?;
                let preview = self
                    .preview_of(principal, st, call_id, name, &prepared)
                    .await;
                prepared.record_outcome("awaiting_approval");
                let event = Event::new(AgentEventKind::AwaitingApproval)
                    .call(&call)
                    .detail(reason.clone());
                self.record(st, principal, event).await?;
                let action = PendingAction {
                    run_id: st.run_id.clone(),
                    call_id: call_id.to_string(),
                    tool: name.to_string(),
                    arguments: normalised.clone(),
                    signature: signature.clone(),
                    reason,
                    preview,
                };
                return Ok(Some(RunStatus::AwaitingApproval { action, signature }));
            }
            Decision::Allow { approved_by } => approved_by,
        };

        // An approval bound to a preview: the action runs only if it creates that same
        // document. A hook's preview is asked again now; a draft's is compared inside
        // its transaction.
        let bound = st
            .approvals
            .iter()
            .rev()
            .find(|a| a.covers(&st.run_id, &signature))
            .and_then(|a| a.preview_digest.clone());
        let hooked = self
            .queue
            .as_ref()
            .is_some_and(|q| q.hooks.contains_key(name));
        if bound.is_some() && hooked {
            // The hook's preview asks the ERP: not before the turn is stored.
            st.settle_turn().await?;
        }
        if let Some(expected) = bound.as_deref().filter(|_| hooked)
            && let Some(now) = self
                .preview_of(principal, st, call_id, name, &prepared)
                .await
            && now.digest != expected
        {
            prepared.record_outcome("awaiting_approval");
            return self.pause_again(principal, st, &call, now).await;
        }
        let bound = bound.filter(|_| !hooked);

        // Recorded before execution, so a crash mid-call still leaves a trace.
        let event = Event::new(AgentEventKind::Started)
            .call(&call)
            .maybe_detail(approved_by.map(|who| format!("approved by {who}")));
        self.record(st, principal, event).await?;
        let remaining = self.time_left(st).unwrap_or_default();
        let result = self
            .with_deadline(
                remaining,
                self.exec
                    .finish(principal, prepared, st.answers.clone(), bound.as_deref()),
            )
            .await;
        if let Some(Ok(out)) = &result
            && let Some(now) = out.error.as_ref().and_then(changed_preview)
        {
            return self.pause_again(principal, st, &call, now).await;
        }
        self.answered(principal, st, &call, result).await
    }

    /// What the pending call would create: the remote draft's hook, or the draft handler
    /// run in a transaction that is rolled back; `None` for a read tool.
    async fn preview_of(
        &self,
        principal: &Arc<Principal>,
        st: &State,
        call_id: &str,
        name: &str,
        prepared: &Prepared<'_>,
    ) -> Option<Preview> {
        if let Some(hook) = self.queue.as_ref().and_then(|q| q.hooks.get(name)) {
            let ctx = ToolContext::new(principal.clone(), st.run_id.clone(), call_id, name);
            let args = prepared.arguments();
            return Some(
                hook.preview(&ctx, args)
                    .await
                    .unwrap_or_else(|e| Preview::refused(&e)),
            );
        }
        let Ok(admitted) = &prepared.admission else {
            return None;
        };
        match self
            .exec
            .preview(principal, &st.run_id, call_id, admitted)
            .await?
        {
            Ok(preview) => Some(preview),
            Err(e) => {
                tracing::warn!(error = %e, tool = name, "the preview could not be computed");
                Some(Preview::refused(&crate::ToolError::internal(e)))
            }
        }
    }

    /// The approved action would create another document than the preview a person
    /// approved: nothing was created, and the run pauses again with the new preview
    /// (a new approval; the old one no longer applies).
    async fn pause_again(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        call: &CallRef<'_>,
        preview: Preview,
    ) -> Result<Option<RunStatus>, AuditError> {
        let run_id = st.run_id.clone();
        st.approvals.retain(|a| !a.covers(&run_id, call.signature));
        // The same proposal waits again; resuming it is not a repeat of the action.
        if let Some(seen) = st.counts.get_mut(call.signature) {
            *seen = seen.saturating_sub(1);
        }
        let reason = super::text::preview_changed();
        let event = Event::new(AgentEventKind::AwaitingApproval)
            .call(call)
            .detail(reason.clone());
        self.record(st, principal, event).await?;
        let action = PendingAction {
            run_id,
            call_id: call.call_id.to_string(),
            tool: call.tool.to_string(),
            arguments: call.arguments.clone(),
            signature: call.signature.to_string(),
            reason,
            preview: Some(preview),
        };
        let signature = call.signature.to_string();
        Ok(Some(RunStatus::AwaitingApproval { action, signature }))
    }

    /// A call the policy or admission refused: told to the model, audited, the run goes on.
    async fn denied(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        call: &CallRef<'_>,
        denial: Denial,
    ) -> Result<Option<RunStatus>, AuditError> {
        st.push_result(
            call,
            ResultStatus::Denied,
            ResultSource::Policy,
            &denial.message,
        );
        let detail = format!("{}: {}", serde_plain(&denial.reason), denial.message);
        let event = Event::new(AgentEventKind::Denied).call(call).detail(detail);
        self.record(st, principal, event).await?;
        Ok(None)
    }

    /// Feeds a call's result (or its timeout, `None`) back to the model and audits how it
    /// ended.
    async fn answered(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        call: &CallRef<'_>,
        result: Option<Result<crate::runtime::CallOutcome, CallError>>,
    ) -> Result<Option<RunStatus>, AuditError> {
        let (kind, detail) = match result {
            None => {
                st.push_result(
                    call,
                    ResultStatus::InternalError,
                    ResultSource::Policy,
                    text::CALL_TIMED_OUT,
                );
                let detail = "timeout: the call did not finish in time; outcome unknown";
                let event = Event::new(AgentEventKind::Failed).call(call).detail(detail);
                self.record(st, principal, event).await?;
                let stop = Event::new(AgentEventKind::Stopped).detail("timeout");
                self.record(st, principal, stop).await?;
                return Ok(Some(RunStatus::Timeout));
            }
            Some(Ok(out)) if out.input_request().is_some() => {
                // A person must decide: the run stops, nothing was written, and the call
                // runs again with the answer (`Agent::answer`). No result goes to the
                // model, so the call's only result will be the one after the answer.
                let input = out.input_request().unwrap_or_else(|| unreachable!());
                let event = Event::new(AgentEventKind::AwaitingInput)
                    .call(call)
                    .detail(super::text::awaiting_input(&input));
                self.record(st, principal, event).await?;
                let action = PendingAction {
                    run_id: st.run_id.clone(),
                    call_id: call.call_id.to_string(),
                    tool: call.tool.to_string(),
                    arguments: call.arguments.clone(),
                    signature: call.signature.to_string(),
                    reason: input.question.clone(),
                    preview: None,
                };
                return Ok(Some(RunStatus::AwaitingInput { action, input }));
            }
            Some(Ok(out)) => {
                st.answers = Default::default();
                let (status, source, event) = match out.outcome {
                    Outcome::Ok => (ResultStatus::Ok, ResultSource::Tool, None),
                    Outcome::Replayed => (ResultStatus::Replayed, ResultSource::Tool, None),
                    Outcome::ToolError | Outcome::Interrupted => (
                        ResultStatus::ToolError,
                        ResultSource::Tool,
                        Some(AgentEventKind::Failed),
                    ),
                    Outcome::Denied => (
                        ResultStatus::Denied,
                        ResultSource::Policy,
                        Some(AgentEventKind::Denied),
                    ),
                };
                st.push_result(call, status, source, &out.text);
                match event {
                    Some(kind) => (kind, out.text),
                    None => return Ok(None),
                }
            }
            Some(Err(CallError::UnknownTool(_, text))) => {
                st.push_result(call, ResultStatus::Denied, ResultSource::Policy, &text);
                (AgentEventKind::Denied, text)
            }
            Some(Err(CallError::Internal(detail))) => {
                st.push_result(
                    call,
                    ResultStatus::InternalError,
                    ResultSource::Policy,
                    text::CALL_FAILED_INSIDE,
                );
                (AgentEventKind::Failed, format!("internal error: {detail}"))
            }
        };
        let event = Event::new(kind).call(call).detail(detail);
        self.record(st, principal, event).await?;
        Ok(None)
    }
}

fn serde_plain<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}
