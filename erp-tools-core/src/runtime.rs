//! The call pipeline: every tool call, from MCP or the agent loop, goes through
//! [`ToolRuntime::call`], in this order:
//!
//! 1. tool known (else a protocol error, [`CallError::UnknownTool`], audited as `denied`);
//! 2. scopes held (else outcome [`Outcome::Denied`] naming the missing scopes);
//! 3. arguments validated and normalised against the strict schema, server-side (else a
//!    tool error listing every problem);
//! 4. hard value limits declared on the tool (else [`Outcome::Denied`]);
//! 5. audit "attempt" recorded, as its own committed statement;
//! 6. read tools: the handler runs with a read-only [`ReadDb`];
//!    draft tools: the idempotency key is claimed and the handler runs in the same
//!    transaction (see [`crate::idempotency`]);
//! 7. the audit row gets its outcome (for a successful draft, inside the transaction).
//!
//! Every failure is model-facing text that says what failed, what is allowed, what to do
//! next and what did not happen ("No draft was created." / "Nothing was changed.").
//! Each call runs in a tracing span `execute_tool` (OpenTelemetry GenAI conventions:
//! `otel.name = "execute_tool {tool}"`, `gen_ai.operation.name`, `gen_ai.tool.name`,
//! `gen_ai.tool.call.id`, plus `erp_tools.agent_run_id` and `erp_tools.outcome`).

use std::panic::AssertUnwindSafe;
use std::str::FromStr;
use std::sync::Arc;

use futures::FutureExt;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::Instrument;

use crate::audit::{self, AuditEntry, AuditId};
use crate::context::{Principal, ToolContext};
use crate::db::{DocumentRef, DraftTx, ReadDb};
use crate::error::{ToolError, ToolErrorKind};
use crate::idempotency::{self, Claim, IdempotencyKey, MAX_CLIENT_REF_CHARS};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::store::Database;
use crate::tool::{Handler, Limit, Tier};
use crate::validate;

/// What a failed draft call did not do.
pub const NO_DRAFT_CREATED: &str = "No draft was created.";
/// What a failed read call did not do.
pub const NOTHING_CHANGED: &str = "Nothing was changed.";

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

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("tools", &self.registry.tools().len())
            .field("db", &self.db)
            .finish()
    }
}

/// The result of the handler stage of a call.
struct Finished {
    outcome: CallOutcome,
    /// Text for the audit row's `message` (error text plus internal detail).
    audit_message: Option<String>,
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

    /// Runs one call through the pipeline (see the [module docs](self)).
    ///
    /// When the principal is bound to an agent run (its token names one), that run id is
    /// used and `call.agent_run_id` is ignored: a client cannot move its writes into
    /// another run's idempotency scope.
    ///
    /// Returns `Ok` for every tool outcome, including tool errors and denials (MCP
    /// `isError: true`); `Err` only for protocol errors: an unknown tool, or the audit
    /// store being unavailable (no call runs unaudited).
    pub async fn call(
        &self,
        principal: &Arc<Principal>,
        call: ToolCall,
    ) -> Result<CallOutcome, CallError> {
        let run_id = match principal.agent_run_id() {
            Some(bound) => bound.to_string(),
            None => call.agent_run_id.clone(),
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
        let result = self
            .run(principal, run_id, call)
            .instrument(span.clone())
            .await;
        let outcome = match &result {
            Ok(o) => o.outcome.as_str(),
            Err(CallError::UnknownTool(_)) => Outcome::Denied.as_str(),
            Err(CallError::Internal(_)) => "internal_error",
        };
        span.record("erp_tools.outcome", outcome);
        result
    }

    async fn run(
        &self,
        principal: &Arc<Principal>,
        run_id: String,
        call: ToolCall,
    ) -> Result<CallOutcome, CallError> {
        if run_id.trim().is_empty() {
            return Err(CallError::Internal(
                "the call has no agent run id: set ToolCall::agent_run_id or bind the token to a run".into(),
            ));
        }
        let entry = AuditEntry::new(principal, run_id.clone(), audit::ATTEMPT)
            .tool(call.name.clone(), call.tool_call_id.clone())
            .arguments(&call.arguments);

        // 1. Tool known.
        let Some(tool) = self.registry.get(&call.name) else {
            self.db
                .record_call(
                    &entry
                        .outcome(Outcome::Denied.as_str())
                        .message(format!("unknown tool `{}`; nothing ran", call.name)),
                )
                .await
                .map_err(internal)?;
            return Err(CallError::UnknownTool(call.name));
        };
        let def = tool.def;
        let not_done = match def.tier {
            Tier::Draft => NO_DRAFT_CREATED,
            Tier::Read => NOTHING_CHANGED,
        };

        // 2. Scopes held.
        let missing = tool.missing_scopes(principal);
        if !missing.is_empty() {
            let err = denied_for_scopes(def.name, &missing, principal);
            return self.refuse(entry, Outcome::Denied, err).await;
        }

        // 3. Arguments valid (server-side; the schema shown to the model is advice).
        let raw = match &call.arguments {
            Value::Null => Value::Object(Default::default()),
            other => other.clone(),
        };
        let args = match validate::validate(&tool.schema, &raw) {
            Ok(args) => args,
            Err(problems) => {
                let err = invalid_arguments(def.name, &problems).or_not_done(not_done);
                return self.refuse(entry, Outcome::ToolError, err).await;
            }
        };

        // 4. Hard value limits.
        if let Err(err) = check_limits(def.limits, &args) {
            return self
                .refuse(entry, Outcome::Denied, err.or_not_done(not_done))
                .await;
        }

        // Draft tools: the idempotency key, checked before anything is recorded as run.
        let key = match def.tier {
            Tier::Draft => match client_ref_of(&args) {
                Ok(client_ref) => Some(IdempotencyKey {
                    agent_run_id: run_id.clone(),
                    client_ref,
                }),
                Err(err) => {
                    return self
                        .refuse(entry, Outcome::ToolError, err.or_not_done(not_done))
                        .await;
                }
            },
            Tier::Read => None,
        };

        // 5. Attempt recorded before execution.
        let audit_id = self.db.record_attempt(&entry).await.map_err(internal)?;
        let ctx = ToolContext::new(
            principal.clone(),
            run_id,
            call.tool_call_id.clone(),
            def.name,
        );

        // 6-7. Execute, record the outcome.
        let finished = match (def.handler, key) {
            (Handler::Read(handler), _) => {
                let read = self.db.read_db();
                let finished = run_read(handler, &ctx, &read, args).await;
                self.finish_separately(audit_id, &finished).await;
                finished
            }
            (Handler::Draft(handler), Some(key)) => {
                self.run_draft(tool, handler, &ctx, key, args, audit_id)
                    .await
            }
            (Handler::Draft(_), None) => {
                // A draft handler registered on a read tool definition: refuse to run it.
                let err = ToolError::internal(format!(
                    "tool `{}` has a draft handler but tier read",
                    def.name
                ))
                .or_not_done(not_done);
                let finished = error_finished(Outcome::ToolError, err);
                self.finish_separately(audit_id, &finished).await;
                finished
            }
        };
        Ok(finished.outcome)
    }

    /// Records a call refused before execution (one audit row) and returns its outcome.
    async fn refuse(
        &self,
        entry: AuditEntry,
        outcome: Outcome,
        err: ToolError,
    ) -> Result<CallOutcome, CallError> {
        let finished = error_finished(outcome, err);
        self.db
            .record_call(
                &entry
                    .outcome(outcome.as_str())
                    .message(finished.audit_message.clone().unwrap_or_default()),
            )
            .await
            .map_err(internal)?;
        Ok(finished.outcome)
    }

    /// Records the outcome of a call whose transaction (if any) has ended.
    async fn finish_separately(&self, audit_id: AuditId, finished: &Finished) {
        if let Err(e) = self
            .db
            .record_outcome(
                audit_id,
                finished.outcome.outcome,
                finished.audit_message.as_deref(),
                finished.outcome.document.as_ref(),
            )
            .await
        {
            tracing::error!(error = %e, audit_id, "could not record the outcome of a call");
        }
    }

    async fn run_draft(
        &self,
        tool: &RegisteredTool,
        handler: crate::tool::DraftHandlerFn,
        ctx: &ToolContext,
        key: IdempotencyKey,
        args: Value,
        audit_id: AuditId,
    ) -> Finished {
        match self
            .draft_transaction(tool, handler, ctx, &key, args, audit_id)
            .await
        {
            Ok(done) => done,
            Err(Failure::Tool(finished)) => {
                self.finish_separately(audit_id, &finished).await;
                finished
            }
            Err(Failure::Db(e)) => {
                let finished = error_finished(
                    Outcome::ToolError,
                    ToolError::internal(format!("draft transaction failed: {e}"))
                        .or_not_done(NO_DRAFT_CREATED),
                );
                self.finish_separately(audit_id, &finished).await;
                finished
            }
            Err(Failure::Commit(e)) => {
                // The commit may have reached the database before the error: do not claim
                // that nothing was created; the idempotency key makes a retry safe.
                let finished = error_finished(
                    Outcome::ToolError,
                    ToolError::internal(format!("commit of the draft failed: {e}")).not_done(
                        "If the draft was created after all, resending the same call with the \
                         same client_ref returns it instead of creating another.",
                    ),
                );
                self.finish_separately(audit_id, &finished).await;
                finished
            }
        }
    }

    /// The idempotent write transaction of one draft call. `Ok` means the transaction
    /// committed (a new document, or a replay/mismatch that wrote nothing) and the audit
    /// row is complete; `Err` means nothing was committed and the audit row still needs
    /// its outcome.
    async fn draft_transaction(
        &self,
        tool: &RegisteredTool,
        handler: crate::tool::DraftHandlerFn,
        ctx: &ToolContext,
        key: &IdempotencyKey,
        args: Value,
        audit_id: AuditId,
    ) -> Result<Finished, Failure> {
        let def = tool.def;
        let request_hash = validate::canonical_hash(&args);
        let claim = Claim {
            key,
            request_hash: &request_hash,
            tool_name: def.name,
            user_id: ctx.user_id(),
            branch_id: ctx.branch_id(),
        };
        // A conflicting key that disappears before it can be read (purged in between) is
        // claimed again; two rounds are always enough in practice.
        for _ in 0..3 {
            let mut tx = self.db.begin_write().await?;
            if idempotency::claim(&mut tx, &claim).await? {
                let mut draft = DraftTx {
                    tx,
                    backend: self.db.backend(),
                    document: None,
                    agent_run_id: key.agent_run_id.clone(),
                    user_id: ctx.user_id().to_string(),
                };
                let ran = AssertUnwindSafe(handler(ctx, &mut draft, args.clone()))
                    .catch_unwind()
                    .await;
                let DraftTx { tx, document, .. } = draft;
                let output = match ran {
                    Ok(Ok(output)) => output,
                    Ok(Err(err)) => {
                        rollback(tx).await;
                        return Err(Failure::Tool(error_finished(
                            Outcome::ToolError,
                            err.or_not_done(NO_DRAFT_CREATED),
                        )));
                    }
                    Err(panic) => {
                        rollback(tx).await;
                        return Err(Failure::Tool(error_finished(
                            Outcome::ToolError,
                            ToolError::internal(format!(
                                "handler panicked: {}",
                                panic_text(&panic)
                            ))
                            .or_not_done(NO_DRAFT_CREATED),
                        )));
                    }
                };
                let Some(document) = document else {
                    rollback(tx).await;
                    return Err(Failure::Tool(error_finished(
                        Outcome::ToolError,
                        ToolError::internal(format!(
                            "draft tool `{}` returned Ok without calling DraftTx::record_document; \
                             its transaction was rolled back",
                            def.name
                        ))
                        .or_not_done(NO_DRAFT_CREATED),
                    )));
                };
                let mut tx = tx;
                idempotency::complete(&mut tx, key, &document, &output).await?;
                audit::finish(&mut *tx, audit_id, Outcome::Ok, None, Some(&document)).await?;
                tx.commit().await.map_err(Failure::Commit)?;
                return Ok(Finished {
                    outcome: success(def.tier, output, Some(document), false),
                    audit_message: None,
                });
            }

            let stored = idempotency::load(&mut tx, key).await?;
            let Some(stored) = stored else {
                rollback(tx).await;
                continue;
            };
            let same_caller =
                stored.user_id == ctx.user_id() && stored.branch_id == ctx.branch_id();
            let finished = if same_caller
                && stored.tool_name == def.name
                && stored.request_hash == request_hash
            {
                match stored.response {
                    Some(response) => Finished {
                        outcome: success(def.tier, response, stored.document.clone(), true),
                        audit_message: Some(format!("replay of client_ref {}", key.client_ref)),
                    },
                    None => error_finished(
                        Outcome::ToolError,
                        ToolError::internal(format!(
                            "idempotency key {key} has no stored response"
                        ))
                        .or_not_done(NO_DRAFT_CREATED),
                    ),
                }
            } else {
                error_finished(
                    Outcome::ToolError,
                    mismatch_error(key, &stored, def.name, same_caller),
                )
            };
            // Nothing was written in this transaction; the audit outcome commits with it.
            audit::finish(
                &mut *tx,
                audit_id,
                finished.outcome.outcome,
                finished.audit_message.as_deref(),
                finished.outcome.document.as_ref(),
            )
            .await?;
            tx.commit().await?;
            return Ok(finished);
        }
        Err(Failure::Db(sqlx::Error::Protocol(format!(
            "idempotency key {key} conflicted but could not be read"
        ))))
    }
}

enum Failure {
    /// The handler (or the framework's checks) refused; rolled back.
    Tool(Finished),
    /// The database failed; rolled back.
    Db(sqlx::Error),
    /// The commit of a new document failed: whether it took effect is unknown.
    Commit(sqlx::Error),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Db(e)
    }
}

async fn rollback(tx: sqlx::Transaction<'static, sqlx::Any>) {
    if let Err(e) = tx.rollback().await {
        tracing::warn!(error = %e, "rollback failed; the connection discards the transaction");
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-text panic payload".to_string()
    }
}

async fn run_read(
    handler: crate::tool::ReadHandlerFn,
    ctx: &ToolContext,
    read: &ReadDb,
    args: Value,
) -> Finished {
    match AssertUnwindSafe(handler(ctx, read, args))
        .catch_unwind()
        .await
    {
        Ok(Ok(output)) => Finished {
            outcome: success(Tier::Read, output, None, false),
            audit_message: None,
        },
        Ok(Err(err)) => error_finished(Outcome::ToolError, err.or_not_done(NOTHING_CHANGED)),
        Err(panic) => error_finished(
            Outcome::ToolError,
            ToolError::internal(format!("handler panicked: {}", panic_text(&panic)))
                .or_not_done(NOTHING_CHANGED),
        ),
    }
}

fn internal(e: crate::store::StoreError) -> CallError {
    tracing::error!(error = %e, "audit store failure");
    CallError::Internal(format!(
        "the audit log could not be written, so the call was not run: {e}"
    ))
}

/// A failed call's outcome; internal detail goes to the log and the audit row only.
fn error_finished(outcome: Outcome, err: ToolError) -> Finished {
    let text = err.to_string();
    let audit_message = match (err.kind(), err.details()) {
        (ToolErrorKind::Internal, Some(detail)) => {
            let detail = detail
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| detail.to_string());
            tracing::error!(detail = %detail, "tool call failed internally");
            format!("{text} [internal: {detail}]")
        }
        _ => text.clone(),
    };
    Finished {
        outcome: CallOutcome {
            outcome,
            structured: err.to_json(),
            text,
            document: None,
        },
        audit_message: Some(audit_message),
    }
}

/// A successful call's outcome: the handler's output (with `replayed` for draft tools)
/// and a short sentence plus the output as pretty JSON.
fn success(
    tier: Tier,
    output: Value,
    document: Option<DocumentRef>,
    replayed: bool,
) -> CallOutcome {
    let mut structured = output;
    if tier == Tier::Draft
        && let Value::Object(map) = &mut structured
    {
        map.insert("replayed".into(), Value::Bool(replayed));
    }
    let json = serde_json::to_string_pretty(&structured).unwrap_or_else(|_| structured.to_string());
    let text = match (&document, replayed) {
        (Some(doc), false) => format!(
            "Created draft {} {}.\n{json}",
            human_doc_type(&doc.doc_type),
            doc.number
        ),
        (Some(doc), true) => format!(
            "Returned the existing draft {} {}: this client_ref was already used in this run with the \
             same arguments, so no new draft was created.\n{json}",
            human_doc_type(&doc.doc_type),
            doc.number
        ),
        (None, _) => json,
    };
    CallOutcome {
        outcome: if replayed {
            Outcome::Replayed
        } else {
            Outcome::Ok
        },
        structured,
        text,
        document,
    }
}

fn human_doc_type(doc_type: &str) -> String {
    doc_type.replace(['_', '-'], " ")
}

fn denied_for_scopes(tool: &str, missing: &[&str], principal: &Principal) -> ToolError {
    let (noun, list) = if missing.len() == 1 {
        ("scope", format!("`{}`", missing[0]))
    } else {
        (
            "scopes",
            missing
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "Permission denied: tool `{tool}` needs the {noun} {list}, which the token of user {} does \
             not grant.",
            principal.user_id()
        ),
    )
    .next_step("Do not retry this call. Use the tools you have been given, or tell the user that this needs a person with the missing permission.")
    .not_done("The tool did not run and nothing was changed.")
    .with_details(serde_json::json!({ "missing_scopes": missing }))
}

fn invalid_arguments(tool: &str, problems: &validate::ArgumentErrors) -> ToolError {
    let details: Vec<Value> = problems
        .problems
        .iter()
        .map(|p| serde_json::json!({ "path": p.path, "message": p.message }))
        .collect();
    let listed: Vec<String> = problems
        .problems
        .iter()
        .map(|p| {
            let message = p.message.trim_end_matches('.');
            if p.path.is_empty() {
                message.to_string()
            } else {
                format!("`{}`: {message}", p.path)
            }
        })
        .collect();
    ToolError::invalid_arguments(format!(
        "The arguments for `{tool}` are invalid: {}.",
        listed.join("; ")
    ))
    .next_step("Correct the fields named above and call the tool again.")
    .with_details(serde_json::json!({ "problems": details }))
}

fn client_ref_of(args: &Value) -> Result<String, ToolError> {
    let Some(client_ref) = args.get("client_ref").and_then(Value::as_str) else {
        return Err(ToolError::internal(
            "draft tool arguments have no top-level `client_ref` string (declare `client_ref: String`)",
        ));
    };
    let trimmed = client_ref.trim();
    if trimmed.is_empty() {
        return Err(ToolError::invalid_arguments("`client_ref` is empty.")
            .next_step("Send your own short id for this write, e.g. \"R-1\", and reuse it only when retrying this same call."));
    }
    if client_ref.chars().count() > MAX_CLIENT_REF_CHARS {
        return Err(ToolError::invalid_arguments(format!(
            "`client_ref` is longer than {MAX_CLIENT_REF_CHARS} characters."
        ))
        .next_step("Send a short id for this write, e.g. \"R-1\"."));
    }
    Ok(client_ref.to_string())
}

fn mismatch_error(
    key: &IdempotencyKey,
    stored: &idempotency::StoredKey,
    tool: &str,
    same_caller: bool,
) -> ToolError {
    let what = match (&stored.document, same_caller) {
        (Some(doc), true) => format!("{} ({})", human_doc_type(&doc.doc_type), doc.number),
        _ => "another request".to_string(),
    };
    let message = if same_caller && stored.tool_name != tool {
        format!(
            "client_ref {} was already used in this run by tool `{}` for {what}.",
            key.client_ref, stored.tool_name
        )
    } else if same_caller {
        let what = match &stored.document {
            Some(doc) => format!(
                "a different {} ({})",
                human_doc_type(&doc.doc_type),
                doc.number
            ),
            None => "a different request".to_string(),
        };
        format!(
            "client_ref {} was already used in this run for {what}.",
            key.client_ref
        )
    } else {
        format!(
            "client_ref {} was already used in this run for another request.",
            key.client_ref
        )
    };
    ToolError::new(ToolErrorKind::IdempotencyMismatch, message)
        .next_step("Use a new client_ref for a new draft, or resend the original arguments to get the original result.")
        .not_done(NO_DRAFT_CREATED)
}

/// Checks every declared limit against the normalised arguments.
fn check_limits(limits: &[Limit], args: &Value) -> Result<(), ToolError> {
    for limit in limits {
        let max = Decimal::from_str(limit.max).map_err(|_| {
            ToolError::internal(format!(
                "limit `{}` has a max that is not a decimal: {}",
                limit.path, limit.max
            ))
        })?;
        let segments: Vec<&str> = limit.path.split('.').collect();
        let mut total = Decimal::ZERO;
        let mut overflow = false;
        sum_path(args, &segments, &mut total, &mut overflow)
            .map_err(|e| ToolError::internal(format!("limit `{}`: {e}", limit.path)))?;
        if overflow || total > max {
            let shown = if overflow {
                "too large to add up".to_string()
            } else {
                total.normalize().to_string()
            };
            let subject = if limit.path.contains("[]") {
                format!("The total of `{}` is {shown}", limit.path)
            } else {
                format!("`{}` is {shown}", limit.path)
            };
            return Err(ToolError::new(
                ToolErrorKind::Denied,
                format!("{subject}, above this tool's hard limit of {}.", limit.max),
            )
            .next_step(format!(
                "Keep {} at or below {}, or tell the user that a larger amount must be entered by a person in the ERP.",
                if limit.path.contains("[]") {
                    format!("the total of `{}`", limit.path)
                } else {
                    format!("`{}`", limit.path)
                },
                limit.max
            ))
            .with_details(serde_json::json!({ "limit": limit.path, "max": limit.max, "value": shown })));
        }
    }
    Ok(())
}

fn sum_path(
    value: &Value,
    segments: &[&str],
    total: &mut Decimal,
    overflow: &mut bool,
) -> Result<(), String> {
    let Some((first, rest)) = segments.split_first() else {
        let amount = match value {
            Value::Null => return Ok(()),
            Value::String(s) => {
                Decimal::from_str_exact(s).map_err(|_| format!("{s:?} is not a decimal"))?
            }
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Decimal::from(i),
                (None, Some(u)) => Decimal::from(u),
                _ => return Err(format!("{n} is not a whole number or decimal string")),
            },
            other => return Err(format!("{other} is not a number")),
        };
        match total.checked_add(amount) {
            Some(t) => *total = t,
            None => *overflow = true,
        }
        return Ok(());
    };
    let (name, each) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    let next = match value.get(name) {
        None | Some(Value::Null) => return Ok(()),
        Some(v) => v,
    };
    if each {
        let Value::Array(items) = next else {
            return Err(format!("`{name}` is not a list"));
        };
        for item in items {
            sum_path(item, rest, total, overflow)?;
        }
        Ok(())
    } else {
        sum_path(next, rest, total, overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limits_sum_over_lists() {
        let args =
            json!({"amount": "10.5", "lines": [{"qty": "400"}, {"qty": "600.5"}, {"qty": null}]});
        let ok = [
            Limit {
                path: "lines[].qty",
                max: "1000.5",
            },
            Limit {
                path: "amount",
                max: "11",
            },
        ];
        assert!(check_limits(&ok, &args).is_ok());
        let over = [Limit {
            path: "lines[].qty",
            max: "1000",
        }];
        let err = check_limits(&over, &args).unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::Denied);
        assert!(
            err.to_string().contains(
                "The total of `lines[].qty` is 1000.5, above this tool's hard limit of 1000."
            ),
            "{err}"
        );
        let absent = [Limit {
            path: "missing",
            max: "1",
        }];
        assert!(check_limits(&absent, &args).is_ok());
    }

    #[test]
    fn draft_success_carries_replayed() {
        let doc = DocumentRef {
            doc_type: "purchase_order".into(),
            id: 7,
            number: "PO-2026-0042".into(),
        };
        let out = success(
            Tier::Draft,
            json!({"number": "PO-2026-0042"}),
            Some(doc.clone()),
            true,
        );
        assert_eq!(out.outcome, Outcome::Replayed);
        assert_eq!(out.structured["replayed"], true);
        assert!(
            out.text
                .starts_with("Returned the existing draft purchase order PO-2026-0042")
        );
        let read = success(Tier::Read, json!({"qty": "3"}), None, false);
        assert!(read.structured.get("replayed").is_none());
    }
}
