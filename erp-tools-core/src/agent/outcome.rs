//! How a run ends: [`RunStatus`] and [`RunOutcome`]; a run paused for approval as
//! [`PausedRun`], and why resuming one can fail ([`ResumeError`]); a new run's
//! [`RunRequest`].

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::approval::{Approval, PendingAction};
use super::audit::AgentEvent;
use super::budget::{BudgetScope, TokenUsage};
use super::model::Message;
use crate::tool::input::{InputAnswers, InputRequest};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// The model answered.
    Done {
        /// The model's answer.
        answer: String,
    },
    /// The step budget ran out.
    StepLimit,
    /// The time budget ran out.
    Timeout,
    /// The model proposed the same action too many times.
    NoProgress {
        /// The repeated action.
        signature: String,
    },
    /// The policy wants a person to approve `action` first. Nothing was executed; resume
    /// with [`Agent::resume`](super::Agent::resume) and an [`Approval`] of exactly this signature.
    AwaitingApproval {
        /// The proposed action.
        action: PendingAction,
        /// Its signature (also in `action`).
        signature: String,
    },
    /// The spend cap stopped the run: the next model turn would pass the run's or the
    /// integration's token limit (see [`Budget`](super::Budget)). Nothing further was
    /// asked or executed.
    BudgetExhausted {
        /// Which limit.
        #[serde(flatten)]
        scope: BudgetScope,
        /// Tokens used so far under that limit.
        used: u64,
        /// The limit.
        limit: u64,
    },
    /// A tool needs a person's decision before it can run (see
    /// [`ToolError::needs_input`](crate::ToolError::needs_input)). Nothing was written;
    /// resume with [`Agent::answer`](super::Agent::answer) and one of the choices.
    AwaitingInput {
        /// The call waiting for the answer (it runs again, with the answer).
        action: PendingAction,
        /// The question and the allowed answers.
        input: InputRequest,
    },
    /// The model or the audit store failed, so the run could not continue safely, or the
    /// run could not start because its run id is invalid or the run belongs to another
    /// person. Never caused by a tool result.
    Aborted {
        /// What failed.
        reason: String,
    },
}

impl RunStatus {
    /// `done`, `step_limit`, `timeout`, `no_progress`, `awaiting_approval`,
    /// `budget_exhausted`, `awaiting_input` or `aborted`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunStatus::Done { .. } => "done",
            RunStatus::StepLimit => "step_limit",
            RunStatus::Timeout => "timeout",
            RunStatus::NoProgress { .. } => "no_progress",
            RunStatus::AwaitingApproval { .. } => "awaiting_approval",
            RunStatus::BudgetExhausted { .. } => "budget_exhausted",
            RunStatus::AwaitingInput { .. } => "awaiting_input",
            RunStatus::Aborted { .. } => "aborted",
        }
    }
}

/// The result of [`Agent::run`](super::Agent::run) or [`Agent::resume`](super::Agent::resume): how it ended, the whole
/// conversation and the loop's audit trail (including the part before a pause).
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The run id (idempotency keys and audit rows are scoped to it).
    pub run_id: String,
    /// How the run ended.
    pub status: RunStatus,
    /// Model turns taken.
    pub steps: u32,
    /// The conversation, starting with the system and user messages.
    pub history: Vec<Message>,
    /// The loop's audit events, in order.
    pub audit: Vec<AgentEvent>,
    /// Time spent running (not paused).
    pub elapsed: Duration,
    /// Tokens the model used in this run (pauses included), as its provider reported.
    pub usage: TokenUsage,
    pub(super) counts: BTreeMap<String, u32>,
    pub(super) approvals: Vec<Approval>,
    pub(super) on_behalf_of: String,
    pub(super) branch_id: i64,
    pub(super) max_turn: u64,
    pub(super) answers: InputAnswers,
}

impl RunOutcome {
    /// The model's answer, if the run is done.
    pub fn answer(&self) -> Option<&str> {
        match &self.status {
            RunStatus::Done { answer } => Some(answer),
            _ => None,
        }
    }

    /// The action waiting for approval or for an answer, if any.
    pub fn pending(&self) -> Option<&PendingAction> {
        match &self.status {
            RunStatus::AwaitingApproval { action, .. }
            | RunStatus::AwaitingInput { action, .. } => Some(action),
            _ => None,
        }
    }

    /// The question waiting for a person's answer, if any.
    pub fn question(&self) -> Option<&InputRequest> {
        match &self.status {
            RunStatus::AwaitingInput { input, .. } => Some(input),
            _ => None,
        }
    }

    /// The run's state for [`Agent::resume`](super::Agent::resume) (waiting for approval)
    /// or [`Agent::answer`](super::Agent::answer) (waiting for an answer), if it is
    /// paused. Serialise it (serde JSON) to resume in another process.
    pub fn paused(&self) -> Option<PausedRun> {
        let pending = self.pending()?.clone();
        Some(PausedRun {
            version: PausedRun::VERSION,
            run_id: self.run_id.clone(),
            on_behalf_of: self.on_behalf_of.clone(),
            branch_id: self.branch_id,
            steps: self.steps,
            elapsed_ms: u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
            action_counts: self.counts.clone(),
            approvals: self.approvals.clone(),
            pending,
            history: self.history.clone(),
            audit: self.audit.clone(),
            input: self.question().cloned(),
            answers: self.answers.clone(),
            usage: self.usage,
            max_turn_tokens: self.max_turn,
        })
    }

    /// The audit trail as one-line summaries (`started:tool | denied:tool(reason) | ...`).
    pub fn audit_summary(&self) -> Vec<String> {
        self.audit.iter().map(AgentEvent::summary).collect()
    }
}

/// A run stopped for approval, in a form that survives a restart: serialise it with
/// serde (JSON), store it, and hand it to [`Agent::resume`](super::Agent::resume) with the approval.
///
/// It holds no authority. Resuming re-checks everything against the principal
/// authenticated at resume time, which must be the same person and branch, and the
/// approval must name exactly the pending action's signature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PausedRun {
    /// Format version.
    pub version: u32,
    /// The run id.
    pub run_id: String,
    /// The user the run acts for.
    pub on_behalf_of: String,
    /// Their branch.
    pub branch_id: i64,
    /// Model turns taken so far.
    pub steps: u32,
    /// Running time so far, in milliseconds.
    pub elapsed_ms: u64,
    /// How often each action signature was proposed (for repeat detection).
    pub action_counts: BTreeMap<String, u32>,
    /// Approvals recorded in this run so far.
    pub approvals: Vec<Approval>,
    /// The action waiting for approval.
    pub pending: PendingAction,
    /// The conversation so far (its last entry is the pending tool call).
    pub history: Vec<Message>,
    /// The audit trail so far.
    pub audit: Vec<AgentEvent>,
    /// The question the run waits for, if it waits for an answer rather than an approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<InputRequest>,
    /// Answers already given to the pending call's earlier questions.
    #[serde(default, skip_serializing_if = "InputAnswers::is_empty")]
    pub answers: InputAnswers,
    /// Tokens used so far.
    #[serde(default)]
    pub usage: TokenUsage,
    /// The largest single model turn so far, in tokens (the spend cap's estimate of the
    /// next one).
    #[serde(default)]
    pub max_turn_tokens: u64,
}

impl PausedRun {
    /// The current format version.
    pub const VERSION: u32 = 1;
}

/// Why a paused run could not be resumed. Nothing was executed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// The approval names another action or run.
    #[error(
        "the approval is for `{approved}` but the run waits for `{pending}`: an approval \
         covers one exact action of one run; ask the reviewer to approve the pending action"
    )]
    ApprovalMismatch {
        /// The pending action's signature.
        pending: String,
        /// The signature the approval names.
        approved: String,
    },
    /// The resuming principal is not the person and branch the run acts for.
    #[error(
        "this run acts for user {expected_user} of branch id {expected_branch}; resume it as that user"
    )]
    WrongPrincipal {
        /// The run's user.
        expected_user: String,
        /// The run's branch id.
        expected_branch: i64,
    },
    /// The resuming principal's token is bound to another agent run.
    #[error(
        "this run is {expected}, but the token is bound to run {bound}; resume it with a token for {expected}"
    )]
    WrongRun {
        /// The paused run's id.
        expected: String,
        /// The run the token is bound to.
        bound: String,
    },
    /// The answer is not one of the question's choices.
    #[error("`{answer}` is not an allowed answer; the allowed answers are: {}", choices.join(", "))]
    AnswerNotAllowed {
        /// The answer given.
        answer: String,
        /// The allowed answers.
        choices: Vec<String>,
    },
    /// An approval was given to a run waiting for an answer, or an answer to a run
    /// waiting for an approval.
    #[error("the run waits for {waits_for}; resume it with {use_instead}")]
    WrongResume {
        /// What the run waits for (`an approval` or `an answer`).
        waits_for: &'static str,
        /// What to call instead.
        use_instead: &'static str,
    },
    /// The pending action does not match its own signature, or the run is malformed.
    #[error("the paused run is inconsistent: {0}; start a new run")]
    Inconsistent(String),
    /// The run log says the run no longer waits: it ended (`done`, `aborted`, ...) or is
    /// `running` (driven by a process, or cut off and waiting to be taken over). Nothing
    /// was run and the run's record is unchanged.
    #[error(
        "run {run_id} is not waiting to be resumed: the run log has it `{status}`; nothing \
         was run or changed (start a new run for further work)"
    )]
    NotWaiting {
        /// The run.
        run_id: String,
        /// Its status in the run log.
        status: String,
    },
    /// The run log could not be read to check that the run still waits.
    #[error("the run log could not be read: {0}; nothing was resumed, try again")]
    RunLog(String),
}

/// A new run: the user's request, plus optional run id and approvals given up front.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    /// The user's request.
    pub task: String,
    /// The run id; by default the principal's bound run, or a fresh one.
    pub run_id: Option<String>,
    /// Approvals already recorded for this run.
    pub approvals: Vec<Approval>,
}

impl RunRequest {
    /// A request for `task`.
    pub fn new(task: impl Into<String>) -> Self {
        RunRequest {
            task: task.into(),
            ..Self::default()
        }
    }
    /// Uses `run_id` (ignored when the principal's token is bound to a run).
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }
    /// Adds an approval recorded for this run.
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approvals.push(approval);
        self
    }
}
