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
//!  admission (the pipeline's, as for MCP; pure: code, config and the principal only)
//!    1. tool known?  2. scopes held?  3. arguments valid?  4. under the hard limits
//!       (the tool's and the policy's)?  then the policy: 5. approved if needed?
//!        │ denied → told to the model, loop continues
//!        │ approval needed → run stops: AwaitingApproval (PausedRun, resumable)
//!        ▼ allowed
//!  ToolRuntime        (the MCP pipeline, past admission: idempotency, per-call audit)
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
//! - [`ApprovalQueue`] / [`StoredApproval`]: durable approvals in the database: stored
//!   when a run pauses, decided by another person (four eyes), expiring, resumed once.
//! - [`Agent`] / [`RunOutcome`] / [`RunStatus`]: the loop and how it ended.
//! - [`RunLog`] / [`LoggedRun`]: runs kept as a log in the database, continued after a
//!   crash by any process ([`Agent::take_over`], [`Agent::recover_runs`], or a
//!   [`RunWorker`] started with [`Agent::recover_runs_every`]).
//! - [`Clock`] / [`SystemClock`] / [`ManualClock`]: time, injectable for tests.
//! - [`AuditSink`] / [`AgentEvent`]: the loop's audit events.
//!
//! ```no_run
//! # async fn demo(registry: erp_tools_core::ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
//! use std::{sync::Arc, time::Duration};
//! use erp_tools_core::agent::{Agent, ModelAction, Policy, RunStatus, ScriptedModel};
//! use erp_tools_core::{Database, Principal, ToolRuntime};
//! use serde_json::json;
//!
//! let runtime = ToolRuntime::new(Arc::new(registry), Database::open("sqlite://erp.db").await?);
//! // Policy in code, outside the model: nothing the model reads can change it.
//! let policy = Policy::new()
//!     .require_approval_above("finance_create_payment_request_draft", "amount", "50000")
//!     .limit("finance_create_payment_request_draft", "amount", "1000000");
//! let agent = Agent::new(runtime, policy)?.max_steps(8).max_repeats(2).timeout(Duration::from_secs(60));
//!
//! // A scripted model: a deterministic CI test for every brake and denial, no LLM.
//! let mut model = ScriptedModel::new([
//!     ModelAction::tool_call("purchasing_get_vendor_summary", json!({"vendor_code": "V-0001"})),
//!     ModelAction::tool_call("finance_create_payment_request_draft",
//!         json!({"vendor_code": "V-0001", "amount": "85000", "client_ref": "inv-7", "note": null})),
//!     ModelAction::answer("Payment request drafted for review."),
//! ]);
//! let budi = Arc::new(Principal::builder("budi", 1, "SBY-01")
//!     .scopes(["purchasing:read", "finance:draft"]).build());
//! let outcome = agent.run(&budi, &mut model, "Pay V-0001's invoice 7").await;
//! if let RunStatus::AwaitingApproval { action, .. } = &outcome.status {
//!     let stored = serde_json::to_string(&outcome.paused().unwrap())?; // resume in any process
//!     let approval = action.approve("siti.finance"); // binds to this exact action
//!     let done = agent.resume(&budi, &mut model, serde_json::from_str(&stored)?, approval).await?;
//!     assert_eq!(done.answer(), Some("Payment request drafted for review."));
//! }
//! # Ok(()) }
//! ```
//!
//! The guide's chapter: *The agent loop, approvals and notifications* (`guide/src/agent.md` in the repository).

mod approval;
pub(crate) mod approvals_store;
mod approved;
mod audit;
mod budget;
mod builder;
mod clock;
mod config;
mod executor;
mod journal;
mod model;
mod notice;
mod outbox;
mod outcome;
mod policy;
#[cfg(feature = "providers")]
pub mod providers;
mod resume;
mod run;
mod run_log;
mod signature;
mod start;
mod state;
mod step;
pub(crate) mod stored;
mod takeover;
mod text;
#[cfg(feature = "webhook")]
mod webhook;
mod worker;

#[cfg(test)]
mod tests;

pub use crate::runtime::limits::value_at;
pub use approval::{Approval, PendingAction};

/// Names a person by their user id, for whoever shows an approval to people: the review
/// console ([`ReviewConfig::people`](crate::review::ReviewConfig::people)) and the MCP
/// approval card (`McpApps::people`).
pub type PeopleFn = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;
pub use approvals_store::{
    APPROVAL_GRANTED, APPROVAL_REJECTED, ApprovalQueue, DEFAULT_APPROVAL_TTL, DecisionError,
    StoredResumeError,
};
pub use audit::{AgentEvent, AgentEventKind, AuditError, AuditSink, MemoryAuditSink, RunNote};
pub use budget::{Budget, BudgetScope, SharedLedger, TokenUsage, UsageLedger};
pub use builder::Agent;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{AgentConfig, DEFAULT_SYSTEM_PROMPT};
pub use model::{
    Message, Model, ModelAction, ModelError, ResultSource, ResultStatus, ScriptedModel,
    ToolResultMessage, ToolSpec, last_tool_result, wrap_tool_result,
};
pub use notice::{APPROVAL_EXPIRED, APPROVAL_WAITING, ApprovalNotice, Notification};
pub use outbox::{Delivery, DeliveryPass, Outbox, OutboxEntry, RetryPolicy};
pub use outcome::{PausedRun, ResumeError, RunOutcome, RunRequest, RunStatus};
pub use policy::{Decision, Denial, DenialReason, Policy, PolicyError};
pub use run_log::{CANNOT_CONTINUE, LoggedRun, RUN_CANNOT_CONTINUE, RUN_TAKEN_OVER, RunLog};
pub use signature::{action_digest, action_signature};
pub use stored::{ApprovalStatus, StoredApproval};
pub use takeover::{Recovered, TakeOverError};
#[cfg(feature = "webhook")]
pub use webhook::{WebhookSecret, WebhookSender, signature as webhook_signature};
pub use worker::RunWorker;
