//! A call before it runs: its span opened, its run chosen, its audit row started and its
//! admission decided. [`prepare`] is pure (registry and principal only); the runtime then
//! checks the run against the database and runs or refuses the call
//! ([`ToolRuntime::finish`](super::ToolRuntime)). The agent loop prepares its calls the
//! same way, with its policy's limits, and decides on approvals in between.

use super::admit::{self, Admitted, Refused};
use super::call::ToolCall;
use super::limits::{self, LimitCheck};
use super::run_id::{self, BadRunId};
use crate::audit::{AuditEntry, Outcome};
use crate::registry::ToolRegistry;
use crate::tool::context::Principal;
use crate::tool::error::ToolError;

/// A call whose admission is decided and which has not run yet.
#[derive(Debug)]
pub(crate) struct Prepared<'r> {
    /// The call's span (`execute_tool`); every later stage runs inside it.
    pub span: tracing::Span,
    /// The call as it arrived.
    #[cfg_attr(not(any(feature = "agent", feature = "mcp")), allow(dead_code))]
    pub call: ToolCall,
    /// The run the call belongs to, or why its run id cannot be used.
    pub chosen: Result<String, BadRunId>,
    /// The call's audit row, before its outcome is known.
    pub entry: AuditEntry,
    /// What admission decided.
    pub admission: Result<Admitted<'r>, Refused>,
    /// A refusal decided before admission's (the run is not the caller's, a forged
    /// answer to a question): recorded instead of running.
    pub refusal: Option<(Outcome, ToolError)>,
}

/// Opens `call`'s span, chooses its run and admits it for `principal` with
/// `extra_limits` after the tool's own.
pub(crate) fn prepare<'r>(
    registry: &'r ToolRegistry,
    principal: &Principal,
    call: ToolCall,
    extra_limits: &[LimitCheck<'_>],
) -> Prepared<'r> {
    let chosen = run_id::choose(principal, Some(call.agent_run_id.as_str()));
    let run_id = match &chosen {
        Ok(run) => run.clone(),
        Err(bad) => bad.audit_id().to_string(),
    };
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {}", call.name),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.name,
        gen_ai.tool.call.id = %call.tool_call_id,
        erp_tools.agent_run_id = %run_id,
        erp_tools.on_behalf_of = %principal.user_id(),
        erp_tools.branch = %principal.branch_code(),
        erp_tools.outcome = tracing::field::Empty,
    );
    let entry = AuditEntry::new(principal, &run_id, crate::audit::ATTEMPT)
        .tool(
            limits::bounded(&call.name, limits::MAX_TOOL_NAME_BYTES),
            limits::bounded(&call.tool_call_id, limits::MAX_TOOL_CALL_ID_BYTES),
        )
        .arguments(&call.arguments);
    let admission = span.in_scope(|| {
        admit::admit(
            registry,
            principal,
            &run_id,
            &call.name,
            &call.arguments,
            extra_limits,
        )
    });
    Prepared {
        span,
        call,
        chosen,
        entry,
        admission,
        refusal: None,
    }
}

impl Prepared<'_> {
    /// The arguments as the call runs them: normalised when admitted, else as sent.
    #[cfg(any(feature = "agent", feature = "mcp"))]
    pub(crate) fn arguments(&self) -> &serde_json::Value {
        match &self.admission {
            Ok(admitted) => &admitted.args,
            Err(_) => &self.call.arguments,
        }
    }

    /// Refuses the call with `error` (audited as `outcome`), whatever admission decided.
    pub(crate) fn refuse(&mut self, outcome: Outcome, error: ToolError) {
        self.refusal = Some((outcome, error));
    }

    /// Records on the span how the call ended (`erp_tools.outcome`).
    pub(crate) fn record_outcome(&self, outcome: &str) {
        self.span.record("erp_tools.outcome", outcome);
    }
}
