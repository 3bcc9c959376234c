//! Executing a read call: the handler on the read-only pool, panics caught, while its
//! attempt row is committed by the audit writer.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use super::answer::{Finished, panic_text};
use super::budget::ResultRules;
use super::pages;
use super::row::final_row;
use crate::audit::{AuditEntry, Outcome};
use crate::page::PageSpec;
use crate::store::{Database, StoreError};
use crate::text;
use crate::tool::Tier;
use crate::tool::context::ToolContext;
use crate::tool::handler::ReadHandlerFn;
use crate::tool::handles::ReadDb;

/// Runs a read call with its audit row: the `attempt` row is handed to the audit writer
/// and committed while the handler runs; the result is returned only once the row is
/// durable. A call that ends before the writer took its row has the finished row
/// inserted in one go; otherwise the outcome is queued as an update (committed with a
/// later batch; a crash before that leaves the row at `attempt` for the recovery pass).
/// A handler that answers at its first poll, without waiting for anything (no database,
/// no I/O), has nothing to overlap: its row is written once, finished, before the result
/// is returned (at once when the writer is idle, see
/// [`Database::record_ended_call`]).
///
/// `Err` when the row could not be committed: the result is withheld.
pub(crate) async fn run_audited(
    db: &Database,
    handler: ReadHandlerFn,
    ctx: &ToolContext,
    args: Value,
    entry: &AuditEntry,
    shape: &Shape<'_>,
) -> Result<Finished, StoreError> {
    let read = db.read_db();
    let mut call = std::pin::pin!(run(handler, ctx, &read, args, shape));
    if let Some(finished) = call.as_mut().now_or_never() {
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
