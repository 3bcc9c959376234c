//! [`Agent`]: the loop's settings, how it is built, and what it shows the model.

use std::sync::Arc;
use std::time::Duration;

use super::approvals_store::ApprovalQueue;
use super::audit::AuditSink;
use super::budget::Budget;
use super::clock::{Clock, SystemClock};
use super::config::AgentConfig;
use super::executor::Executor;
use super::model::{Model, ToolSpec};
use super::policy::{Policy, PolicyError};
use super::run_log::RunLog;
use crate::runtime::ToolRuntime;
use crate::schema::Target;
use crate::tool::context::Principal;

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
    pub(super) queue: Option<ApprovalQueue>,
    pub(super) budget: Budget,
    pub(super) runs: Option<RunLog>,
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

    /// An agent over any [`Executor`] (the loop's unit tests use a stand-in).
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
            runs: None,
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
    /// any sink fails, the run stops (with [`RunStatus::Aborted`](super::RunStatus::Aborted)) rather than act
    /// unaudited.
    pub fn audit_sink(mut self, sink: impl AuditSink + 'static) -> Self {
        self.sinks.push(Arc::new(sink));
        self
    }

    /// Stores every run that pauses for approval in `queue` (see [`ApprovalQueue`]), so
    /// any process can find, decide and resume it. If the pending action cannot be
    /// stored, the run ends [`RunStatus::Aborted`](super::RunStatus::Aborted) instead
    /// (nothing was executed).
    pub fn approval_queue(mut self, queue: ApprovalQueue) -> Self {
        self.queue = Some(queue);
        self
    }

    /// Keeps every run in `log` (see [`RunLog`]): each model turn's answer is stored
    /// before its action runs, each action's outcome when it ended, and the run's status,
    /// so a run cut off by a dead process is continued by another with
    /// [`take_over`](Self::take_over). A failing log write stops the run
    /// ([`RunStatus::Aborted`](super::RunStatus::Aborted)) before anything further runs.
    pub fn run_log(mut self, log: RunLog) -> Self {
        self.runs = Some(log);
        self
    }

    /// The log runs are kept in, if any.
    pub fn runs(&self) -> Option<&RunLog> {
        self.runs.as_ref()
    }

    /// The queue paused runs are stored in, if any.
    pub fn queue(&self) -> Option<&ApprovalQueue> {
        self.queue.as_ref()
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
    pub(super) fn run_principal(
        &self,
        principal: &Arc<Principal>,
        model: &dyn Model,
    ) -> Arc<Principal> {
        let name = model.model_name();
        let version = self.config.prompt_version.as_deref();
        if (name.is_none() || principal.model().is_some())
            && (version.is_none() || principal.prompt_version().is_some())
        {
            return principal.clone();
        }
        Arc::new(principal.with_run_model(name, version))
    }
}
