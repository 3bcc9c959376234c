//! The idempotency keys' SQL: claimed as the first statement of a draft's transaction,
//! completed with the document and response before it commits, purged after retention.

use serde_json::Value;
use sqlx::Row;

use crate::idempotency::{Claim, IdempotencyKey, StoredKey};
use crate::tool::handles::{DocumentId, DocumentRef};

/// A statement on the `Any` driver with its arguments bound so far.
pub(crate) type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// Binds what is claimed with a key, as `$1` to `$7`: run, `client_ref`, request hash,
/// tool, user, branch, creation time.
pub(crate) fn bind_claim<'q>(query: AnyQuery<'q>, c: &Claim<'_>) -> AnyQuery<'q> {
    query
        .bind(c.key.agent_run_id.clone())
        .bind(c.key.client_ref.clone())
        .bind(c.request_hash.to_string())
        .bind(c.tool_name.to_string())
        .bind(c.user_id.to_string())
        .bind(c.branch_id)
        .bind(crate::audit::now_text())
}

/// Binds what a successful draft stores on its key, in this order: document type, id
/// and number, response, response text, audit row id, string id.
pub(crate) fn bind_completed<'q>(query: AnyQuery<'q>, done: &Completed<'_>) -> AnyQuery<'q> {
    let (id, text_id) = DocumentId::columns(Some(&done.document.id));
    query
        .bind(done.document.doc_type.clone())
        .bind(id)
        .bind(done.document.number.clone())
        .bind(done.response.to_string())
        .bind(done.response_text.map(str::to_string))
        .bind(done.audit_id)
        .bind(text_id)
}

/// Tries to claim the key; `true` if this transaction now owns it.
pub(crate) async fn claim(
    conn: &mut sqlx::AnyConnection,
    c: &Claim<'_>,
) -> Result<bool, sqlx::Error> {
    let done = bind_claim(
        sqlx::query(
            "INSERT INTO erp_idempotency_keys \
             (agent_run_id, client_ref, request_hash, tool_name, user_id, branch_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (agent_run_id, client_ref) DO NOTHING",
        ),
        c,
    )
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
         document_text_id, document_number, response, response_text FROM erp_idempotency_keys \
         WHERE agent_run_id = $1 AND client_ref = $2",
    )
    .bind(key.agent_run_id.clone())
    .bind(key.client_ref.clone())
    .fetch_optional(&mut *conn)
    .await?;
    row.as_ref().map(stored_key).transpose()
}

/// The key a row of `erp_idempotency_keys` holds (its `request_hash`, `tool_name`,
/// `user_id`, `branch_id`, `document_*`, `response` and `response_text` columns).
pub(crate) fn stored_key(row: &sqlx::any::AnyRow) -> Result<StoredKey, sqlx::Error> {
    let response: Option<String> = row.try_get("response")?;
    Ok(StoredKey {
        request_hash: row.try_get("request_hash")?,
        tool_name: row.try_get("tool_name")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        document: super::document::document_of_row(row)?,
        response: response.and_then(|r| serde_json::from_str(&r).ok()),
        response_text: row.try_get("response_text")?,
    })
}

/// Inserts the complete key row of a new document in one statement, with the id of the
/// call's audit row (SQLite: the draft's `BEGIN IMMEDIATE` transaction already excludes
/// every other writer, so the key needs no claim before the handler runs; the audit row,
/// in its own file, is finished after the commit and reconciled from `audit_id` after a
/// crash).
pub(crate) async fn insert_complete(
    conn: &mut sqlx::AnyConnection,
    c: &Claim<'_>,
    done: &Completed<'_>,
) -> Result<(), sqlx::Error> {
    let query = bind_claim(
        sqlx::query(
            "INSERT INTO erp_idempotency_keys \
             (agent_run_id, client_ref, request_hash, tool_name, user_id, branch_id, created_at, \
              document_type, document_id, document_number, response, response_text, audit_id, \
              document_text_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        ),
        c,
    );
    bind_completed(query, done).execute(&mut *conn).await?;
    Ok(())
}

/// What a successful draft stores on its key.
pub(crate) struct Completed<'a> {
    pub document: &'a DocumentRef,
    pub response: &'a Value,
    pub response_text: Option<&'a str>,
    pub audit_id: crate::audit::AuditId,
}

/// The documents of key rows written by the calls whose audit rows are `audit_ids`.
pub(crate) async fn documents_of_calls(
    pool: &sqlx::AnyPool,
    audit_ids: &[crate::audit::AuditId],
) -> Result<Vec<(crate::audit::AuditId, DocumentRef)>, sqlx::Error> {
    let mut out = Vec::new();
    for chunk in audit_ids.chunks(500) {
        let list = (1..=chunk.len())
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT audit_id, document_type, document_id, document_text_id, document_number \
             FROM erp_idempotency_keys WHERE audit_id IN ({list}) \
             AND (document_id IS NOT NULL OR document_text_id IS NOT NULL)"
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for id in chunk {
            query = query.bind(*id);
        }
        for row in query.fetch_all(pool).await? {
            if let Some(doc) = super::document::document_of_row(&row)? {
                out.push((row.try_get("audit_id")?, doc));
            }
        }
    }
    Ok(out)
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
