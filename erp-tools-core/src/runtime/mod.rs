//! The call pipeline (see [`ToolRuntime`]): admission, execution, audit, answer.

pub(crate) mod admit;
mod answer;
mod draft;
pub(crate) mod limits;
mod read;
pub(crate) mod run_id;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::Instrument;

use crate::audit::{AuditEntry, Outcome};
use crate::registry::ToolRegistry;
use crate::store::{Database, StoreError};
use crate::text;
use crate::tool::context::{Principal, ToolContext};
use crate::tool::error::ToolError;
use crate::tool::handler::Handler;
use crate::tool::handles::DocumentRef;
use crate::tool::input::{InputAnswers, InputRequest};
use admit::{Admitted, Check, Refused};
use answer::Finished;
use run_id::BadRunId;

/// One tool call as it arrives from a client. The run id comes from the token or the
/// agent host, never from the arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The agent run the agent host names for the call (idempotency keys are scoped to
    /// the run); empty for none, which puts the call in the caller's own scope
    /// ([`principal_run_id`](crate::principal_run_id)). A token bound to a run overrides
    /// it. See [`ToolRuntime::call`] for the rules.
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
        self.outcome.is_error()
    }

    /// The question, if the handler needs a person's decision before it can go on
    /// ([`ToolError::needs_input`]). Nothing was written.
    pub fn input_request(&self) -> Option<InputRequest> {
        if self.outcome != Outcome::ToolError
            || self.structured.get("error").and_then(Value::as_str) != Some("needs_input")
        {
            return None;
        }
        serde_json::from_value(self.structured.get("input")?.clone()).ok()
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

/// The registry plus the database: what every transport calls tools through.
///
/// Every tool call, from MCP or the agent loop, goes through this pipeline, one stage a
/// file, each handing the next a typed value:
///
/// 1. **admit** (`runtime/admit.rs`): tool known, scopes held, arguments valid and
///    normalised, hard limits, `client_ref` → an `Admitted` call or a refusal (one audit
///    row with outcome `denied` or `tool_error`; an unknown tool is then a protocol error,
///    [`CallError::UnknownTool`]);
/// 2. **record the attempt**: an audit row with outcome `attempt`, handed to the
///    database's group-commit audit writer; it is committed while the call runs, and no
///    read result leaves, and no draft commits, before it is durable, so a crash mid-call
///    still leaves a trace;
/// 3. **execute**: a read (`runtime/read.rs`) runs on the read-only pool; a draft
///    (`runtime/draft.rs`) runs in the transaction that claims its idempotency key;
/// 4. **record the outcome** on the same row (a read that ended before the writer took
///    its row is inserted finished; a successful draft on PostgreSQL is finished inside
///    its transaction; otherwise the writer applies the outcome with a later batch);
/// 5. **answer** (`runtime/answer.rs`): structured content plus text, ready for any
///    protocol.
///
/// Every sentence the pipeline says to a model is in `text.rs`: what failed, what
/// is allowed, what to do next and what did not happen ("No draft was created." /
/// "Nothing was changed."). Each call runs in a tracing span `execute_tool`
/// (OpenTelemetry GenAI conventions: `otel.name = "execute_tool {tool}"`,
/// `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, plus
/// `erp_tools.agent_run_id` and `erp_tools.outcome`).
#[derive(Clone)]
pub struct ToolRuntime {
    registry: Arc<ToolRegistry>,
    db: Database,
}

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("tools", &self.registry.tools().len())
            .field("db", &self.db)
            .finish()
    }
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

    /// Runs one call through the pipeline (see [`ToolRuntime`]).
    ///
    /// The call's run is, first present wins: the run the principal is bound to (its
    /// token's `run` claim; `call.agent_run_id` is then ignored, so a client cannot move
    /// its writes into another run's idempotency scope), `call.agent_run_id`, or else the
    /// principal's own scope ([`principal_run_id`](crate::principal_run_id)), which is the
    /// same on every connection, server restart and server process.
    ///
    /// Before admission, the run is checked: a run id that is not 1 to
    /// [`ToolCall::MAX_RUN_ID_LEN`] visible ASCII characters, another principal's scope,
    /// or a run that another principal (user and branch) used first
    /// ([`Database::claim_agent_run`]) is refused with a `denied` audit row and a text
    /// that says so; nothing runs. Replays and `client_ref` mismatches therefore only
    /// happen within one person's run.
    ///
    /// Returns `Ok` for every tool outcome, including tool errors and denials (MCP
    /// `isError: true`); `Err` only for protocol errors: an unknown tool, or the audit
    /// store being unavailable (no call runs unaudited).
    pub async fn call(
        &self,
        principal: &Arc<Principal>,
        call: ToolCall,
    ) -> Result<CallOutcome, CallError> {
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
        let result = async {
            let entry = self.entry(principal, &run_id, &call);
            if let Some(refusal) = self.check_run(principal, chosen).await? {
                return self.refuse_run(entry, refusal).await;
            }
            match admit::admit(
                &self.registry,
                principal,
                &run_id,
                &call.name,
                &call.arguments,
                &[],
            ) {
                Ok(admitted) => self.execute(principal, entry, admitted).await,
                Err(refused) => self.refuse(entry, refused).await,
            }
        }
        .instrument(span.clone())
        .await;
        let outcome = match &result {
            Ok(o) => o.outcome.as_str(),
            Err(CallError::UnknownTool(..)) => Outcome::Denied.as_str(),
            Err(CallError::Internal(_)) => "internal_error",
        };
        span.record("erp_tools.outcome", outcome);
        result
    }

    /// Why the call's run may not be used by `principal`, if it may not: invalid, another
    /// person's reserved scope, or bound to another person ([`Database::claim_agent_run`]).
    pub(crate) async fn check_run(
        &self,
        principal: &Principal,
        chosen: Result<String, BadRunId>,
    ) -> Result<Option<ToolError>, CallError> {
        let run = match chosen {
            Ok(run) => run,
            Err(bad) => return Ok(Some(bad.refusal())),
        };
        let owned = self.owns_run(principal, &run).await?;
        Ok((!owned).then(|| text::run_of_another_person(&run)))
    }

    /// Whether `run` is `principal`'s: bound to it now if no one used it before.
    pub(crate) async fn owns_run(
        &self,
        principal: &Principal,
        run: &str,
    ) -> Result<bool, CallError> {
        let owner = self
            .db
            .claim_agent_run(run, principal)
            .await
            .map_err(internal)?;
        Ok(owner.is(principal))
    }

    /// Records a call refused because of its run (one `denied` audit row) and answers it.
    async fn refuse_run(
        &self,
        entry: AuditEntry,
        error: ToolError,
    ) -> Result<CallOutcome, CallError> {
        Ok(self
            .record_refusal(entry, Outcome::Denied, error)
            .await?
            .outcome)
    }

    /// Writes the one finished audit row of a call refused before it ran.
    async fn record_refusal(
        &self,
        entry: AuditEntry,
        outcome: Outcome,
        error: ToolError,
    ) -> Result<Finished, CallError> {
        let finished = Finished::failed(outcome, error);
        self.db
            .record_call(
                &entry
                    .outcome(outcome.as_str())
                    .message(finished.audit_message.clone().unwrap_or_default()),
            )
            .await
            .map_err(internal)?;
        Ok(finished)
    }

    /// The audit row of `call` for `principal` in `run_id`, before its outcome is known.
    pub(crate) fn entry(&self, principal: &Principal, run_id: &str, call: &ToolCall) -> AuditEntry {
        AuditEntry::new(principal, run_id, crate::audit::ATTEMPT)
            .tool(
                limits::bounded(&call.name, limits::MAX_TOOL_NAME_BYTES),
                limits::bounded(&call.tool_call_id, limits::MAX_TOOL_CALL_ID_BYTES),
            )
            .arguments(&call.arguments)
    }

    /// Records a call refused by admission (one finished audit row) and answers it.
    pub(crate) async fn refuse(
        &self,
        entry: AuditEntry,
        refused: Refused,
    ) -> Result<CallOutcome, CallError> {
        let outcome = refused.outcome();
        let unknown = (refused.check == Check::UnknownTool)
            .then(|| entry.tool_name.clone().unwrap_or_default());
        let finished = self.record_refusal(entry, outcome, refused.error).await?;
        if let Some(name) = unknown {
            return Err(CallError::UnknownTool(name, finished.outcome.text));
        }
        Ok(finished.outcome)
    }

    /// Runs one call like [`call`](Self::call), delivering a person's `answers` to the
    /// handler ([`ToolContext::input`]). The caller must have checked each answer against
    /// the question the tool asked (the MCP server and the agent loop do).
    pub async fn call_with_input(
        &self,
        principal: &Arc<Principal>,
        call: ToolCall,
        answers: InputAnswers,
    ) -> Result<CallOutcome, CallError> {
        let chosen = run_id::choose(principal, Some(call.agent_run_id.as_str()));
        let run_id = match &chosen {
            Ok(run) => run.clone(),
            Err(bad) => bad.audit_id().to_string(),
        };
        let entry = self.entry(principal, &run_id, &call);
        if let Some(refusal) = self.check_run(principal, chosen).await? {
            return self.refuse_run(entry, refusal).await;
        }
        match admit::admit(
            &self.registry,
            principal,
            &run_id,
            &call.name,
            &call.arguments,
            &[],
        ) {
            Ok(admitted) => {
                self.execute_with_input(principal, entry, admitted, answers)
                    .await
            }
            Err(refused) => self.refuse(entry, refused).await,
        }
    }

    #[cfg(feature = "mcp")]
    /// Records a refused call (one finished audit row with `outcome`, e.g. a forged
    /// answer to a question) and answers it with `error`.
    pub(crate) async fn refuse_with(
        &self,
        principal: &Principal,
        call: &ToolCall,
        outcome: Outcome,
        error: ToolError,
    ) -> Result<CallOutcome, CallError> {
        let run_id = run_id::choose(principal, Some(call.agent_run_id.as_str()))
            .unwrap_or_else(|bad| bad.audit_id().to_string());
        let entry = self.entry(principal, &run_id, call);
        Ok(self.record_refusal(entry, outcome, error).await?.outcome)
    }

    /// Runs an admitted call: attempt row (committed by the audit writer while the call
    /// runs), handler, outcome.
    pub(crate) async fn execute(
        &self,
        principal: &Arc<Principal>,
        entry: AuditEntry,
        admitted: Admitted<'_>,
    ) -> Result<CallOutcome, CallError> {
        self.execute_with_input(principal, entry, admitted, InputAnswers::default())
            .await
    }

    /// Runs an admitted call with a person's answers for the handler.
    pub(crate) async fn execute_with_input(
        &self,
        principal: &Arc<Principal>,
        entry: AuditEntry,
        admitted: Admitted<'_>,
        answers: InputAnswers,
    ) -> Result<CallOutcome, CallError> {
        let def = admitted.tool.def;
        let ctx = ToolContext::new(
            principal.clone(),
            entry.agent_run_id.clone(),
            entry.tool_call_id.clone().unwrap_or_default(),
            def.name(),
        )
        .with_input(answers);
        let finished = match (def.handler(), admitted.key) {
            (Handler::Read(handler), _) => {
                read::run_audited(&self.db, handler, &ctx, admitted.args, &entry).await
            }
            (Handler::Draft(handler), Some(key)) => {
                draft::run_audited(&self.db, handler, &ctx, &key, admitted.args, &entry).await
            }
            (Handler::Draft(_), None) => {
                unreachable!("admission gives every draft call its idempotency key")
            }
        };
        Ok(finished.map_err(internal)?.outcome)
    }
}

fn internal(e: StoreError) -> CallError {
    tracing::error!(error = %e, "audit store failure");
    CallError::Internal(text::audit_unavailable(e))
}
