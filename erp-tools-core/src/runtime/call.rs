//! What a call is and how it ends, for any protocol: [`ToolCall`] in, [`CallOutcome`] or
//! [`CallError`] out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::run_id;
use crate::audit::Outcome;
use crate::tool::error::ToolError;
use crate::tool::handles::DocumentRef;
use crate::tool::input::InputRequest;

/// One tool call as it arrives from a client. The run id comes from the token or the
/// agent host, never from the arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The agent run the agent host names for the call (idempotency keys are scoped to
    /// the run); empty for none, which puts the call in the caller's own scope
    /// ([`principal_run_id`](crate::principal_run_id)). A token bound to a run overrides
    /// it. See [`ToolRuntime::call`](crate::ToolRuntime::call) for the rules.
    pub agent_run_id: String,
    /// The protocol's id for this call.
    pub tool_call_id: String,
    /// Tool name.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
}

impl ToolCall {
    /// Longest `client_ref` a draft call may carry, in characters.
    pub const MAX_CLIENT_REF_CHARS: usize = crate::idempotency::MAX_CLIENT_REF_CHARS;
    /// Longest agent run id, from any source, in (visible ASCII) characters.
    pub const MAX_RUN_ID_LEN: usize = run_id::MAX_RUN_ID_LEN;

    /// Whether `id` is usable as an agent run id: 1 to [`MAX_RUN_ID_LEN`](Self::MAX_RUN_ID_LEN)
    /// visible ASCII characters (no spaces, no control characters). Every source of a run
    /// id (a token's `run` claim, the agent host's header or call, the agent loop's
    /// request) is checked with it.
    ///
    /// ```
    /// use erp_tools_core::ToolCall;
    ///
    /// assert!(ToolCall::valid_run_id("run-2026-07-01"));
    /// assert!(!ToolCall::valid_run_id("run with spaces"));
    /// assert!(!ToolCall::valid_run_id(""));
    /// assert!(!ToolCall::valid_run_id(&"r".repeat(129)));
    /// ```
    pub fn valid_run_id(id: &str) -> bool {
        run_id::valid_run_id(id)
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
    /// The error of a call that failed or was refused, as the tool or the framework
    /// raised it (its kind, allowed values, question); `None` on success.
    pub error: Option<ToolError>,
}

impl CallOutcome {
    /// Whether the call failed (`isError: true` in MCP).
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    /// The question, if the handler needs a person's decision before it can go on
    /// ([`ToolError::needs_input`]). Nothing was written.
    pub fn input_request(&self) -> Option<InputRequest> {
        self.error.as_ref()?.input_request().cloned()
    }
}

/// A failure that is not a tool result: a protocol error.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No tool of that name is registered (JSON-RPC -32602 in MCP). The text is the
    /// model-facing explanation.
    #[error("{1}")]
    UnknownTool(String, String),
    /// The framework itself failed (the audit store is down, ...).
    #[error("internal error: {0}")]
    Internal(String),
}
