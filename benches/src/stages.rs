//! The two audit statements of a read call, as the framework runs them
//! (`Database::record_attempt` and `Database::record_outcome`, which are crate-private),
//! written out by hand so that benchmark 1 can time each stage on its own. Same SQL, same
//! binds (the entry's columns bound by [`AuditColumns`]), same executor as
//! `erp-tools-core/src/store/audit.rs`.

use erp_tools_core::sqlx::{self, Row};
use erp_tools_core::{AuditEntry, Database};

use crate::audit_columns::AuditColumns;
use crate::fixtures::{ATTEMPT, SOURCE_RUNTIME, now_text};

const INSERT_SQL: &str = "INSERT INTO bench_audit_log (at, finished_at, source, agent_run_id, \
     tool_call_id, tool_name, user_id, branch_id, branch_code, arguments, outcome, message, \
     document_type, document_id, document_number, model, prompt_version, step, \
     action_signature) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
     $19) \
     RETURNING id";

/// Records that a call is about to run: one `attempt` row, committed on its own (the
/// framework's `record_attempt`). Returns the row's id.
pub async fn record_attempt(db: &Database, entry: &AuditEntry) -> Result<i64, sqlx::Error> {
    let entry = entry.clone().outcome(ATTEMPT);
    let now = now_text();
    let doc = entry.document.as_ref();
    let row = sqlx::query(INSERT_SQL)
        .bind(now.clone())
        .bind(None::<String>)
        .bind(SOURCE_RUNTIME.to_string())
        .call_columns(&entry)
        .bind(entry.message.clone())
        .bind(doc.map(|d| d.doc_type.clone()))
        .bind(doc.and_then(|d| d.id.as_i64()))
        .bind(doc.map(|d| d.number.clone()))
        .model_columns(&entry)
        .bind(entry.step)
        .bind(entry.action_signature.clone())
        .fetch_one(db.pool())
        .await?;
    row.try_get::<i64, _>(0)
}

/// Finishes the row `id` as `ok`, without a message or document (the framework's
/// `record_outcome` after a read).
pub async fn record_outcome_ok(db: &Database, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE bench_audit_log SET outcome = $1, message = $2, document_type = $3, \
         document_id = $4, document_number = $5, finished_at = $6 WHERE id = $7",
    )
    .bind("ok")
    .bind(None::<String>)
    .bind(None::<String>)
    .bind(None::<i64>)
    .bind(None::<String>)
    .bind(now_text())
    .bind(id)
    .execute(db.pool())
    .await?;
    Ok(())
}
