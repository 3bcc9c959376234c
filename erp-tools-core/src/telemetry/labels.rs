//! What a call's span and metrics say about it: the protocol's fields of the call
//! ([`CallTrace`]), how the caller is answered ([`Answering`]) and how the call ended in
//! the telemetry's words ([`CallEnd`], from [`call_end`]).
//!
//! The rules follow the OpenTelemetry MCP and GenAI conventions: a call that ends in an
//! error has `error.type` and the span status Error; `error.type` is `tool_error` for a
//! result with `isError: true` and the JSON-RPC error code (`-32602`) for a protocol
//! error. erp-tools' finer words stay in `erp_tools.outcome` and `erp_tools.error.kind`.

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

/// JSON-RPC error codes as `error.type` and `rpc.response.status_code` spell them.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) mod rpc_code {
    /// `-32602`: invalid params (an unknown tool, a refused `requestState`).
    pub(crate) const INVALID_PARAMS: &str = "-32602";
    /// `-32603`: internal error (the audit store unavailable).
    pub(crate) const INTERNAL_ERROR: &str = "-32603";
    /// `-32021`: a client capability the call needs was not declared (elicitation).
    pub(crate) const MISSING_CAPABILITY: &str = "-32021";
}

/// How a call's question (a tool's [`needs_input`](crate::ToolError::needs_input))
/// reaches the caller; it decides whether the question ends the call in an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) enum QuestionForm {
    /// As a tool error carrying the question (`isError: true`): direct calls, MCP
    /// clients that cannot be asked. An error (`tool_error`).
    #[default]
    ToolError,
    /// Put to a person: an `input_required` result, `elicitation/create`, the agent
    /// loop's pause for an answer. Not an error.
    Asked,
    /// As a JSON-RPC error with this code: a 2026-07-28 request that did not declare
    /// elicitation ([`rpc_code::MISSING_CAPABILITY`]).
    RpcError(&'static str),
}

/// How the edge answers a call, decided before it runs (the MCP server knows whether it
/// can ask the client, or that it refuses the call as a protocol error).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Answering {
    /// How a question is put to the caller.
    pub question: QuestionForm,
    /// The call answered as a JSON-RPC error with this code whatever its outcome (a
    /// refused `requestState`: [`rpc_code::INVALID_PARAMS`]).
    pub rpc_error: Option<&'static str>,
}

/// How a call ended, for its span and the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallEnd {
    /// `erp_tools.outcome` and the metrics' outcome label: `ok`, `replayed`, `denied`,
    /// `invalid` (arguments the schema refused), `failed`, `needs_input`.
    pub outcome: &'static str,
    /// The error the call ended in, if it ended in one.
    pub error: Option<CallFailure>,
}

/// A call's error as its span records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallFailure {
    /// `error.type`: `tool_error` for an `isError: true` result, else the JSON-RPC
    /// error code the caller got (`-32602`).
    pub error_type: &'static str,
    /// `erp_tools.error.kind` and the status description: the finer reason (the tool
    /// error's kind, `unknown_tool`, `internal_error`, ...).
    pub kind: &'static str,
}

impl CallFailure {
    /// The JSON-RPC error code the caller got, if the error was a protocol error
    /// (`rpc.response.status_code`).
    pub(crate) fn rpc_code(&self) -> Option<&'static str> {
        self.error_type.starts_with('-').then_some(self.error_type)
    }
}

/// How `result` ends its call when the caller is answered as `answering` says.
pub(crate) fn call_end(result: &Result<CallOutcome, CallError>, answering: Answering) -> CallEnd {
    let out = match result {
        Ok(out) => out,
        Err(CallError::UnknownTool(..)) => {
            return failed("denied", rpc_code::INVALID_PARAMS, "unknown_tool");
        }
        Err(CallError::Internal(_)) => {
            return failed("failed", rpc_code::INTERNAL_ERROR, "internal_error");
        }
    };
    let kind = error_kind(out);
    let outcome = match out.outcome {
        Outcome::Ok => "ok",
        Outcome::Replayed => "replayed",
        Outcome::Denied => "denied",
        Outcome::ToolError | Outcome::Interrupted => match kind {
            "invalid_arguments" => "invalid",
            "needs_input" => "needs_input",
            _ => "failed",
        },
    };
    if !out.outcome.is_error() {
        return CallEnd {
            outcome,
            error: None,
        };
    }
    let error_type = match (answering.rpc_error, outcome, answering.question) {
        (Some(code), ..) => code,
        (None, "needs_input", QuestionForm::Asked) => {
            return CallEnd {
                outcome,
                error: None,
            };
        }
        (None, "needs_input", QuestionForm::RpcError(code)) => code,
        _ => "tool_error",
    };
    failed(outcome, error_type, kind)
}

fn failed(outcome: &'static str, error_type: &'static str, kind: &'static str) -> CallEnd {
    CallEnd {
        outcome,
        error: Some(CallFailure { error_type, kind }),
    }
}

/// The tool error's kind as `erp_tools.error.kind` spells it.
fn error_kind(out: &CallOutcome) -> &'static str {
    match out.error.as_ref().map(|e| e.kind()) {
        Some(ToolErrorKind::InvalidArguments) => "invalid_arguments",
        Some(ToolErrorKind::NotFound) => "not_found",
        Some(ToolErrorKind::Rejected) => "rejected",
        Some(ToolErrorKind::IdempotencyMismatch) => "idempotency_mismatch",
        Some(ToolErrorKind::Denied) => "denied",
        Some(ToolErrorKind::Internal) => "internal",
        Some(ToolErrorKind::NeedsInput) => "needs_input",
        None if out.outcome == Outcome::Denied => "denied",
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

    fn end(
        result: &Result<CallOutcome, CallError>,
        answering: Answering,
    ) -> (&str, Option<&str>, Option<&str>) {
        let end = call_end(result, answering);
        (
            end.outcome,
            end.error.map(|e| e.error_type),
            end.error.map(|e| e.kind),
        )
    }

    fn question() -> ToolError {
        ToolError::needs_input("vendor", "Which vendor?", ["V-1", "V-2"])
    }

    #[test]
    fn successes_carry_no_error() {
        let plain = Answering::default();
        assert_eq!(end(&outcome(Outcome::Ok, None), plain), ("ok", None, None));
        assert_eq!(
            end(&outcome(Outcome::Replayed, None), plain),
            ("replayed", None, None)
        );
    }

    #[test]
    fn is_error_results_are_tool_errors_with_the_finer_kind() {
        let plain = Answering::default();
        let invalid = ToolError::invalid_arguments("qty must be more than 0");
        assert_eq!(
            end(&outcome(Outcome::ToolError, Some(invalid)), plain),
            ("invalid", Some("tool_error"), Some("invalid_arguments"))
        );
        let rejected = ToolError::rejected("Item BRG-0042 cannot be ordered in KG.");
        assert_eq!(
            end(&outcome(Outcome::ToolError, Some(rejected)), plain),
            ("failed", Some("tool_error"), Some("rejected"))
        );
        let denied = ToolError::new(ToolErrorKind::Denied, "no scope");
        assert_eq!(
            end(&outcome(Outcome::Denied, Some(denied)), plain),
            ("denied", Some("tool_error"), Some("denied"))
        );
        assert_eq!(
            end(&outcome(Outcome::Interrupted, None), plain),
            ("failed", Some("tool_error"), Some("tool_error"))
        );
    }

    #[test]
    fn protocol_errors_are_their_json_rpc_codes() {
        let plain = Answering::default();
        assert_eq!(
            end(&Err(CallError::UnknownTool("x".into(), "no".into())), plain),
            ("denied", Some("-32602"), Some("unknown_tool"))
        );
        assert_eq!(
            end(&Err(CallError::Internal("down".into())), plain),
            ("failed", Some("-32603"), Some("internal_error"))
        );
        let refused_state = Answering {
            rpc_error: Some(rpc_code::INVALID_PARAMS),
            ..Answering::default()
        };
        let denied = ToolError::new(ToolErrorKind::Denied, "state refused");
        assert_eq!(
            end(&outcome(Outcome::Denied, Some(denied)), refused_state),
            ("denied", Some("-32602"), Some("denied"))
        );
        let failure = call_end(&Err(CallError::Internal("down".into())), plain).error;
        assert_eq!(failure.and_then(|f| f.rpc_code()), Some("-32603"));
        let tool_error = call_end(&outcome(Outcome::Interrupted, None), plain).error;
        assert_eq!(tool_error.and_then(|f| f.rpc_code()), None);
    }

    #[test]
    fn a_question_is_an_error_only_when_it_cannot_be_asked() {
        let asked = |question| Answering {
            question,
            rpc_error: None,
        };
        let result = outcome(Outcome::ToolError, Some(question()));
        assert_eq!(
            end(&result, asked(QuestionForm::Asked)),
            ("needs_input", None, None)
        );
        assert_eq!(
            end(&result, asked(QuestionForm::ToolError)),
            ("needs_input", Some("tool_error"), Some("needs_input"))
        );
        assert_eq!(
            end(
                &result,
                asked(QuestionForm::RpcError(rpc_code::MISSING_CAPABILITY))
            ),
            ("needs_input", Some("-32021"), Some("needs_input"))
        );
        // A refused answer to an asked question is the tool error it is.
        let refused = outcome(
            Outcome::ToolError,
            Some(ToolError::rejected("not a choice")),
        );
        assert_eq!(
            end(&refused, asked(QuestionForm::Asked)),
            ("failed", Some("tool_error"), Some("rejected"))
        );
    }
}
