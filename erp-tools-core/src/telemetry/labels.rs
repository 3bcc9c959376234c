//! What a call's span and metrics say about it: the protocol's fields of the call
//! ([`CallTrace`]) and the outcome in the telemetry vocabulary ([`outcome_labels`]).

use crate::audit::Outcome;
use crate::runtime::call::{CallError, CallOutcome};
use crate::tool::error::ToolErrorKind;

/// The protocol's side of a call, recorded on its span: the MCP server fills it, the
/// agent loop and direct calls leave the defaults.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallTrace {
    /// `jsonrpc.request.id`.
    pub jsonrpc_id: Option<String>,
    /// `mcp.protocol.version`, e.g. `2025-11-25`.
    pub protocol_version: Option<String>,
    /// `mcp.session.id`, when the client has a session.
    pub session_id: Option<String>,
    /// The W3C `traceparent` of the request's `_meta` (SEP-414); the span continues it.
    pub traceparent: Option<String>,
}

/// How a call ended, for telemetry: `erp_tools.outcome` (`ok`, `replayed`, `denied`,
/// `invalid`, `failed`) and, on failure, `error.type` (the tool error's kind, or
/// `unknown_tool` / `internal_error` for protocol errors).
pub(crate) fn outcome_labels(
    result: &Result<CallOutcome, CallError>,
) -> (&'static str, Option<&'static str>) {
    match result {
        Ok(out) => match out.outcome {
            Outcome::Ok => ("ok", None),
            Outcome::Replayed => ("replayed", None),
            Outcome::Denied => ("denied", Some(error_type(out))),
            Outcome::ToolError | Outcome::Interrupted => {
                let kind = error_type(out);
                let outcome = if kind == "invalid_arguments" {
                    "invalid"
                } else {
                    "failed"
                };
                (outcome, Some(kind))
            }
        },
        Err(CallError::UnknownTool(..)) => ("denied", Some("unknown_tool")),
        Err(CallError::Internal(_)) => ("failed", Some("internal_error")),
    }
}

fn error_type(out: &CallOutcome) -> &'static str {
    match out.error.as_ref().map(|e| e.kind()) {
        Some(ToolErrorKind::InvalidArguments) => "invalid_arguments",
        Some(ToolErrorKind::NotFound) => "not_found",
        Some(ToolErrorKind::Rejected) => "rejected",
        Some(ToolErrorKind::IdempotencyMismatch) => "idempotency_mismatch",
        Some(ToolErrorKind::Denied) => "denied",
        Some(ToolErrorKind::Internal) => "internal",
        Some(ToolErrorKind::NeedsInput) => "needs_input",
        None => "tool_error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::error::ToolError;
    use serde_json::json;

    fn outcome(outcome: Outcome, error: Option<ToolError>) -> Result<CallOutcome, CallError> {
        Ok(CallOutcome {
            outcome,
            structured: json!({}),
            text: String::new(),
            document: None,
            error,
        })
    }

    #[test]
    fn outcomes_map_to_the_telemetry_vocabulary() {
        assert_eq!(outcome_labels(&outcome(Outcome::Ok, None)), ("ok", None));
        assert_eq!(
            outcome_labels(&outcome(Outcome::Replayed, None)),
            ("replayed", None)
        );
        let invalid = ToolError::invalid_arguments("qty must be more than 0");
        assert_eq!(
            outcome_labels(&outcome(Outcome::ToolError, Some(invalid))),
            ("invalid", Some("invalid_arguments"))
        );
        let rejected = ToolError::rejected("Item BRG-0042 cannot be ordered in KG.");
        assert_eq!(
            outcome_labels(&outcome(Outcome::ToolError, Some(rejected))),
            ("failed", Some("rejected"))
        );
        assert_eq!(
            outcome_labels(&Err(CallError::UnknownTool("x".into(), "no".into()))),
            ("denied", Some("unknown_tool"))
        );
        assert_eq!(
            outcome_labels(&Err(CallError::Internal("down".into()))),
            ("failed", Some("internal_error"))
        );
    }
}
