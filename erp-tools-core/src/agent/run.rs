//! The loop: ask the model, admit the proposed call and check the policy's approvals,
//! run the tool through the same pipeline as MCP, feed the result back as data, until the
//! model answers or a brake stops it. One proposed call is handled in `step.rs`.
//!
//! Three brakes are always on, each catching a different way a loop fails to end:
//!
//! - **step budget** ([`AgentConfig::max_steps`]): a model that keeps making new, plausible
//!   moves and never finishes;
//! - **repeated action** ([`AgentConfig::max_repeats`]): a model stuck proposing the same
//!   [signature](super::action_signature) again and again;
//! - **timeout** ([`AgentConfig::timeout`], measured by an injectable [`Clock`]): every
//!   step is new and legal, but a slow model or tool call eats the time. Model and tool
//!   calls are raced against the remaining time, so even a call that hangs is bounded.
//!
//! Every exit has an explicit [`RunStatus`] and returns the full history and audit trail.
//!
//! # Failures do not undo earlier steps
//!
//! Each tool call commits (or rolls back) on its own. When step 3 fails, steps 1 and 2
//! stay done: there is no rollback across steps, because some effects (a document a
//! reviewer already saw, a message already sent) cannot be taken back. The failure is
//! audited and told to the model, which can then end with an honest answer ("the draft
//! exists, the second step failed"). Design tasks so that the steps that are hardest to
//! undo come **last**, and keep truly irreversible actions out of the agent's tools
//! altogether: the agent drafts, a person posts.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::audit::{AgentEventKind, AuditError};
use super::budget::{BudgetScope, TokenUsage};
use super::builder::Agent;
use super::model::{Message, Model, ModelAction};
use super::outcome::RunStatus;
use super::state::{Event, State};
use crate::telemetry::span;
use crate::tool::context::Principal;
use crate::tool::input::InputAnswers;
use tracing::Instrument;

impl Agent {
    /// Drives the loop until it stops; an audit failure aborts the run.
    pub(super) async fn drive(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        st: &mut State,
    ) -> RunStatus {
        // The run's span (GenAI `invoke_agent`); model turns and tool calls are its children.
        let span = tracing::info_span!(
            "erp_tools.agent_run",
            otel.name = "invoke_agent erp-tools",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = "erp-tools",
            erp_tools.run_id = %st.run_id,
            enduser.id = %principal.user_id(),
            erp_tools.run.status = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            otel.status_description = tracing::field::Empty,
        );
        let ran = self
            .steps(principal, model, st)
            .instrument(span.clone())
            .await;
        // Every way out of the loop has waited for the last turn's answer; this only makes
        // sure no write of the run is left behind its status.
        let settled = st.settle_turn().await;
        let status = match ran.and_then(|status| settled.map(|()| status)) {
            Ok(status) => status,
            Err(e) => RunStatus::Aborted {
                reason: e.to_string(),
            },
        };
        record_run_status(&span, &status);
        status
    }

    /// The loop: brakes, then one model turn, until an answer or a stop.
    async fn steps(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        st: &mut State,
    ) -> Result<RunStatus, AuditError> {
        let tools = self.tools_for(principal);
        loop {
            if st.steps >= self.config.max_steps {
                let detail = format!("step_limit: {} steps taken", st.steps);
                return self.stop(principal, st, RunStatus::StepLimit, detail).await;
            }
            if self.time_left(st).is_none() {
                let detail = "timeout before the next step".to_string();
                return self.stop(principal, st, RunStatus::Timeout, detail).await;
            }
            if let Some(stop) = self.over_budget(st).await {
                let (status, detail) = stop?;
                return self.stop(principal, st, status, detail).await;
            }
            st.steps += 1;
            let remaining = self.time_left(st).unwrap_or_default();
            let turn = model_span(model.model_name());
            let asked = self
                .with_deadline(remaining, model.next(&st.history, &tools))
                .instrument(turn.clone())
                .await;
            let usage = model.take_usage();
            // The answer is stored before anything of the turn runs: a process that dies
            // once it is does not ask (nor pay for) this turn again. The write goes on
            // while the step's first audit event is written (`record`).
            if let Some(Ok(action)) = &asked {
                self.log_turn(st, action, usage)?;
            }
            // Integers, as the GenAI conventions define them (a `u64` would be exported
            // as a string).
            turn.record("gen_ai.usage.input_tokens", tokens(usage.input_tokens));
            turn.record("gen_ai.usage.output_tokens", tokens(usage.output_tokens));
            match &asked {
                None => span::record_error(&turn, "timeout", "no answer before the deadline"),
                Some(Err(_)) => span::record_error(&turn, "model_error", "the model failed"),
                Some(Ok(_)) => {}
            }
            drop(turn);
            if let Err(reason) = self.count_usage(st, usage).await {
                let status = RunStatus::Aborted {
                    reason: reason.clone(),
                };
                return self.stop(principal, st, status, reason).await;
            }
            let action = match asked {
                None => {
                    let detail = "timeout waiting for the model".to_string();
                    return self.stop(principal, st, RunStatus::Timeout, detail).await;
                }
                Some(Err(e)) => {
                    let reason = format!("the model failed: {e}");
                    let status = RunStatus::Aborted {
                        reason: reason.clone(),
                    };
                    return self.stop(principal, st, status, reason).await;
                }
                Some(Ok(action)) => action,
            };
            if self.time_left(st).is_none() {
                // The proposal arrived after the deadline: it is not executed.
                let detail = "timeout waiting for the model".to_string();
                return self.stop(principal, st, RunStatus::Timeout, detail).await;
            }
            let (name, arguments, id) = match action {
                ModelAction::Answer(answer) => {
                    st.history.push(Message::Answer {
                        content: answer.clone(),
                    });
                    self.record(st, principal, Event::new(AgentEventKind::Answered))
                        .await?;
                    return Ok(RunStatus::Done { answer });
                }
                ModelAction::ToolCall {
                    name,
                    arguments,
                    id,
                } => (name, arguments, id),
            };
            let call_id = super::journal::call_id_of(id, st.steps);
            st.answers = InputAnswers::default();
            st.history.push(Message::ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            });
            let mark = st.history.len();
            if let Some(end) = self
                .propose(principal, st, &call_id, &name, &arguments)
                .await?
            {
                return Ok(end);
            }
            self.log_outcome(st, mark)?;
        }
    }

    /// Whether the spend cap stops the run before the next model turn: the status and
    /// the audit detail if it does (`Err` if the ledger failed).
    async fn over_budget(&self, st: &State) -> Option<Result<(RunStatus, String), AuditError>> {
        let next = st.max_turn;
        let exhausted = |scope: BudgetScope, used: u64, limit: u64| {
            (used.saturating_add(next) > limit || used >= limit).then(|| {
                let detail = super::text::budget_exhausted(&scope, used, next, limit);
                (RunStatus::BudgetExhausted { scope, used, limit }, detail)
            })
        };
        if let Some(limit) = self.budget.run_limit
            && let Some(stop) = exhausted(BudgetScope::Run, st.usage.total(), limit)
        {
            return Some(Ok(stop));
        }
        let integration = self.budget.integration.as_ref()?;
        let used = match integration.ledger.used(&integration.name).await {
            Ok(used) => used,
            Err(e) => return Some(Err(AuditError(format!("the usage ledger failed: {e}")))),
        };
        let scope = BudgetScope::Integration {
            name: integration.name.clone(),
        };
        exhausted(scope, used, integration.limit).map(Ok)
    }

    /// Adds one turn's tokens to the run and to the integration's ledger.
    async fn count_usage(&self, st: &mut State, turn: TokenUsage) -> Result<(), String> {
        st.usage += turn;
        st.max_turn = st.max_turn.max(turn.total());
        if let Some(integration) = &self.budget.integration
            && turn.total() > 0
        {
            // The turn is in the run log before the ledger counts it: a turn counted is
            // never asked again.
            st.settle_turn().await.map_err(|e| e.to_string())?;
            integration
                .ledger
                .add(&integration.name, turn)
                .await
                .map_err(|e| format!("the usage ledger failed: {e}"))?;
        }
        Ok(())
    }

    /// Records the final `stopped` event and returns `status`.
    pub(super) async fn stop(
        &self,
        principal: &Arc<Principal>,
        st: &mut State,
        status: RunStatus,
        detail: String,
    ) -> Result<RunStatus, AuditError> {
        self.record(
            st,
            principal,
            Event::new(AgentEventKind::Stopped).detail(detail),
        )
        .await?;
        Ok(status)
    }

    pub(super) fn time_left(&self, st: &State) -> Option<Duration> {
        let elapsed = st.elapsed(self.clock.as_ref());
        self.config
            .timeout
            .checked_sub(elapsed)
            .filter(|d| !d.is_zero())
    }

    pub(super) async fn with_deadline<T>(
        &self,
        remaining: Duration,
        fut: impl Future<Output = T>,
    ) -> Option<T> {
        let sleep = self.clock.sleep(remaining);
        tokio::select! {
            biased;
            v = fut => Some(v),
            () = sleep => None,
        }
    }

    /// Records an event in every sink (the run stops if one fails) and in the run's trail.
    pub(super) async fn record(
        &self,
        st: &mut State,
        principal: &Principal,
        event: Event<'_>,
    ) -> Result<(), AuditError> {
        let mut event = event.build(st, principal, self.clock.as_ref());
        event.surface = Some(self.exec.registry().fingerprint().to_string());
        // The turn's answer, if it is still being stored, is written alongside: both are
        // done before this returns.
        let stored = st.turn_pending.take();
        let recorded = async {
            for sink in &self.sinks {
                sink.record(principal, &event).await?;
            }
            Ok(())
        };
        let (stored, recorded) = futures::join!(stored, recorded);
        st.audit.push(event);
        stored.and(recorded)
    }
}

/// The span of one model turn (GenAI `chat {model}`): the model asked for, and the
/// tokens of its answer once known. Prompts and answers are not recorded.
fn model_span(model: Option<&str>) -> tracing::Span {
    let model = model.unwrap_or("unknown");
    tracing::info_span!(
        "gen_ai.chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = %model,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    )
}

/// A token count as the span's integer.
fn tokens(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Records how a run ended on its `invoke_agent` span: `erp_tools.run.status`, and for a
/// run that stopped without an answer (a brake, the model or the audit store failing)
/// `error.type` (the status) and the status Error. A run waiting for a person is not an
/// error.
fn record_run_status(span: &tracing::Span, status: &RunStatus) {
    let word = status.as_str();
    span.record("erp_tools.run.status", word);
    let stopped = !matches!(
        status,
        RunStatus::Done { .. }
            | RunStatus::AwaitingApproval { .. }
            | RunStatus::AwaitingInput { .. }
    );
    if stopped {
        span::record_error(span, word, word);
    }
}
