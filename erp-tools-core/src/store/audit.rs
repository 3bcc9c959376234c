//! The audit log's SQL: rows inserted before a call runs, finished afterwards, read back
//! for reports and the review of a run.

use sqlx::Row;

use crate::audit::{AuditEntry, AuditId, AuditRecord, Outcome, now_text};
use crate::tool::handles::DocumentRef;

const INSERT_SQL: &str = "INSERT INTO erp_audit_log (at, finished_at, source, agent_run_id, \
     tool_call_id, tool_name, user_id, branch_id, branch_code, arguments, outcome, message, \
     document_type, document_id, document_number, model, prompt_version, step, \
     action_signature) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
     $19) \
     RETURNING id";

pub(crate) async fn insert<'c, E>(
    executor: E,
    entry: &AuditEntry,
    source: &str,
    finished: bool,
) -> Result<AuditId, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let now = now_text();
    let doc = entry.document.as_ref();
    let row = sqlx::query(INSERT_SQL)
        .bind(now.clone())
        .bind(finished.then_some(now))
        .bind(source.to_string())
        .bind(entry.agent_run_id.clone())
        .bind(entry.tool_call_id.clone())
        .bind(entry.tool_name.clone())
        .bind(entry.user_id.clone())
        .bind(entry.branch_id)
        .bind(entry.branch_code.clone())
        .bind(entry.arguments.clone())
        .bind(entry.outcome.clone())
        .bind(entry.message.clone())
        .bind(doc.map(|d| d.doc_type.clone()))
        .bind(doc.map(|d| d.id))
        .bind(doc.map(|d| d.number.clone()))
        .bind(entry.model.clone())
        .bind(entry.prompt_version.clone())
        .bind(entry.step)
        .bind(entry.action_signature.clone())
        .fetch_one(executor)
        .await?;
    row.try_get::<i64, _>(0)
}

/// Sets the final outcome of a tool call's row. Runs on any executor, so a draft call
/// can do it inside its write transaction.
pub(crate) async fn finish<'c, E>(
    executor: E,
    id: AuditId,
    outcome: Outcome,
    message: Option<&str>,
    document: Option<&DocumentRef>,
) -> Result<(), sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = $1, message = $2, document_type = $3, \
         document_id = $4, document_number = $5, finished_at = $6 WHERE id = $7",
    )
    .bind(outcome.as_str())
    .bind(message.map(str::to_string))
    .bind(document.map(|d| d.doc_type.clone()))
    .bind(document.map(|d| d.id))
    .bind(document.map(|d| d.number.clone()))
    .bind(now_text())
    .bind(id)
    .execute(executor)
    .await?;
    Ok(())
}

/// The audit log, oldest first: every row, or only those of one agent run.
pub(crate) async fn select(
    pool: &sqlx::AnyPool,
    agent_run_id: Option<&str>,
) -> Result<Vec<AuditRecord>, sqlx::Error> {
    macro_rules! select {
            () => {
                "SELECT id, at, finished_at, source, agent_run_id, tool_call_id, tool_name, \
                 user_id, branch_id, branch_code, arguments, outcome, message, document_type, \
                 document_id, document_number, model, prompt_version, step, action_signature \
                 FROM erp_audit_log"
            };
        }
    let rows = match agent_run_id {
        Some(run) => {
            sqlx::query(concat!(select!(), " WHERE agent_run_id = $1 ORDER BY id"))
                .bind(run.to_string())
                .fetch_all(pool)
                .await?
        }
        None => {
            sqlx::query(concat!(select!(), " ORDER BY id"))
                .fetch_all(pool)
                .await?
        }
    };
    rows.iter().map(record_from_row).collect()
}

fn record_from_row(row: &sqlx::any::AnyRow) -> Result<AuditRecord, sqlx::Error> {
    let doc_type: Option<String> = row.try_get("document_type")?;
    let doc_id: Option<i64> = row.try_get("document_id")?;
    let doc_number: Option<String> = row.try_get("document_number")?;
    let document = match (doc_type, doc_id, doc_number) {
        (Some(doc_type), Some(id), Some(number)) => Some(DocumentRef {
            doc_type,
            id,
            number,
        }),
        _ => None,
    };
    Ok(AuditRecord {
        id: row.try_get("id")?,
        at: row.try_get("at")?,
        finished_at: row.try_get("finished_at")?,
        source: row.try_get("source")?,
        agent_run_id: row.try_get("agent_run_id")?,
        tool_call_id: row.try_get("tool_call_id")?,
        tool_name: row.try_get("tool_name")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        branch_code: row.try_get("branch_code")?,
        arguments: row.try_get("arguments")?,
        outcome: row.try_get("outcome")?,
        message: row.try_get("message")?,
        document,
        model: row.try_get("model")?,
        prompt_version: row.try_get("prompt_version")?,
        step: row.try_get("step")?,
        action_signature: row.try_get("action_signature")?,
    })
}
