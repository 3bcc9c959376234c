//! Executing a read call: the handler on the read-only pool, panics caught, and its one
//! audit row written when it ends (an attempt row first only for a read that runs long).

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use super::answer::{Finished, panic_text};
use super::budget::ResultRules;
use super::pages;
use super::row::final_row;
use crate::audit::{AuditEntry, Outcome};
use crate::page::PageSpec;
use crate::store::{Database, Final, StoreError};
use crate::text;
use crate::tool::Tier;
use crate::tool::context::ToolContext;
use crate::tool::handler::ReadHandlerFn;
use crate::tool::handles::ReadDb;

/// Runs a read call with its audit row.
///
/// A read changes nothing, so its row is written once, finished, when it ends: one row
/// per read, committed before the result is returned (at once when the audit writer is
/// idle, see [`Database::record_ended_call`]; otherwise with the writer's next batch).
/// A read still running after `attempt_after` has its `attempt` row handed to the writer
/// then, so a crash while a long read runs leaves a trace; its outcome goes on the same
/// row (inserted finished if the writer has not taken the row yet, or queued as an
/// update, committed with a later batch). `Duration::ZERO` writes the attempt row of
/// every read that does not answer at its first poll, before it goes on.
///
/// A read dropped before it ends (its caller went away) and before its attempt row was
/// handed over is recorded as `interrupted`, from a task of its own.
///
/// `Err` when the row could not be committed: the result is withheld.
pub(crate) async fn run_audited(
    db: &Database,
    handler: ReadHandlerFn,
    ctx: &ToolContext,
    args: Value,
    entry: &AuditEntry,
    shape: &Shape<'_>,
    attempt_after: Duration,
) -> Result<Finished, StoreError> {
    let read = db.read_db();
    let mut unrecorded = Unrecorded {
        db,
        entry: Some(entry),
    };
    let mut call = std::pin::pin!(run(handler, ctx, &read, args, shape));
    let first = match call.as_mut().now_or_never() {
        Some(finished) => Some(finished),
        None if attempt_after.is_zero() => None,
        None => tokio::time::timeout(attempt_after, call.as_mut())
            .await
            .ok(),
    };
    // From here on the row is in the writer's hands.
    unrecorded.entry = None;
    if let Some(finished) = first {
        db.record_ended_call(entry, read_row(&finished)).await?;
        return Ok(finished);
    }
    let pending = db.queue_attempt(entry).await?;
    let finished = call.await;
    let durable = tracing::info_span!("erp_tools.audit_durable");
    match pending.complete_in_queue(read_row(&finished)) {
        Ok(()) => {
            pending.durable().instrument(durable).await?;
        }
        Err(fin) => {
            let id = pending.durable().instrument(durable).await?;
            if let Err(e) = db.record_outcome(id, *fin).await {
                tracing::error!(error = %e, audit_id = id, "could not queue the outcome of a call");
            }
        }
    }
    Ok(finished)
}

/// A read whose row is not written yet: dropped so (the call's future was dropped before
/// it ended), it records the call as `interrupted` from a task of its own.
struct Unrecorded<'a> {
    db: &'a Database,
    entry: Option<&'a AuditEntry>,
}

impl Drop for Unrecorded<'_> {
    fn drop(&mut self) {
        let Some(entry) = self.entry.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(tool = ?entry.tool_name, "a read dropped outside a runtime has no audit row");
            return;
        };
        let (db, entry) = (self.db.clone(), entry.clone());
        let fin = Final::new(
            Outcome::Interrupted,
            Some(text::READ_DROPPED.to_string()),
            None,
        );
        runtime.spawn(async move {
            if let Err(e) = db.record_ended_call(&entry, fin).await {
                tracing::error!(error = %e, "could not record a read that was dropped");
            }
        });
    }
}

/// A read call's final row: a successful one keeps what it answered, the text the model
/// reads, so a person sees what the agent acted on.
fn read_row(finished: &Finished) -> crate::store::Final {
    let row = final_row(finished);
    match finished.outcome.outcome {
        Outcome::Ok => row.with_result(&finished.outcome.text),
        _ => row,
    }
}

/// How a read call's result is shaped: the runtime's cursor key and budget, the tool's
/// page bounds (a page tool) and its argument names (for the over-budget text).
pub(crate) struct Shape<'a> {
    pub rules: &'a ResultRules,
    pub page: Option<PageSpec>,
    pub args: Vec<&'a str>,
}

/// Runs a read handler. Nothing it does can write: `read` refuses every write. A page
/// tool's cursor is checked first and its page fitted to the budget; any other result
/// over the budget is refused with how to narrow the call.
async fn run(
    handler: ReadHandlerFn,
    ctx: &ToolContext,
    read: &ReadDb,
    args: Value,
    shape: &Shape<'_>,
) -> Finished {
    let budget = shape.rules.budget.for_tool(ctx.tool_name());
    let (page, ctx, args) = match shape.page {
        None => (None, ctx.clone(), args),
        Some(spec) => match pages::admit(&shape.rules.sealer, spec, ctx, args) {
            Ok((call, filters)) => {
                let ctx = ctx.clone().with_page(call.request.clone());
                (Some(call), ctx, filters)
            }
            Err(refused) => return Finished::failed(Outcome::ToolError, refused),
        },
    };
    match AssertUnwindSafe(handler(&ctx, read, args))
        .catch_unwind()
        .instrument(tracing::info_span!("erp_tools.handler"))
        .await
    {
        Ok(Ok(output)) => match (output.page, &page) {
            (Some(parts), Some(call)) => {
                match pages::answer(&shape.rules.sealer, call, parts, budget) {
                    Ok(answer) => Finished::page(answer.structured, answer.text, answer.tokens),
                    Err(refused) => Finished::failed(Outcome::ToolError, refused),
                }
            }
            _ => {
                let finished =
                    Finished::succeeded(Tier::Read, output.value, output.text, None, false);
                if finished.result_tokens > budget {
                    let refused = text::pages::result_over_budget(
                        ctx.tool_name(),
                        finished.result_tokens,
                        budget,
                        &shape.args,
                    );
                    Finished::failed(Outcome::ToolError, refused)
                } else {
                    finished
                }
            }
        },
        Ok(Err(err)) => {
            Finished::failed(Outcome::ToolError, err.or_not_done(text::NOTHING_CHANGED))
        }
        Err(panic) => Finished::failed(
            Outcome::ToolError,
            text::handler_panicked(Tier::Read, &panic_text(&panic)),
        ),
    }
}
