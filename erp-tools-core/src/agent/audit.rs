//! Audit events of the agent loop: `started` (written *before* a tool runs, so a crash
//! leaves a trace), `denied`, `failed`, `answered`, plus `awaiting_approval`, `approved`
//! and `stopped` (a brake ended the run).
//!
//! These complement the tool runtime's one-row-per-call audit: the runtime records what
//! each call did, the loop records why the agent did or did not get to make it. Both are
//! written by the framework, never by the model.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;

use crate::tool::context::Principal;
use serde::{Deserialize, Serialize};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentEventKind {
    /// A tool call is about to run (recorded before execution). Success is the absence
    /// of a later `failed` for the same call.
    Started,
    /// The policy or the runtime refused a call; nothing ran.
    Denied,
    /// A call ran and failed, or its outcome is unknown (internal error, timeout).
    Failed,
    /// The model gave its final answer.
    Answered,
    /// The run stopped to wait for a person's approval; nothing ran.
    AwaitingApproval,
    /// A paused run was resumed with an approval.
    Approved,
    /// A brake stopped the run (step limit, repeated action, timeout, spend cap) or it
    /// was aborted.
    Stopped,
    /// A tool asked a question a person must answer; the run stopped, nothing was written.
    AwaitingInput,
    /// A paused run was resumed with a person's answer.
    InputGiven,
}

impl AgentEventKind {
    /// The event name as stored, e.g. `started`.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentEventKind::Started => "started",
            AgentEventKind::Denied => "denied",
            AgentEventKind::Failed => "failed",
            AgentEventKind::Answered => "answered",
            AgentEventKind::AwaitingApproval => "awaiting_approval",
            AgentEventKind::Approved => "approved",
            AgentEventKind::Stopped => "stopped",
            AgentEventKind::AwaitingInput => "awaiting_input",
            AgentEventKind::InputGiven => "input_given",
        }
    }
}

/// One audit event of the loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentEvent {
    /// The run.
    pub run_id: String,
    /// The step (model turn) it belongs to, from 1.
    pub step: u32,
    /// What happened.
    pub kind: AgentEventKind,
    /// The tool involved, if any.
    pub tool: Option<String>,
    /// The call id, if a tool call is involved.
    pub call_id: Option<String>,
    /// The action signature, if a tool call is involved.
    pub signature: Option<String>,
    /// The call's arguments as the runtime executes them (normalised), if a tool call is
    /// involved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// Why (denial reason, failure text, approver, brake).
    pub detail: Option<String>,
    /// The person on whose behalf the agent acts.
    pub on_behalf_of: String,
    /// Their branch's business code.
    pub branch_code: String,
    /// When.
    pub at: DateTime<Utc>,
    /// The tool surface the run saw (the registry's
    /// [`fingerprint`](crate::ToolRegistry::fingerprint)), written on the event's audit row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
}

impl AgentEvent {
    /// A one-line summary, `kind:tool(detail)`, for logs and test output.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}:{}",
            self.kind.as_str(),
            self.tool.as_deref().unwrap_or("-")
        );
        if let Some(d) = &self.detail {
            s.push_str(&format!("({d})"));
        }
        s
    }
}

/// The audit store could not record an event. The loop then stops rather than act
/// unaudited.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the audit store could not record the event: {0}")]
pub struct AuditError(pub String);

/// Where the loop writes its audit events.
pub trait AuditSink: Send + Sync {
    /// Records one event durably (or fails). `principal` is the authenticated caller the
    /// run acts for (the event already names the user and branch code).
    fn record<'a>(
        &'a self,
        principal: &'a Principal,
        event: &'a AgentEvent,
    ) -> BoxFuture<'a, Result<(), AuditError>>;

    /// Notes what the run was asked and how it ended, for a person reading its story
    /// later. The default keeps nothing; the [`Database`](crate::Database) keeps it on
    /// the run (`erp_agent_runs`), where the review console shows it.
    fn note_run<'a>(
        &'a self,
        principal: &'a Principal,
        run_id: &'a str,
        note: RunNote<'a>,
    ) -> BoxFuture<'a, Result<(), AuditError>> {
        let _ = (principal, run_id, note);
        Box::pin(async { Ok(()) })
    }
}

/// What [`AuditSink::note_run`] keeps about a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunNote<'a> {
    /// The task the run was given (the person's request).
    Task(&'a str),
    /// How the run ended (a [`RunStatus`](super::RunStatus) name such as `done` or
    /// `awaiting_approval`), with the model's final answer when it gave one.
    Ended {
        /// The status name.
        status: &'a str,
        /// The final answer, or the reason the run stopped.
        text: Option<&'a str>,
    },
}

/// Keeps events in memory; for tests and for hosts that ship the trail elsewhere.
/// Clones share the same list.
#[derive(Clone, Debug, Default)]
pub struct MemoryAuditSink {
    events: Arc<Mutex<Vec<AgentEvent>>>,
}

impl MemoryAuditSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every event recorded so far, in order.
    pub fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl AuditSink for MemoryAuditSink {
    fn record<'a>(
        &'a self,
        _principal: &'a Principal,
        event: &'a AgentEvent,
    ) -> BoxFuture<'a, Result<(), AuditError>> {
        let result = self
            .events
            .lock()
            .map(|mut e| e.push(event.clone()))
            .map_err(|_| AuditError("the in-memory audit list is poisoned".into()));
        Box::pin(async move { result })
    }
}

/// The loop's events go into the same audit log as the tool calls, with
/// `source = "agent"` and the event name as the outcome (`started`, `denied`, ...).
impl AuditSink for crate::Database {
    fn record<'a>(
        &'a self,
        principal: &'a Principal,
        event: &'a AgentEvent,
    ) -> BoxFuture<'a, Result<(), AuditError>> {
        Box::pin(async move {
            let mut entry =
                crate::audit::AuditEntry::new(principal, event.run_id.clone(), event.kind.as_str())
                    .step(i64::from(event.step));
            entry.action_signature = event.signature.clone();
            entry.tool_name = event.tool.clone();
            entry.tool_call_id = event.call_id.clone();
            entry.call_key = event
                .call_id
                .as_deref()
                .map(|id| crate::CallKey::loop_call(event.step, id).into_string());
            if let Some(args) = &event.arguments {
                entry = entry.arguments(args);
            }
            entry.message = event.detail.clone();
            entry.surface = event.surface.clone();
            self.record_event(entry)
                .await
                .map(|_| ())
                .map_err(|e| AuditError(e.to_string()))
        })
    }

    fn note_run<'a>(
        &'a self,
        _principal: &'a Principal,
        run_id: &'a str,
        note: RunNote<'a>,
    ) -> BoxFuture<'a, Result<(), AuditError>> {
        Box::pin(async move {
            let done = match note {
                RunNote::Task(task) => self.note_run_task(run_id, task).await,
                RunNote::Ended { status, text } => self.note_run_end(run_id, status, text).await,
            };
            done.map_err(|e| AuditError(e.to_string()))
        })
    }
}
