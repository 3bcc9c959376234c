//! The idempotency keys' SQL: claimed as the first statement of a draft's transaction,
//! completed with the document and response before it commits, purged after retention.

use serde_json::Value;
use sqlx::Row;

use crate::idempotency::{Claim, IdempotencyKey, StoredKey};
use crate::tool::handles::DocumentRef;

/// Tries to claim the key; `true` if this transaction now owns it.
pub(crate) async fn claim(
    conn: &mut sqlx::AnyConnection,
    c: &Claim<'_>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO erp_idempotency_keys \
         (agent_run_id, client_ref, request_hash, tool_name, user_id, branch_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (agent_run_id, client_ref) DO NOTHING",
    )
    .bind(c.key.agent_run_id.clone())
    .bind(c.key.client_ref.clone())
    .bind(c.request_hash.to_string())
    .bind(c.tool_name.to_string())
    .bind(c.user_id.to_string())
    .bind(c.branch_id)
    .bind(crate::audit::now_text())
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Reads a key row.
pub(crate) async fn load(
    conn: &mut sqlx::AnyConnection,
    key: &IdempotencyKey,
) -> Result<Option<StoredKey>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT request_hash, tool_name, user_id, branch_id, document_type, document_id, \
         document_number, response, response_text FROM erp_idempotency_keys \
         WHERE agent_run_id = $1 AND client_ref = $2",
    )
    .bind(key.agent_run_id.clone())
    .bind(key.client_ref.clone())
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let doc_type: Option<String> = row.try_get("document_type")?;
    let doc_id: Option<i64> = row.try_get("document_id")?;
    let doc_number: Option<String> = row.try_get("document_number")?;
    let response: Option<String> = row.try_get("response")?;
    Ok(Some(StoredKey {
        request_hash: row.try_get("request_hash")?,
        tool_name: row.try_get("tool_name")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        document: match (doc_type, doc_id, doc_number) {
            (Some(doc_type), Some(id), Some(number)) => Some(DocumentRef {
                doc_type,
                id,
                number,
            }),
            _ => None,
        },
        response: response.and_then(|r| serde_json::from_str(&r).ok()),
        response_text: row.try_get("response_text")?,
    }))
}

/// Stores the document and the response (and its text for the model, if rendered) on the
/// claimed key, inside the transaction.
pub(crate) async fn complete(
    conn: &mut sqlx::AnyConnection,
    key: &IdempotencyKey,
    document: &DocumentRef,
    response: &Value,
    response_text: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE erp_idempotency_keys SET document_type = $1, document_id = $2, \
         document_number = $3, response = $4, response_text = $5 \
         WHERE agent_run_id = $6 AND client_ref = $7",
    )
    .bind(document.doc_type.clone())
    .bind(document.id)
    .bind(document.number.clone())
    .bind(response.to_string())
    .bind(response_text.map(str::to_string))
    .bind(key.agent_run_id.clone())
    .bind(key.client_ref.clone())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Deletes keys created before `now - older_than`; returns how many.
pub(crate) async fn purge(
    pool: &sqlx::AnyPool,
    older_than: std::time::Duration,
) -> Result<u64, sqlx::Error> {
    let age = chrono::Duration::from_std(older_than).unwrap_or(chrono::Duration::MAX);
    let cutoff = chrono::Utc::now()
        .checked_sub_signed(age)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    let done = sqlx::query("DELETE FROM erp_idempotency_keys WHERE created_at < $1")
        .bind(crate::audit::time_text(cutoff))
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

/// How many keys are stored.
pub(crate) async fn count(pool: &sqlx::AnyPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM erp_idempotency_keys")
        .fetch_one(pool)
        .await
}
