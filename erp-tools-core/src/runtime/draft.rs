//! Executing a draft call: one transaction that first claims (PostgreSQL) or checks
//! (SQLite, under `BEGIN IMMEDIATE`) the idempotency key; the handler writes the document
//! on it; the key row gets the document and the response, and all of it commits together
//! (SPEC R4), never before the call's `attempt` audit row is durable (see
//! [`run_audited`] for how the audit row is finished on each backend).
//!
//! A key that is already claimed is decided by [`StoredKey::verdict`]: a replay returns the
//! stored result, anything else is refused; either way nothing is written but the audit
//! row's outcome.
//!
//! A call bound to an approved [`Preview`] (`bound`, its digest) compares the handler's
//! output with it before anything commits: a different document is rolled back and the
//! call ends with the new preview (see `runtime/preview.rs`).
//!
//! [`StoredKey::verdict`]: crate::idempotency::StoredKey

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use super::answer::{Finished, panic_text};
use super::preview::{Preview, binding_digest};
use super::row::final_row;
use crate::audit::{AuditEntry, AuditId, Outcome};
use crate::idempotency::{Claim, IdempotencyKey, Verdict, request_hash};
use crate::store::audit;
use crate::store::keys::{self, Completed};
use crate::store::{Database, Final, PendingRow, StoreError};
use crate::text;
use crate::tool::Tier;
use crate::tool::context::ToolContext;
use crate::tool::handler::DraftHandlerFn;
use crate::tool::handles::{Backend, DraftTx};

/// How the transaction ended when it did not commit a result.
pub(crate) enum Failure {
    /// The handler (or the framework's checks) refused; rolled back.
    Tool(Finished),
    /// The database failed; rolled back.
    Db(sqlx::Error),
    /// The commit of a new document failed: whether it took effect is unknown.
    Commit(sqlx::Error),
    /// The call's attempt row could not be committed; rolled back, no result is given.
    Audit(StoreError),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Db(e)
    }
}

impl Failure {
    /// The call's outcome; its audit row still needs it (nothing was committed).
    fn into_finished(self) -> Result<Finished, StoreError> {
        Ok(match self {
            Failure::Tool(finished) => finished,
            Failure::Db(e) => {
                Finished::failed(Outcome::ToolError, text::draft_transaction_failed(e))
            }
            Failure::Commit(e) => Finished::failed(Outcome::ToolError, text::commit_failed(e)),
            Failure::Audit(e) => return Err(e),
        })
    }
}

/// The call's `attempt` row: handed to the audit writer, its id once durable.
struct Attempt {
    pending: Option<PendingRow>,
    id: Option<AuditId>,
    /// The row's `at` (with the id, where PostgreSQL finds it).
    at: String,
}

impl Attempt {
    /// Waits until the row is durable (once) and returns its id.
    async fn id(&mut self) -> Result<AuditId, StoreError> {
        if let Some(id) = self.id {
            return Ok(id);
        }
        let pending = self
            .pending
            .take()
            .ok_or_else(|| StoreError::AuditWrite("the attempt row was not committed".into()))?;
        let id = pending.durable().await?;
        self.id = Some(id);
        Ok(id)
    }
}

/// How the transaction ended with a result to give.
struct Done {
    finished: Finished,
    /// The audit row was finished inside the committed transaction (PostgreSQL), with
    /// this outcome: the audit writer links it to its chain.
    audit_finished: Option<Final>,
}

/// Runs a draft call with its audit row: the `attempt` row is handed to the audit writer
/// and committed while the transaction begins, claims the key and runs the handler; the
/// transaction commits only after the row is durable. On PostgreSQL the key row and the
/// audit row are completed by one statement inside the transaction; on SQLite (audit log in
/// its own file) the audit row is finished by the writer after the commit, and the key row
/// names it (`audit_id`) so that a crash in between is reconciled at the next start.
///
/// `Err` only when the attempt row could not be committed: nothing was committed and no
/// result may be given.
pub(crate) async fn run_audited(
    db: &Database,
    handler: DraftHandlerFn,
    ctx: &ToolContext,
    key: &IdempotencyKey,
    args: Value,
    entry: &AuditEntry,
    bound: Option<&str>,
) -> Result<Finished, StoreError> {
    let pending = db.queue_attempt(entry).await?;
    let mut attempt = Attempt {
        at: pending.at().to_string(),
        pending: Some(pending),
        id: None,
    };
    let transaction = tracing::info_span!("erp_tools.draft_transaction");
    let ran = run(db, handler, ctx, key, args, &mut attempt, bound)
        .instrument(transaction)
        .await;
    let (finished, audit_finished) = match ran {
        Ok(done) => (done.finished, done.audit_finished),
        Err(failure) => (failure.into_finished()?, None),
    };
    // No result leaves before the attempt row is durable, whatever the path.
    let id = match attempt.id {
        Some(id) => id,
        None => {
            let durable = tracing::info_span!("erp_tools.audit_durable");
            attempt.id().instrument(durable).await?
        }
    };
    match audit_finished {
        Some(fin) => {
            if let Err(e) = db.link_finished(id, fin).await {
                tracing::warn!(error = %e, audit_id = id, "could not queue the link of a call's row");
            }
        }
        None => {
            if let Err(e) = db.record_outcome(id, final_row(&finished)).await {
                tracing::error!(error = %e, audit_id = id, "could not queue the outcome of a call");
            }
        }
    }
    Ok(finished)
}

/// The idempotent write transaction of one draft call.
async fn run(
    db: &Database,
    handler: DraftHandlerFn,
    ctx: &ToolContext,
    key: &IdempotencyKey,
    args: Value,
    attempt: &mut Attempt,
    bound: Option<&str>,
) -> Result<Done, Failure> {
    let tool = ctx.tool_name();
    let request_hash = request_hash(&args);
    let claim = Claim {
        key,
        request_hash: &request_hash,
        tool_name: tool,
        user_id: ctx.user_id(),
        branch_id: ctx.branch_id(),
    };
    let pg = db.backend() == Backend::Postgres;
    // A conflicting key that disappears before it can be read (purged in between) is
    // claimed again; two rounds are always enough in practice.
    for _ in 0..3 {
        // Held until this round's transaction ended.
        let _turn = db.write_turn().await;
        let mut tx = db.begin_write().await?;
        // PostgreSQL claims the key first, so a concurrent duplicate waits on it. SQLite's
        // `BEGIN IMMEDIATE` already excludes every other writer: a key row that is not
        // there now cannot appear before this transaction ends.
        let claiming = tracing::info_span!("erp_tools.idempotency_claim");
        let new = async {
            Ok::<_, sqlx::Error>(if pg {
                keys::claim(&mut tx, &claim).await?
            } else {
                keys::load(&mut tx, key).await?.is_none()
            })
        }
        .instrument(claiming)
        .await?;
        let _pending = new.then(crate::telemetry::record::PendingKey::claimed);
        if new {
            let mut draft = DraftTx::new(
                tx,
                db.backend(),
                key.agent_run_id.clone(),
                ctx.user_id().to_string(),
            );
            let ran = AssertUnwindSafe(handler(ctx, &mut draft, args.clone()))
                .catch_unwind()
                .instrument(tracing::info_span!("erp_tools.handler"))
                .await;
            let (tx, document) = draft.into_parts();
            let output = match ran {
                Ok(Ok(output)) => output,
                Ok(Err(err)) => {
                    rollback(tx).await;
                    let err = err.or_not_done(text::NO_DRAFT_CREATED);
                    return Err(Failure::Tool(Finished::failed(Outcome::ToolError, err)));
                }
                Err(panic) => {
                    rollback(tx).await;
                    let err = text::handler_panicked(Tier::Draft, &panic_text(&panic));
                    return Err(Failure::Tool(Finished::failed(Outcome::ToolError, err)));
                }
            };
            let Some(document) = document else {
                rollback(tx).await;
                let err = text::document_not_recorded(tool);
                return Err(Failure::Tool(Finished::failed(Outcome::ToolError, err)));
            };
            // Bound to an approved preview: a different document creates nothing.
            if let Some(expected) = bound
                && binding_digest(&output.value, Some(&document)) != expected
            {
                rollback(tx).await;
                let now = Preview::rolled_back(output.value, output.text, &document);
                let err = super::preview::changed(tool, &now);
                return Err(Failure::Tool(Finished::failed(Outcome::ToolError, err)));
            }
            let mut tx = tx;
            // The attempt row must be durable before this transaction commits.
            let durable = tracing::info_span!("erp_tools.audit_durable");
            let audit_id = match attempt.id().instrument(durable).await {
                Ok(id) => id,
                Err(e) => {
                    rollback(tx).await;
                    return Err(Failure::Audit(e));
                }
            };
            let done = Completed {
                document: &document,
                response: &output.value,
                response_text: output.text.as_deref(),
                audit_id,
            };
            let mut audit_finished = None;
            if pg {
                let mut fin = Final::new(Outcome::Ok, None, Some(document.clone()));
                fin.row_at = Some(attempt.at.clone());
                audit::complete_and_finish(&mut tx, key, &done, &fin).await?;
                audit_finished = Some(fin);
            } else {
                keys::insert_complete(&mut tx, &claim, &done).await?;
            }
            tx.commit().await.map_err(Failure::Commit)?;
            return Ok(Done {
                finished: Finished::succeeded(
                    Tier::Draft,
                    output.value,
                    output.text,
                    Some(document),
                    false,
                ),
                audit_finished,
            });
        }

        let Some(stored) = keys::load(&mut tx, key).await? else {
            rollback(tx).await;
            continue;
        };
        let finished = match stored.verdict(ctx.user_id(), ctx.branch_id(), tool, &request_hash) {
            Verdict::Replay => match stored.response {
                Some(response) => {
                    let mut f = Finished::succeeded(
                        Tier::Draft,
                        response,
                        stored.response_text.clone(),
                        stored.document.clone(),
                        true,
                    );
                    f.audit_message = Some(format!("replay of client_ref {}", key.client_ref));
                    f
                }
                None => Finished::failed(Outcome::ToolError, text::key_without_response(key)),
            },
            Verdict::Mismatch { same_caller } => Finished::failed(
                Outcome::ToolError,
                text::key_mismatch(key, &stored, tool, same_caller),
            ),
        };
        // Nothing was written in this transaction; the audit writer records the outcome.
        rollback(tx).await;
        return Ok(Done {
            finished,
            audit_finished: None,
        });
    }
    Err(Failure::Db(sqlx::Error::Protocol(format!(
        "idempotency key {key} conflicted but could not be read"
    ))))
}

async fn rollback(tx: sqlx::Transaction<'static, sqlx::Any>) {
    if let Err(e) = tx.rollback().await {
        tracing::warn!(error = %e, "rollback failed; the connection discards the transaction");
    }
}
