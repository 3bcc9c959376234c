//! The call pipeline (see [`ToolRuntime`]): admission, execution, audit, answer.

pub(crate) mod admit;
mod answer;
mod budget;
pub(crate) mod call;
pub(crate) mod call_key;
mod draft;
pub(crate) mod limits;
mod pages;
pub(crate) mod prepare;
pub(crate) mod preview;
mod read;
mod remote;
mod row;
pub(crate) mod run_id;

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument;

use crate::audit::{AuditEntry, Outcome};
use crate::page::{KeyTooShort, Sealer};
use crate::registry::ToolRegistry;
use crate::store::{Database, StoreError};
use crate::telemetry::CallTrace;
use crate::text;
use crate::tool::context::{Principal, ToolContext};
use crate::tool::error::ToolError;
use crate::tool::handler::Handler;
use crate::tool::input::InputAnswers;
use admit::{Admitted, Check};
use answer::Finished;
pub use budget::ResultBudget;
use budget::ResultRules;
pub use call::{CallError, CallOutcome, ToolCall};
pub use call_key::CallKey;
use prepare::{Prepared, prepare};
pub use preview::{Preview, PreviewHook, PreviewKind};
use run_id::BadRunId;

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
///    draft commits before it is durable, so a crash mid-call still leaves a trace. A
///    read, which changes nothing, writes its attempt row only when it runs longer than
///    [`with_read_attempt_after`](Self::with_read_attempt_after)
///    ([`DEFAULT_READ_ATTEMPT_AFTER`], 100 ms, by default); a shorter read is audited by
///    one finished row, and no read result leaves before its row is durable;
/// 3. **execute**: a read (`runtime/read.rs`) runs on the read-only pool; a draft
///    (`runtime/draft.rs`) runs in the transaction that claims its idempotency key;
/// 4. **record the outcome** on the same row (a read that ended before the writer took
///    its row is inserted finished; a successful draft on PostgreSQL is finished inside
///    its transaction; otherwise the writer applies the outcome with a later batch);
/// 5. **answer** (`runtime/answer.rs`): structured content plus text, ready for any
///    protocol.
///
/// Every sentence the pipeline says to a model is in `text/`: what failed, what
/// is allowed, what to do next and what did not happen ("No draft was created." /
/// "Nothing was changed."). Each call runs in a tracing span `execute_tool`, shown as
/// `tools/call {tool}` (the OpenTelemetry MCP conventions; its fields and child spans
/// are listed in [`telemetry`](crate::telemetry)), and is counted in its metrics.
#[derive(Clone)]
pub struct ToolRuntime {
    registry: Arc<ToolRegistry>,
    db: Database,
    results: Arc<ResultRules>,
    read_attempt_after: Duration,
}

/// How long a page cursor stays valid unless configured: one hour.
pub const DEFAULT_CURSOR_TTL: Duration = Duration::from_secs(3600);

/// How long a read runs before its `attempt` row is written, unless configured: 100 ms,
/// well above an indexed read, so a read that takes long (a report, a slow remote ERP)
/// has its attempt on record while it runs and a crash leaves a trace of it, while an
/// ordinary read costs one audit write (see [`ToolRuntime::with_read_attempt_after`]).
pub const DEFAULT_READ_ATTEMPT_AFTER: Duration = Duration::from_millis(100);

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("tools", &self.registry.tools().len())
            .field("db", &self.db)
            .field("budget", &self.results.budget)
            .finish()
    }
}

impl ToolRuntime {
    /// Serves `registry` on `db` (and says so in the metrics: `erp_tools_surface_info`
    /// with the registry's fingerprint).
    pub fn new(registry: Arc<ToolRegistry>, db: Database) -> Self {
        crate::telemetry::record::surface(registry.fingerprint());
        let results = Arc::new(ResultRules {
            sealer: Sealer::random(DEFAULT_CURSOR_TTL),
            budget: ResultBudget::default(),
        });
        ToolRuntime {
            registry,
            db,
            results,
            read_attempt_after: DEFAULT_READ_ATTEMPT_AFTER,
        }
    }

    /// How long a read call may run before its `attempt` audit row is written (default
    /// [`DEFAULT_READ_ATTEMPT_AFTER`], 100 ms).
    ///
    /// A read that ends sooner is audited by one finished row, committed before its
    /// result is returned: one audit write per read (about 1.4× the reads per second over
    /// HTTP of two writes, BENCHMARKS.md). A read that runs longer gets its `attempt` row
    /// then, committed while it runs, and its outcome on the same row when it ends. A read
    /// that a crash ends before `after` has no row: it answered nothing and changed
    /// nothing, but nothing shows it was asked either. `Duration::ZERO` hands the attempt
    /// of every read that does not answer at its first poll to the audit writer at once,
    /// as drafts do (two audit writes per read). Drafts, and reads run as MCP tasks
    /// (long work by declaration), always write their attempt row first, whatever this
    /// says.
    ///
    /// ```
    /// # use erp_tools_core::ToolRuntime;
    /// # fn f(runtime: ToolRuntime) -> ToolRuntime {
    /// use std::time::Duration;
    /// // Reports that run for minutes: on record once they pass one second.
    /// let runtime = runtime.with_read_attempt_after(Duration::from_secs(1));
    /// // Every read on record while it runs, at the cost of a second audit write.
    /// let runtime = runtime.with_read_attempt_after(Duration::ZERO);
    /// # runtime }
    /// ```
    pub fn with_read_attempt_after(mut self, after: Duration) -> Self {
        self.read_attempt_after = after;
        self
    }

    /// Seals page cursors with `key` (32 bytes or more), valid for `ttl`. Give every
    /// replica the same key so a cursor one issued is accepted by all; without it each
    /// process seals with a random key of its own, and a cursor does not survive a
    /// restart.
    ///
    /// ```
    /// # use erp_tools_core::{ToolRuntime, page::KeyTooShort};
    /// # fn f(runtime: ToolRuntime) -> Result<ToolRuntime, KeyTooShort> {
    /// use std::time::Duration;
    /// let runtime = runtime.with_cursor_key([7u8; 32], Duration::from_secs(3600))?;
    /// # Ok(runtime) }
    /// ```
    pub fn with_cursor_key(
        mut self,
        key: impl AsRef<[u8]>,
        ttl: Duration,
    ) -> Result<Self, KeyTooShort> {
        let sealer = Sealer::new(key.as_ref(), ttl)?;
        self.results = Arc::new(ResultRules {
            sealer,
            budget: self.results.budget.clone(),
        });
        Ok(self)
    }

    /// Bounds every result by `budget` (see [`ResultBudget`]; the default is
    /// [`ResultBudget::DEFAULT_TOKENS`] for every tool).
    pub fn with_result_budget(mut self, budget: ResultBudget) -> Self {
        self.results = Arc::new(ResultRules {
            sealer: self.results.sealer.clone(),
            budget,
        });
        self
    }

    /// The budget results are bounded by.
    pub fn result_budget(&self) -> &ResultBudget {
        &self.results.budget
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The database (tool data, idempotency keys, audit log).
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Runs one call through the pipeline (see [`ToolRuntime`]); the same as
    /// [`call_with_input`](Self::call_with_input) with no answers.
    pub async fn call(
        &self,
        principal: &Arc<Principal>,
        call: ToolCall,
    ) -> Result<CallOutcome, CallError> {
        self.call_with_input(principal, call, InputAnswers::default())
            .await
    }

    /// Runs one call through the pipeline (see [`ToolRuntime`]), delivering a person's
    /// `answers` to earlier questions of the tool to its handler
    /// ([`ToolContext::input`]); the caller must have checked each answer against the
    /// question the tool asked (the MCP server and the agent loop do). Every call, direct,
    /// over MCP or from the agent loop, runs through this path and in its
    /// `execute_tool` span.
    ///
    /// The call's run is, first present wins: the run the principal is bound to (its
    /// token's `run` claim; `call.agent_run_id` is then ignored, so a client cannot move
    /// its writes into another run's idempotency scope), `call.agent_run_id`, or else the
    /// principal's own scope ([`principal_run_id`](crate::principal_run_id)), which is the
    /// same on every connection, server restart and server process.
    ///
    /// Before anything runs, the run is checked: a run id that is not 1 to
    /// [`ToolCall::MAX_RUN_ID_LEN`] visible ASCII characters, another principal's scope,
    /// or a run that another principal (user and branch) used first
    /// ([`Database::claim_agent_run`]) is refused with a `denied` audit row and a text
    /// that says so; nothing runs. Replays and `client_ref` mismatches therefore only
    /// happen within one person's run.
    ///
    /// Returns `Ok` for every tool outcome, including tool errors and denials (MCP
    /// `isError: true`); `Err` only for protocol errors: an unknown tool, or the audit
    /// store being unavailable (no call runs unaudited).
    pub async fn call_with_input(
        &self,
        principal: &Arc<Principal>,
        call: ToolCall,
        answers: InputAnswers,
    ) -> Result<CallOutcome, CallError> {
        let prepared = self.prepare(principal, call);
        self.run_prepared(principal, prepared, answers).await
    }

    /// Opens a call's span, chooses its run and admits it (pure; nothing is written).
    pub(crate) fn prepare(&self, principal: &Principal, call: ToolCall) -> Prepared<'_> {
        self.prepare_traced(principal, call, &CallTrace::default())
    }

    /// [`prepare`](Self::prepare) with the protocol's side of the call on its span.
    pub(crate) fn prepare_traced(
        &self,
        principal: &Principal,
        call: ToolCall,
        trace: &CallTrace,
    ) -> Prepared<'_> {
        prepare(&self.registry, principal, call, &[], trace)
    }

    /// Checks the run of a prepared call, then runs or refuses it ([`finish`](Self::finish)).
    pub(crate) async fn run_prepared(
        &self,
        principal: &Arc<Principal>,
        mut prepared: Prepared<'_>,
        answers: InputAnswers,
    ) -> Result<CallOutcome, CallError> {
        if prepared.refusal.is_none() {
            let span = prepared.span.clone();
            let refusal = self
                .check_run(principal, prepared.chosen.clone())
                .instrument(span)
                .await;
            let refusal = match refusal {
                Ok(refusal) => refusal,
                Err(e) => {
                    let failed = Err(e);
                    prepared.record_end(&failed);
                    return failed;
                }
            };
            if let Some(refusal) = refusal {
                prepared.refuse(Outcome::Denied, refusal);
            }
        }
        self.finish(principal, prepared, answers).await
    }

    /// Why the call's run may not be used by `principal`, if it may not: invalid, another
    /// person's reserved scope, or bound to another person ([`Database::claim_agent_run`],
    /// which binds it to `principal` if no one used it before).
    pub(crate) async fn check_run(
        &self,
        principal: &Principal,
        chosen: Result<String, BadRunId>,
    ) -> Result<Option<ToolError>, CallError> {
        let run = match chosen {
            Ok(run) => run,
            Err(bad) => return Ok(Some(bad.refusal())),
        };
        let owner = self
            .db
            .claim_agent_run_under(&run, principal, Some(self.registry.fingerprint().as_str()))
            .await
            .map_err(internal)?;
        Ok((!owner.is(principal)).then(|| text::run_of_another_person(&run)))
    }

    /// [`check_run`](Self::check_run) of a valid run `run` that an agent starts, with its
    /// run log's row (`start`, for the run log on `log`): written in the transaction that
    /// binds the run when the run is new and the log is on this runtime's database. `true`
    /// beside no refusal when the row was written; `false` leaves it to the caller.
    #[cfg(feature = "agent")]
    pub(crate) async fn check_run_starting(
        &self,
        principal: &Principal,
        run: &str,
        log: &Database,
        start: &crate::store::run_log::NewRun<'_>,
    ) -> Result<(Option<ToolError>, bool), CallError> {
        if !self.db.is(log) {
            return Ok((self.check_run(principal, Ok(run.to_string())).await?, false));
        }
        let surface = Some(self.registry.fingerprint().as_str());
        let (owner, started) = self
            .db
            .claim_agent_run_starting(run, principal, surface, start)
            .await
            .map_err(internal)?;
        let refusal = (!owner.is(principal)).then(|| text::run_of_another_person(run));
        Ok((refusal, started))
    }

    /// Runs a prepared call whose run was checked: its refusal recorded (one finished
    /// audit row), or the admitted call executed. Records the outcome on the call's span.
    pub(crate) async fn finish(
        &self,
        principal: &Arc<Principal>,
        prepared: Prepared<'_>,
        answers: InputAnswers,
    ) -> Result<CallOutcome, CallError> {
        self.finish_bound(principal, prepared, answers, None).await
    }

    /// [`finish`](Self::finish), with a draft bound to an approved preview's digest
    /// (`bound`): a different document is rolled back and the call ends with the new
    /// preview (`runtime/preview.rs`).
    pub(crate) async fn finish_bound(
        &self,
        principal: &Arc<Principal>,
        prepared: Prepared<'_>,
        answers: InputAnswers,
        bound: Option<&str>,
    ) -> Result<CallOutcome, CallError> {
        let Prepared {
            span,
            started,
            tool_label,
            entry,
            admission,
            refusal,
            progress,
            cancel,
            attachments,
            answering,
            ..
        } = prepared;
        let result = async {
            if let Some((outcome, error)) = refusal {
                return self.record_refusal(entry, outcome, error).await;
            }
            match admission {
                Ok(admitted) => {
                    let ctx = call_context(principal, &entry, &admitted, answers)
                        .with_progress(progress)
                        .with_cancel(cancel)
                        .with_attachments(attachments);
                    self.execute(ctx, entry, admitted, bound).await
                }
                Err(refused) => {
                    let outcome = refused.outcome();
                    let unknown = (refused.check == Check::UnknownTool)
                        .then(|| entry.tool_name.clone().unwrap_or_default());
                    let answered = self.record_refusal(entry, outcome, refused.error).await?;
                    match unknown {
                        Some(name) => Err(CallError::UnknownTool(name, answered.text)),
                        None => Ok(answered),
                    }
                }
            }
        }
        .instrument(span.clone())
        .await;
        prepare::record_end(&span, tool_label, started, &result, answering);
        result
    }

    /// Writes the one finished audit row of a call refused before it ran, and answers it.
    async fn record_refusal(
        &self,
        entry: AuditEntry,
        outcome: Outcome,
        error: ToolError,
    ) -> Result<CallOutcome, CallError> {
        let finished = Finished::failed(outcome, error);
        self.db
            .record_call(
                &entry
                    .outcome(outcome.as_str())
                    .message(finished.audit_message.clone().unwrap_or_default())
                    .result_tokens(finished.result_tokens),
            )
            .await
            .map_err(internal)?;
        Ok(finished.outcome)
    }

    /// Runs an admitted call with a person's answers for the handler: attempt row
    /// (committed by the audit writer while the call runs), handler, outcome.
    async fn execute(
        &self,
        ctx: ToolContext,
        entry: AuditEntry,
        admitted: Admitted<'_>,
        bound: Option<&str>,
    ) -> Result<CallOutcome, CallError> {
        let def = admitted.tool.def;
        let finished = match (def.handler(), admitted.key) {
            (Handler::Read(handler), _) => {
                let shape = read::Shape {
                    rules: &self.results,
                    page: def.page(),
                    args: admitted
                        .tool
                        .schema
                        .properties()
                        .iter()
                        .map(|p| p.name.as_ref())
                        .filter(|name| def.page().is_none() || !is_page_arg(name))
                        .collect(),
                };
                // A call run as a task is long work: its attempt goes on record first.
                let after = if ctx.runs_as_task() {
                    Duration::ZERO
                } else {
                    self.read_attempt_after
                };
                read::run_audited(
                    &self.db,
                    handler,
                    &ctx,
                    admitted.args,
                    &entry,
                    &shape,
                    after,
                )
                .await
            }
            (Handler::Draft(handler), Some(key)) => {
                draft::run_audited(&self.db, handler, &ctx, &key, admitted.args, &entry, bound)
                    .await
            }
            (Handler::Remote(handler), Some(key)) => {
                remote::run_audited(&self.db, handler, &ctx, &key, admitted.args, &entry).await
            }
            (Handler::Draft(_) | Handler::Remote(_), None) => {
                unreachable!("admission gives every draft call its idempotency key")
            }
        };
        let finished = finished.map_err(internal)?;
        crate::telemetry::record::result_tokens(def.name(), finished.result_tokens);
        Ok(finished.outcome)
    }
}

/// The context of an admitted call: the caller, the call's ids, a person's answers.
fn call_context(
    principal: &Arc<Principal>,
    entry: &AuditEntry,
    admitted: &Admitted<'_>,
    answers: InputAnswers,
) -> ToolContext {
    ToolContext::new(
        principal.clone(),
        entry.agent_run_id.clone(),
        entry.tool_call_id.clone().unwrap_or_default(),
        admitted.tool.def.name(),
    )
    .with_input(answers)
}

/// Whether `name` is one of the two arguments a page tool's schema adds.
fn is_page_arg(name: &str) -> bool {
    name == crate::page::CURSOR_ARG || name == crate::page::PAGE_SIZE_ARG
}

fn internal(e: StoreError) -> CallError {
    tracing::error!(error = %e, "audit store failure");
    CallError::Internal(text::audit_unavailable(e))
}
