//! Executing a draft call: one transaction whose first statement claims the idempotency
//! key; the handler writes the document on it; the key gets the document and the
//! response, the audit row its outcome, and all of it commits together (SPEC R4).
//!
//! A key that is already claimed is decided by [`StoredKey::verdict`]: a replay returns the
//! stored result, anything else is refused; either way nothing is written but the audit
//! row's outcome.
//!
//! [`StoredKey::verdict`]: crate::idempotency::StoredKey

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;

use super::answer::{Finished, panic_text};
use crate::audit::{AuditId, Outcome};
use crate::idempotency::{Claim, IdempotencyKey, Verdict};
use crate::store::{Database, audit as audit_sql, keys};
use crate::text;
use crate::tool::Tier;
use crate::tool::context::ToolContext;
use crate::tool::handler::DraftHandlerFn;
use crate::tool::handles::DraftTx;
use crate::validate::canonical_hash;

/// How the transaction ended when it did not commit a result.
pub(crate) enum Failure {
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

impl Failure {
    /// The call's outcome; its audit row still needs it (nothing was committed).
    pub(crate) fn into_finished(self) -> Finished {
        match self {
            Failure::Tool(finished) => finished,
            Failure::Db(e) => {
                Finished::failed(Outcome::ToolError, text::draft_transaction_failed(e))
            }
            Failure::Commit(e) => Finished::failed(Outcome::ToolError, text::commit_failed(e)),
        }
    }
}

/// The idempotent write transaction of one draft call. `Ok` means the transaction
/// committed (a new document, or a replay or mismatch that wrote nothing) together with
/// the audit row's outcome; `Err` means nothing was committed and the audit row still
/// needs its outcome.
pub(crate) async fn run(
    db: &Database,
    handler: DraftHandlerFn,
    ctx: &ToolContext,
    key: &IdempotencyKey,
    args: Value,
    audit_id: AuditId,
) -> Result<Finished, Failure> {
    let tool = ctx.tool_name();
    let request_hash = canonical_hash(&args);
    let claim = Claim {
        key,
        request_hash: &request_hash,
        tool_name: tool,
        user_id: ctx.user_id(),
        branch_id: ctx.branch_id(),
    };
    // A conflicting key that disappears before it can be read (purged in between) is
    // claimed again; two rounds are always enough in practice.
    for _ in 0..3 {
        let mut tx = db.begin_write().await?;
        if keys::claim(&mut tx, &claim).await? {
            let mut draft = DraftTx::new(
                tx,
                db.backend(),
                key.agent_run_id.clone(),
                ctx.user_id().to_string(),
            );
            let ran = AssertUnwindSafe(handler(ctx, &mut draft, args.clone()))
                .catch_unwind()
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
            let mut tx = tx;
            keys::complete(
                &mut tx,
                key,
                &document,
                &output.value,
                output.text.as_deref(),
            )
            .await?;
            audit_sql::finish(&mut *tx, audit_id, Outcome::Ok, None, Some(&document)).await?;
            tx.commit().await.map_err(Failure::Commit)?;
            return Ok(Finished::succeeded(
                Tier::Draft,
                output.value,
                output.text,
                Some(document),
                false,
            ));
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
        // Nothing was written in this transaction; the audit outcome commits with it.
        audit_sql::finish(
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

async fn rollback(tx: sqlx::Transaction<'static, sqlx::Any>) {
    if let Err(e) = tx.rollback().await {
        tracing::warn!(error = %e, "rollback failed; the connection discards the transaction");
    }
}
