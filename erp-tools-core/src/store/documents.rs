//! The SQL of the documents calls attached to their results (`erp_documents`), kept for
//! `resources/read`: one row per owner (user and branch) and URI, read only by its owner,
//! and listed by run for the review console.

use sqlx::{AnyPool, Row};

use crate::audit::now_text;
use crate::store::StoreError;
use crate::store::tasks::now_ms;

/// A document to keep, or as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredDocument {
    pub uri: String,
    pub mime_type: String,
    pub tool_name: String,
    /// The run the call was audited under ('' for none).
    pub agent_run_id: String,
    /// The call's id in its run.
    pub tool_call_id: Option<String>,
    /// The text, or the bytes in base64 when `is_base64`.
    pub body: String,
    pub is_base64: bool,
}

/// Keeps `docs` for `user_id` of `branch_id` until `ttl_ms` from now (one attached
/// again replaces the one kept), after deleting the documents expired by now.
pub(crate) async fn keep(
    pool: &AnyPool,
    (user_id, branch_id): (&str, i64),
    docs: &[StoredDocument],
    ttl_ms: i64,
) -> Result<(), StoreError> {
    let now = now_ms();
    sqlx::query("DELETE FROM erp_documents WHERE expires_at <= $1")
        .bind(now)
        .execute(pool)
        .await?;
    for doc in docs {
        sqlx::query(
            "INSERT INTO erp_documents (user_id, branch_id, uri, mime_type, tool_name, \
             agent_run_id, tool_call_id, body, is_base64, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (user_id, branch_id, uri) DO UPDATE SET mime_type = excluded.mime_type, \
             tool_name = excluded.tool_name, agent_run_id = excluded.agent_run_id, \
             tool_call_id = excluded.tool_call_id, body = excluded.body, \
             is_base64 = excluded.is_base64, created_at = excluded.created_at, \
             expires_at = excluded.expires_at",
        )
        .bind(user_id.to_string())
        .bind(branch_id)
        .bind(doc.uri.clone())
        .bind(doc.mime_type.clone())
        .bind(doc.tool_name.clone())
        .bind(doc.agent_run_id.clone())
        .bind(doc.tool_call_id.clone())
        .bind(doc.body.clone())
        .bind(i64::from(doc.is_base64))
        .bind(now_text())
        .bind(now.saturating_add(ttl_ms))
        .execute(pool)
        .await?;
    }
    Ok(())
}

/// `SELECT` of the columns of kept documents, as [`document`] reads them, then `$rest`.
macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT uri, mime_type, tool_name, agent_run_id, tool_call_id, body, is_base64 \
             FROM erp_documents ",
            $rest
        )
    };
}

fn document(row: &sqlx::any::AnyRow) -> Result<StoredDocument, StoreError> {
    Ok(StoredDocument {
        uri: row.try_get("uri")?,
        mime_type: row.try_get("mime_type")?,
        tool_name: row.try_get("tool_name")?,
        agent_run_id: row.try_get("agent_run_id")?,
        tool_call_id: row.try_get("tool_call_id")?,
        body: row.try_get("body")?,
        is_base64: row.try_get::<i64, _>("is_base64")? != 0,
    })
}

/// The document `uri` of `user_id` in `branch_id`, if one is kept and has not expired.
pub(crate) async fn read(
    pool: &AnyPool,
    (user_id, branch_id): (&str, i64),
    uri: &str,
) -> Result<Option<StoredDocument>, StoreError> {
    let row = sqlx::query(select!(
        "WHERE user_id = $1 AND branch_id = $2 AND uri = $3 AND expires_at > $4"
    ))
    .bind(user_id.to_string())
    .bind(branch_id)
    .bind(uri.to_string())
    .bind(now_ms())
    .fetch_optional(pool)
    .await?;
    row.as_ref().map(document).transpose()
}

/// The documents calls of run `run_id` in `branch_id` attached and that are still kept,
/// oldest first (then by URI); none for the empty run id.
#[cfg(feature = "review")]
pub(crate) async fn of_run(
    pool: &AnyPool,
    run_id: &str,
    branch_id: i64,
) -> Result<Vec<StoredDocument>, StoreError> {
    if run_id.is_empty() {
        return Ok(Vec::new());
    }
    let rows = sqlx::query(select!(
        "WHERE agent_run_id = $1 AND branch_id = $2 AND expires_at > $3 \
         ORDER BY created_at, uri"
    ))
    .bind(run_id.to_string())
    .bind(branch_id)
    .bind(now_ms())
    .fetch_all(pool)
    .await?;
    rows.iter().map(document).collect()
}
