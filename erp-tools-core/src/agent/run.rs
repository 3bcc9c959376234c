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

use futures::future::BoxFuture;

use super::approval::Approval;
use super::audit::{AgentEventKind, AuditError, AuditSink};
use super::budget::{Budget, BudgetScope, TokenUsage};
use super::clock::{Clock, SystemClock};
use super::config::AgentConfig;
use super::model::{Message, Model, ModelAction, ToolSpec};
use super::outcome::{PausedRun, ResumeError, RunOutcome, RunRequest, RunStatus};
use super::policy::{Policy, PolicyError};
use super::signature::action_signature;
use super::state::{CallRef, Event, State};
use crate::registry::ToolRegistry;
use crate::runtime::admit::{Admitted, Refused};
use crate::runtime::run_id::{self, BadRunId};
use crate::runtime::{CallError, CallOutcome, ToolCall, ToolRuntime};
use crate::schema::Target;
use crate::text;
use crate::tool::context::Principal;
use crate::tool::input::InputAnswers;

/// Why a paused run goes on: the approval to add (if any) and the event to record.
struct Resumed {
    approval: Option<Approval>,
    kind: AgentEventKind,
    detail: String,
}

/// Runs admitted tool calls. Implemented by [`ToolRuntime`]; a seam for the loop's unit
/// tests. Admission itself is pure and runs in the loop, on [`Executor::registry`].
pub(crate) trait Executor: Send + Sync {
    fn registry(&self) -> &ToolRegistry;
    /// Runs a call that admission let through (attempt row, handler, outcome row).
    fn execute<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        call: ToolCall,
        admitted: Admitted<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>>;
    /// Like [`execute`](Self::execute), delivering a person's answers to the handler.
    fn execute_with_input<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        call: ToolCall,
        admitted: Admitted<'a>,
        _input: InputAnswers,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>> {
        self.execute(principal, call, admitted)
    }
    /// Records a call admission refused for its arguments (one audit row) and answers it.
    fn refuse<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        call: ToolCall,
        refused: Refused,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>>;
    /// Whether `run` is `principal`'s (bound to it now if no one used it before).
    fn owns_run<'a>(
        &'a self,
        _principal: &'a Principal,
        _run: &'a str,
    ) -> BoxFuture<'a, Result<bool, CallError>> {
        Box::pin(async { Ok(true) })
    }
}

impl Executor for ToolRuntime {
    fn registry(&self) -> &ToolRegistry {
        self.registry()
    }
    fn execute<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        call: ToolCall,
        admitted: Admitted<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>> {
        let entry = self.entry(principal, &call.agent_run_id, &call);
        Box::pin(ToolRuntime::execute(self, principal, entry, admitted))
    }
    fn execute_with_input<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        call: ToolCall,
        admitted: Admitted<'a>,
        input: InputAnswers,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>> {
        let entry = self.entry(principal, &call.agent_run_id, &call);
        Box::pin(ToolRuntime::execute_with_input(
            self, principal, entry, admitted, input,
        ))
    }
    fn refuse<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        call: ToolCall,
        refused: Refused,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>> {
        let entry = self.entry(principal, &call.agent_run_id, &call);
        Box::pin(ToolRuntime::refuse(self, entry, refused))
    }
    fn owns_run<'a>(
        &'a self,
        principal: &'a Principal,
        run: &'a str,
    ) -> BoxFuture<'a, Result<bool, CallError>> {
        Box::pin(ToolRuntime::owns_run(self, principal, run))
    }
}

/// The agent loop around a model, with policy, brakes and audit. Build it once and share
/// it; each [`run`](Agent::run) is independent. See the [module docs](super) for a
/// complete example.
///
/// ```no_run
/// # async fn demo(
/// #     runtime: erp_tools_core::ToolRuntime,
/// #     principal: std::sync::Arc<erp_tools_core::Principal>,
/// #     mut model: erp_tools_core::agent::ScriptedModel,
/// # ) {
/// use std::time::Duration;
/// use erp_tools_core::agent::{Agent, Policy, RunStatus};
///
/// let agent = Agent::new(runtime, Policy::new())
///     .expect("the policy names only registered tools")
///     .max_steps(8)
///     .timeout(Duration::from_secs(60));
/// let outcome = agent.run(&principal, &mut model, "Reorder what is below its reorder point").await;
/// match &outcome.status {
///     RunStatus::Done { answer } => println!("{answer}"),
///     RunStatus::AwaitingApproval { action, .. } => println!("waiting for approval of {}", action.signature),
///     other => println!("stopped: {}", other.as_str()),
/// }
/// # }
/// ```
pub struct Agent {
    pub(super) exec: Arc<dyn Executor>,
    pub(super) policy: Arc<Policy>,
    pub(super) config: AgentConfig,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) sinks: Vec<Arc<dyn AuditSink>>,
    pub(super) queue: Option<super::ApprovalQueue>,
    pub(super) budget: Budget,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("policy", &self.policy)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent calling tools through `runtime` (the same pipeline as MCP: validation,
    /// scopes, idempotency, audit) under `policy`, with default settings and the system
    /// clock. Loop events are written to the runtime's database, next to the rows of the
    /// tool calls.
    ///
    /// Fails if a rule of `policy` names a tool the runtime's registry does not have
    /// (see [`Policy::check`]): a misspelt name would otherwise never apply.
    pub fn new(runtime: ToolRuntime, policy: Policy) -> Result<Self, PolicyError> {
        let db = runtime.database().clone();
        let mut agent = Self::with_executor(Arc::new(runtime), policy)?;
        agent.sinks.push(Arc::new(db));
        Ok(agent)
    }

    pub(crate) fn with_executor(
        exec: Arc<dyn Executor>,
        policy: Policy,
    ) -> Result<Self, PolicyError> {
        policy.check(exec.registry())?;
        Ok(Agent {
            exec,
            policy: Arc::new(policy),
            config: AgentConfig::default(),
            clock: Arc::new(SystemClock::new()),
            sinks: Vec::new(),
            queue: None,
            budget: Budget::default(),
        })
    }

    /// Replaces all settings.
    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }
    /// Sets the step budget.
    pub fn max_steps(mut self, n: u32) -> Self {
        self.config.max_steps = n;
        self
    }
    /// Sets how often one action may be proposed before the run stops.
    pub fn max_repeats(mut self, n: u32) -> Self {
        self.config.max_repeats = n;
        self
    }
    /// Sets the time budget.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }
    /// Sets the schema dialect of the tool list.
    pub fn target(mut self, target: Target) -> Self {
        self.config.target = target;
        self
    }
    /// Replaces the system message.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.config.system_prompt = prompt.into();
        self
    }
    /// Sets the version of your prompt, recorded in every audit row of the run.
    pub fn prompt_version(mut self, version: impl Into<String>) -> Self {
        self.config.prompt_version = Some(version.into());
        self
    }
    /// Sets the spend cap: token limits per run and per integration (see [`Budget`]).
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }
    /// Uses `clock` for the timeout brake and event times.
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }
    /// Also writes every loop event to `sink`, in addition to the runtime's database. If
    /// any sink fails, the run stops (with [`RunStatus::Aborted`]) rather than act
    /// unaudited.
    pub fn audit_sink(mut self, sink: impl AuditSink + 'static) -> Self {
        self.sinks.push(Arc::new(sink));
        self
    }

    /// The settings.
    pub fn settings(&self) -> &AgentConfig {
        &self.config
    }
    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The tools `principal` may use, as shown to the model.
    pub fn tools_for(&self, principal: &Principal) -> Vec<ToolSpec> {
        ToolSpec::list(self.exec.registry(), principal, self.config.target)
    }

    /// The system message a run for `principal` starts with: the configured prompt, then
    /// the policy's rules for this caller ([`Policy::prompt`]).
    pub fn system_message_for(&self, principal: &Principal) -> String {
        let rules = self.policy.prompt(self.exec.registry(), principal);
        if rules.is_empty() {
            self.config.system_prompt.clone()
        } else {
            format!("{}\n\n{rules}", self.config.system_prompt)
        }
    }

    /// The principal the run's audit rows name: the caller, with the model's name and
    /// the prompt version where the token names none.
    fn run_principal(&self, principal: &Arc<Principal>, model: &dyn Model) -> Arc<Principal> {
        let name = model.model_name();
        let version = self.config.prompt_version.as_deref();
        if (name.is_none() || principal.model().is_some())
            && (version.is_none() || principal.prompt_version().is_some())
        {
            return principal.clone();
        }
        Arc::new(principal.with_run_model(name, version))
    }

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
    /// checked as [`ToolRuntime::call`] checks it: an invalid run id, another person's
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
        let mut st = State {
            run_id,
            steps: 0,
            elapsed_before: Duration::ZERO,
            started: self.clock.now(),
            counts: Default::default(),
            approvals,
            history: vec![
                Message::System {
                    content: self.system_message_for(principal),
                },
                Message::User {
                    content: request.task,
                },
            ],
            audit: Vec::new(),
            usage: TokenUsage::default(),
            max_turn: 0,
            answers: InputAnswers::default(),
        };
        let status = match self.refused_run(principal, &mut st, chosen).await {
            Some(status) => status,
            None => self.drive(principal, model, &mut st).await,
        };
        let outcome = st.finish(principal, status, self.clock.as_ref());
        self.keep_pending(principal, outcome).await
    }

    /// Ends a run that may not start: its run id is invalid, or the run is not the
    /// principal's. `None` if it may start.
    async fn refused_run(
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
            Ok(run) => match self.exec.owns_run(principal, &run).await {
                Ok(true) => return None,
                Ok(false) => text::run_of_another_person(&run),
                Err(e) => {
                    return Some(RunStatus::Aborted {
                        reason: e.to_string(),
                    });
                }
            },
        };
        let reason = refusal.to_string();
        let event = Event::new(AgentEventKind::Denied).detail(reason.clone());
        Some(match self.record(st, principal, event).await {
            Ok(()) => RunStatus::Aborted { reason },
            Err(e) => RunStatus::Aborted {
                reason: e.to_string(),
            },
        })
    }

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
        Ok(self
            .continue_paused(principal, model, paused, resumed)
            .await)
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
        Ok(self
            .continue_paused(principal, model, paused, resumed)
            .await)
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

    /// Continues a checked paused run: records why it resumed, proposes the pending call
    /// again, and drives the loop on.
    async fn continue_paused(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        paused: PausedRun,
        resumed: Resumed,
    ) -> RunOutcome {
        let principal = &self.run_principal(principal, model);
        let pending = paused.pending;
        let mut st = State {
            run_id: paused.run_id,
            steps: paused.steps,
            elapsed_before: Duration::from_millis(paused.elapsed_ms),
            started: self.clock.now(),
            counts: paused.action_counts,
            approvals: paused.approvals,
            history: paused.history,
            audit: paused.audit,
            usage: paused.usage,
            max_turn: paused.max_turn_tokens,
            answers: paused.answers,
        };
        let chosen = run_id::choose(principal, Some(&st.run_id));
        if let Some(status) = self.refused_run(principal, &mut st, chosen).await {
            return st.finish(principal, status, self.clock.as_ref());
        }
        if let Some(approval) = resumed.approval {
            st.approvals.push(approval);
        }
        let status = async {
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
            Ok::<_, AuditError>(self.drive(principal, model, &mut st).await)
        }
        .await
        .unwrap_or_else(|e| RunStatus::Aborted {
            reason: e.to_string(),
        });
        let outcome = st.finish(principal, status, self.clock.as_ref());
        self.keep_pending(principal, outcome).await
    }

    async fn drive(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        st: &mut State,
    ) -> RunStatus {
        match self.steps(principal, model, st).await {
            Ok(status) => status,
            Err(e) => RunStatus::Aborted {
                reason: e.to_string(),
            },
        }
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
            let asked = self
                .with_deadline(remaining, model.next(&st.history, &tools))
                .await;
            if let Err(reason) = self.count_usage(st, model.take_usage()).await {
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
            let call_id = id
                .filter(|id| !id.is_empty() && id.len() <= 256)
                .unwrap_or_else(|| format!("call-{}", st.steps));
            st.answers = InputAnswers::default();
            st.history.push(Message::ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            });
            if let Some(end) = self
                .propose(principal, st, &call_id, &name, &arguments)
                .await?
            {
                return Ok(end);
            }
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
        let event = event.build(st, principal, self.clock.as_ref());
        let mut recorded = Ok(());
        for sink in &self.sinks {
            if let Err(e) = sink.record(principal, &event).await {
                recorded = Err(e);
                break;
            }
        }
        st.audit.push(event);
        recorded
    }
}
