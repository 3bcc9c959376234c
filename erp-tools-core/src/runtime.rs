//! The call pipeline: every tool call, from MCP or the agent loop, goes through
//! [`ToolRuntime::call`], in this order: tool known → scopes held → arguments validated
//! against the strict schema → audit "attempt" recorded → (writes) idempotency key claimed
//! → handler → result recorded → audit outcome.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::Principal;
use crate::db::DocumentRef;
use crate::registry::ToolRegistry;
use crate::store::Database;

/// One tool call as it arrives from a client. The run id comes from the token or the
/// agent host, never from the arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The agent run the call belongs to (idempotency keys are scoped to it).
    pub agent_run_id: String,
    /// The protocol's id for this call.
    pub tool_call_id: String,
    /// Tool name.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
}

/// How a call ended, as recorded in the audit log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The handler ran and succeeded.
    Ok,
    /// Invalid arguments, a business rule, an idempotency mismatch or a handler failure.
    ToolError,
    /// The caller may not use the tool (missing scope, unknown tool, policy).
    Denied,
    /// A retry of an earlier successful call: the original result was returned.
    Replayed,
}

impl Outcome {
    /// `ok`, `tool_error`, `denied` or `replayed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Denied => "denied",
            Outcome::Replayed => "replayed",
        }
    }
}

/// The result of a call, ready for any protocol: structured content plus text.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// How the call ended.
    pub outcome: Outcome,
    /// The structured result (the handler's output, with `replayed` for draft tools),
    /// or the structured error.
    pub structured: Value,
    /// The text for the model: a rendering of the result, or the model-facing error.
    pub text: String,
    /// The document a draft call created (or replayed).
    pub document: Option<DocumentRef>,
}

impl CallOutcome {
    /// Whether the call failed (`isError: true` in MCP).
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, Outcome::ToolError | Outcome::Denied)
    }
}

/// A failure that is not a tool result: a protocol error.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No tool of that name is registered (JSON-RPC -32602 in MCP).
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// The framework itself failed (the audit store is down, ...).
    #[error("internal error: {0}")]
    Internal(String),
}

/// The registry plus the database: what every transport calls tools through.
#[derive(Clone)]
pub struct ToolRuntime {
    registry: Arc<ToolRegistry>,
    db: Database,
}

impl ToolRuntime {
    /// Serves `registry` on `db`.
    pub fn new(registry: Arc<ToolRegistry>, db: Database) -> Self {
        ToolRuntime { registry, db }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The database (tool data, idempotency keys, audit log).
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Runs one call through the pipeline.
    pub async fn call(
        &self,
        principal: &Arc<Principal>,
        call: ToolCall,
    ) -> Result<CallOutcome, CallError> {
        let _ = (principal, call);
        todo!("pipeline")
    }
}
