//! The agent runtime: a loop around an untrusted model that always stops, with policy in
//! code outside the model.
//!
//! ```text
//!  user request (scopes from the user's token)
//!        │
//!        ▼
//!  Agent::run ◀── brakes: step budget · repeated action · timeout (injectable Clock)
//!        │ model proposes an action (ModelAction)
//!        ▼
//!  Policy::evaluate  (pure, synchronous; reads code, config and the principal only)
//!    1. tool known?  2. scopes held?  3. under the hard limits?  4. approved if needed?
//!        │ denied → told to the model, loop continues
//!        │ approval needed → run stops: AwaitingApproval (PausedRun, resumable)
//!        ▼ allowed
//!  ToolRuntime::call  (the MCP pipeline: validation, idempotency, per-call audit)
//!        │ result wrapped as <tool_result ... trust="untrusted-data"> and fed back
//!        ▼
//!  audit: started · denied · failed · answered
//! ```
//!
//! - [`Model`] / [`ScriptedModel`]: the model interface and a deterministic model for CI.
//! - [`action_signature`]: the identity of one action (tool + canonical arguments), used
//!   by repeat detection, approvals and (through the same canonical JSON) idempotency.
//! - [`Policy`]: unknown tool → missing scope → hard limit → approval, in that order.
//! - [`Approval`] / [`PendingAction`] / [`PausedRun`]: approvals bound to one signature;
//!   paused runs serialise and resume in another process.
//! - [`Agent`] / [`RunOutcome`] / [`RunStatus`]: the loop and how it ended.
//! - [`Clock`] / [`SystemClock`] / [`ManualClock`]: time, injectable for tests.
//! - [`AuditSink`] / [`AgentEvent`]: the loop's audit events.

mod approval;
mod audit;
mod clock;
mod model;
mod policy;
mod run;
mod signature;

#[cfg(test)]
mod tests;

pub use approval::{Approval, PendingAction};
pub use audit::{AgentEvent, AgentEventKind, AuditError, AuditSink, MemoryAuditSink};
pub use clock::{Clock, ManualClock, SystemClock};
pub use model::{
    Message, Model, ModelAction, ModelError, ResultSource, ResultStatus, ScriptedModel,
    ToolResultMessage, ToolSpec, last_tool_result, wrap_tool_result,
};
pub use policy::{Decision, Denial, DenialReason, Policy, value_at};
pub use run::{
    Agent, AgentConfig, DEFAULT_SYSTEM_PROMPT, PausedRun, ResumeError, RunOutcome, RunRequest,
    RunStatus,
};
pub use signature::{action_digest, action_signature};
