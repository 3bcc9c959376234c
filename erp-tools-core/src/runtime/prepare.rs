//! A call before it runs: its span opened, its run chosen, its audit row started and its
//! admission decided. [`prepare`] is pure (registry and principal only); the runtime then
//! checks the run against the database and runs or refuses the call
//! ([`ToolRuntime::finish`](super::ToolRuntime)). The agent loop prepares its calls the
//! same way, with its policy's limits, and decides on approvals in between.

use super::admit::{self, Admitted, Refused};
use super::call::{CallError, CallOutcome, ToolCall};
use super::call_key::CallKey;
use super::limits::{self, LimitCheck};
use super::run_id::{self, BadRunId};
use crate::audit::{AuditEntry, Outcome};
use crate::registry::ToolRegistry;
use crate::telemetry::{self, Answering, CallTrace};
use crate::tool::context::Principal;
use crate::tool::error::ToolError;

/// A call whose admission is decided and which has not run yet.
#[derive(Debug)]
pub(crate) struct Prepared<'r> {
    /// The call's span (`execute_tool`, shown as `tools/call {tool}`); every later stage
    /// runs inside it.
    pub span: tracing::Span,
    /// When the call was prepared (`mcp.server.operation.duration` starts here).
    pub started: std::time::Instant,
    /// The tool's registered name for metrics labels; `_unknown` for an unknown tool.
    pub tool_label: &'static str,
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
    /// Where the handler's progress reports go, if the caller asked for them.
    pub progress: Option<crate::tool::progress::ProgressSink>,
    /// Set when the caller cancels the call (a call run as a task).
    pub cancel: Option<crate::tool::cancel::CancelFlag>,
    /// Where the handler's attachments go, if the protocol sends them.
    pub attachments: Option<crate::tool::attachment::AttachmentSink>,
    /// How the caller is answered (a question asked or returned as an error, a protocol
    /// error): decides whether the call's span ends in an error.
    pub answering: Answering,
}

/// Opens `call`'s span (with the protocol's side of it, `trace`, continuing the
/// caller's trace when it names one), chooses its run and admits it for `principal` with
/// `extra_limits` after the tool's own.
pub(crate) fn prepare<'r>(
    registry: &'r ToolRegistry,
    principal: &Principal,
    call: ToolCall,
    extra_limits: &[LimitCheck<'_>],
    trace: &CallTrace,
) -> Prepared<'r> {
    let started = std::time::Instant::now();
    let chosen = run_id::choose(principal, Some(call.agent_run_id.as_str()));
    let run_id = match &chosen {
        Ok(run) => run.clone(),
        Err(bad) => bad.audit_id().to_string(),
    };
    let tool = registry.get(&call.name);
    let tool_label = tool.map_or("_unknown", |t| t.name());
    // The OpenTelemetry MCP conventions' call span; arguments and results stay out. An
    // unknown tool is `_unknown`, as in the metrics: a client's name never names a span
    // (the audit row keeps what it asked for).
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("tools/call {tool_label}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool_label,
        gen_ai.tool.call.id = %limits::bounded(&call.tool_call_id, limits::MAX_TOOL_CALL_ID_BYTES),
        jsonrpc.request.id = trace.jsonrpc_id.as_deref(),
        mcp.protocol.version = trace.protocol_version.as_deref(),
        mcp.session.id = trace.session_id.as_deref(),
        erp_tools.tier = tool.map(|t| t.def.tier().as_str()),
        erp_tools.run_id = %run_id,
        enduser.id = %principal.user_id(),
        erp_tools.branch = %principal.branch_code(),
        erp_tools.outcome = tracing::field::Empty,
        erp_tools.error.kind = tracing::field::Empty,
        error.type = tracing::field::Empty,
        rpc.response.status_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    if let Some(traceparent) = &trace.traceparent {
        telemetry::continue_trace(&span, traceparent);
    }
    let entry = AuditEntry::new(principal, &run_id, crate::audit::ATTEMPT)
        .surface(registry.fingerprint())
        .tool(
            limits::bounded(&call.name, limits::MAX_TOOL_NAME_BYTES),
            limits::bounded(&call.tool_call_id, limits::MAX_TOOL_CALL_ID_BYTES),
        )
        .arguments(&call.arguments)
        .call_key(CallKey::fresh().into_string());
    let admission = span.in_scope(|| {
        let _admission = tracing::info_span!("erp_tools.admission").entered();
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
        started,
        tool_label,
        call,
        chosen,
        entry,
        admission,
        refusal: None,
        progress: None,
        cancel: None,
        attachments: None,
        answering: Answering::default(),
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

    /// Records on the span how the agent loop's policy ended a call that did not run
    /// (`denied`, `no_progress`, `awaiting_approval`). A denial and a repeated action are
    /// refusals the model reads as a failed call (`tool_error`, status Error); a denial is
    /// counted in the metrics.
    #[cfg(feature = "agent")]
    pub(crate) fn record_outcome(&self, outcome: &'static str) {
        self.span.record("erp_tools.outcome", outcome);
        if matches!(outcome, "denied" | "no_progress") {
            self.span.record("erp_tools.error.kind", outcome);
            telemetry::span::record_error(&self.span, "tool_error", outcome);
        }
        if outcome == "denied" {
            telemetry::record::call(
                "tools/call",
                self.tool_label,
                outcome,
                self.started.elapsed(),
            );
        }
    }

    /// Records on the span and in the metrics how the call ended.
    pub(crate) fn record_end(&self, result: &Result<CallOutcome, CallError>) {
        record_end(
            &self.span,
            self.tool_label,
            self.started,
            result,
            self.answering,
        );
    }
}

/// Records how a call ended, the caller answered as `answering` says: `erp_tools.outcome`,
/// and on an error `error.type` and the status Error, on its span; the call in the
/// metrics (duration since `started`, outcome, tool).
pub(crate) fn record_end(
    span: &tracing::Span,
    tool_label: &'static str,
    started: std::time::Instant,
    result: &Result<CallOutcome, CallError>,
    answering: Answering,
) {
    let end = telemetry::call_end(result, answering);
    telemetry::span::record_call_end(span, &end);
    telemetry::record::call("tools/call", tool_label, end.outcome, started.elapsed());
}
