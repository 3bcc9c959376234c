//! Read queries of the review console over the audit log: one line per agent run with its
//! counts, and the documents agents drafted. Always within one branch.

use serde::Serialize;
use sqlx::Row;

pub(crate) use super::review_runs::{RunFilter, RunSearch, people, runs};

use crate::tool::handles::DocumentId;

/// One document an agent drafted.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct DraftLine {
    pub audit_id: i64,
    pub at: String,
    pub run_id: String,
    pub tool: Option<String>,
    pub user_id: String,
    pub document_type: String,
    pub document_id: DocumentId,
    pub document_number: String,
}

/// Documents drafted in `branch_id` (successful draft calls), the newest first: each once,
/// from the call that first answered with it (a remote draft whose answer was lost is
/// first answered by the resend that found it by its marker, a `replayed` row).
pub(crate) async fn drafts(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    limit: i64,
    offset: i64,
) -> Result<Vec<DraftLine>, sqlx::Error> {
    // Limit and offset written into the text: bound, they make SQLite prepare the
    // statement again at every run (it plans with their values).
    let sql = format!(
        "SELECT id, at, agent_run_id, tool_name, user_id, document_type, document_id, \
         document_text_id, document_number FROM erp_audit_log l WHERE branch_id = $1 \
         AND source = 'runtime' AND document_number IS NOT NULL \
         AND (outcome = 'ok' OR (outcome = 'replayed' AND NOT EXISTS ( \
             SELECT 1 FROM erp_audit_log e WHERE e.agent_run_id = l.agent_run_id AND e.id < l.id \
             AND e.document_type = l.document_type AND e.document_number = l.document_number \
             AND e.outcome IN ('ok', 'replayed')))) \
         ORDER BY id DESC LIMIT {} OFFSET {}",
        limit.max(0),
        offset.max(0)
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .fetch_all(pool)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(DraftLine {
                audit_id: row.try_get("id")?,
                at: row.try_get("at")?,
                run_id: row.try_get("agent_run_id")?,
                tool: row.try_get("tool_name")?,
                user_id: row.try_get("user_id")?,
                document_type: row.try_get("document_type")?,
                document_id: document_id(row)?,
                document_number: row.try_get("document_number")?,
            })
        })
        .collect()
}

/// A document a draft call stored with its idempotency key: what the handler returned.
#[derive(Clone, Debug)]
pub(crate) struct DraftedDocument {
    pub run_id: String,
    pub tool: String,
    pub user_id: String,
    pub document_type: String,
    pub document_id: DocumentId,
    pub number: String,
    pub response: Option<serde_json::Value>,
    pub response_text: Option<String>,
    pub created_at: String,
}

const DOCUMENT_COLUMNS: &str = "agent_run_id, tool_name, user_id, document_type, document_id, \
    document_text_id, document_number, response, response_text, created_at";

/// A document row's id (`document_id`, or `document_text_id` for a string id).
fn document_id(row: &sqlx::any::AnyRow) -> Result<DocumentId, sqlx::Error> {
    DocumentId::from_columns(
        row.try_get("document_id")?,
        row.try_get("document_text_id")?,
    )
    .ok_or_else(|| sqlx::Error::Decode("a drafted document's row has no id".into()))
}

fn drafted(row: &sqlx::any::AnyRow) -> Result<DraftedDocument, sqlx::Error> {
    let response: Option<String> = row.try_get("response")?;
    Ok(DraftedDocument {
        run_id: row.try_get("agent_run_id")?,
        tool: row.try_get("tool_name")?,
        user_id: row.try_get("user_id")?,
        document_type: row.try_get("document_type")?,
        document_id: document_id(row)?,
        number: row.try_get("document_number")?,
        response: response.and_then(|r| serde_json::from_str(&r).ok()),
        response_text: row.try_get("response_text")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Document `number` of `doc_type` drafted in `branch_id`, if an agent drafted it.
pub(crate) async fn document(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    doc_type: &str,
    number: &str,
) -> Result<Option<DraftedDocument>, sqlx::Error> {
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM erp_idempotency_keys WHERE branch_id = $1 \
         AND document_type = $2 AND document_number = $3 LIMIT 1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(doc_type.to_string())
        .bind(number.to_string())
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(drafted).transpose()
}

/// The documents run `run_id` drafted in `branch_id`.
pub(crate) async fn run_documents(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    run_id: &str,
) -> Result<Vec<DraftedDocument>, sqlx::Error> {
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM erp_idempotency_keys WHERE branch_id = $1 \
         AND agent_run_id = $2 AND document_number IS NOT NULL"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(run_id.to_string())
        .fetch_all(pool)
        .await?;
    rows.iter().map(drafted).collect()
}

/// What a run was asked and how it ended, as kept on the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct RunStory {
    pub task: Option<String>,
    pub ended_status: Option<String>,
    pub answer: Option<String>,
    pub ended_at: Option<String>,
}

/// The task and ending kept on `run_id`, if the run is known.
pub(crate) async fn story(pool: &sqlx::AnyPool, run_id: &str) -> Result<RunStory, sqlx::Error> {
    let row = sqlx::query(
        "SELECT task, ended_status, answer, ended_at FROM erp_agent_runs WHERE agent_run_id = $1",
    )
    .bind(run_id.to_string())
    .fetch_optional(pool)
    .await?;
    row.map(|row| {
        Ok(RunStory {
            task: row.try_get("task")?,
            ended_status: row.try_get("ended_status")?,
            answer: row.try_get("answer")?,
            ended_at: row.try_get("ended_at")?,
        })
    })
    .transpose()
    .map(Option::unwrap_or_default)
}

/// Documents of `doc_type` drafted in `branch_id` since `since` (RFC 3339 text), the
/// newest first, at most `limit`: what a new proposal may repeat.
pub(crate) async fn recent_documents(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    doc_type: &str,
    since: &str,
    limit: i64,
) -> Result<Vec<DraftedDocument>, sqlx::Error> {
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM erp_idempotency_keys WHERE branch_id = $1 \
         AND document_type = $2 AND document_number IS NOT NULL AND created_at >= $3 \
         ORDER BY created_at DESC LIMIT $4"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(doc_type.to_string())
        .bind(since.to_string())
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.iter().map(drafted).collect()
}
