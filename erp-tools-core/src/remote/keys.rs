//! The SQL of remote drafts' keys: a row in `erp_idempotency_keys` claimed *pending*
//! (`remote_state`) before anything is sent, leased to one call at a time
//! (`remote_owner`, `remote_lease_until`), settled with the document and the response.
//!
//! States (`remote_state`): `claimed` (a call holds it, nothing sent), `sending` (the create
//! may be in flight until the lease ends), `unknown` (a call ended without an answer),
//! `found` (the recovery pass found the document; the response is not stored yet), `NULL`
//! (settled, or a local draft's key). Times are UTC RFC 3339 text (`time_text`), which
//! compares in time order as text.

use std::time::Duration;

use serde_json::Value;
use sqlx::{AnyPool, Row};

use crate::audit::{AuditId, time_text};
use crate::idempotency::{Claim, IdempotencyKey};
use crate::store::keys::{AnyQuery, Completed, bind_claim, bind_completed};
use crate::tool::handles::{DocumentId, DocumentRef};

/// A remote draft's key row as stored.
#[derive(Clone, Debug)]
pub(crate) struct RemoteKey {
    pub request_hash: String,
    pub tool_name: String,
    pub user_id: String,
    pub branch_id: i64,
    pub state: Option<String>,
    pub lease_until: Option<String>,
    pub document: Option<DocumentRef>,
    pub response: Option<Value>,
    pub response_text: Option<String>,
}

impl RemoteKey {
    /// Settled: the document and the response are stored.
    pub(crate) fn settled(&self) -> bool {
        self.state.is_none() && self.document.is_some() && self.response.is_some()
    }
}

/// `now + d` as stored text.
pub(crate) fn after(d: Duration) -> String {
    let d = chrono::Duration::from_std(d).unwrap_or(chrono::Duration::days(1));
    time_text(chrono::Utc::now() + d)
}

/// Reads the key row.
pub(crate) async fn load(
    pool: &AnyPool,
    key: &IdempotencyKey,
) -> Result<Option<RemoteKey>, sqlx::Error> {
    let row = on_key(
        "SELECT request_hash, tool_name, user_id, branch_id, document_type, document_id, \
         document_text_id, document_number, response, response_text, remote_state, \
         remote_lease_until \
         FROM erp_idempotency_keys WHERE agent_run_id = $1 AND client_ref = $2",
        key,
    )
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let key = crate::store::keys::stored_key(&row)?;
    Ok(Some(RemoteKey {
        request_hash: key.request_hash,
        tool_name: key.tool_name,
        user_id: key.user_id,
        branch_id: key.branch_id,
        state: row.try_get("remote_state")?,
        lease_until: row.try_get("remote_lease_until")?,
        document: key.document,
        response: key.response,
        response_text: key.response_text,
    }))
}

/// A statement about one key row, with the key bound as `$1` (run) and `$2`
/// (`client_ref`).
fn on_key<'q>(sql: &'static str, key: &IdempotencyKey) -> AnyQuery<'q> {
    sqlx::query(sql)
        .bind(key.agent_run_id.clone())
        .bind(key.client_ref.clone())
}

/// Runs a conditional statement about one key row; `true` if it changed that row (of two
/// callers racing for it, one wins).
async fn changed(pool: &AnyPool, query: AnyQuery<'_>) -> Result<bool, sqlx::Error> {
    Ok(query.execute(pool).await?.rows_affected() == 1)
}

/// Claims a new key as `claimed` by `owner` until `lease_until`; `true` if this call now
/// owns it (`false`: the key exists).
pub(crate) async fn claim(
    pool: &AnyPool,
    c: &Claim<'_>,
    marker: &str,
    owner: &str,
    lease_until: &str,
    audit_id: Option<AuditId>,
) -> Result<bool, sqlx::Error> {
    let query = bind_claim(
        sqlx::query(
            "INSERT INTO erp_idempotency_keys \
             (agent_run_id, client_ref, request_hash, tool_name, user_id, branch_id, created_at, \
              remote_state, remote_marker, remote_owner, remote_lease_until, audit_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'claimed', $8, $9, $10, $11) \
             ON CONFLICT (agent_run_id, client_ref) DO NOTHING",
        ),
        c,
    );
    let query = query
        .bind(marker.to_string())
        .bind(owner.to_string())
        .bind(lease_until.to_string())
        .bind(audit_id);
    changed(pool, query).await
}

/// Takes over a pending key whose lease has run out (one conditional `UPDATE`: of two
/// callers, one wins); `true` if this call now owns it. The key keeps its state, so the
/// new owner knows whether a create may have been sent.
pub(crate) async fn take_over(
    pool: &AnyPool,
    key: &IdempotencyKey,
    owner: &str,
    lease_until: &str,
    audit_id: Option<AuditId>,
) -> Result<bool, sqlx::Error> {
    let query = on_key(
        "UPDATE erp_idempotency_keys SET remote_owner = $3, remote_lease_until = $4, \
         audit_id = COALESCE($5, audit_id) \
         WHERE agent_run_id = $1 AND client_ref = $2 AND remote_state IS NOT NULL \
         AND (remote_lease_until IS NULL OR remote_lease_until < $6)",
        key,
    );
    let query = query
        .bind(owner.to_string())
        .bind(lease_until.to_string())
        .bind(audit_id)
        .bind(crate::audit::now_text());
    changed(pool, query).await
}

/// Takes over a key left `claimed` (nothing was sent for it) whatever its lease: its
/// earlier owner can no longer send, since marking it `sending` names the owner.
pub(crate) async fn take_over_claimed(
    pool: &AnyPool,
    key: &IdempotencyKey,
    owner: &str,
    lease_until: &str,
) -> Result<bool, sqlx::Error> {
    let query = on_key(
        "UPDATE erp_idempotency_keys SET remote_owner = $3, remote_lease_until = $4 \
         WHERE agent_run_id = $1 AND client_ref = $2 AND remote_state = 'claimed'",
        key,
    );
    changed(
        pool,
        query.bind(owner.to_string()).bind(lease_until.to_string()),
    )
    .await
}

/// Marks the key `sending` (a create may be in flight until `lease_until`); only while
/// `owner` holds it.
pub(crate) async fn mark(
    pool: &AnyPool,
    key: &IdempotencyKey,
    owner: &str,
    state: &str,
    lease_until: &str,
) -> Result<bool, sqlx::Error> {
    let query = on_key(
        "UPDATE erp_idempotency_keys SET remote_state = $4, remote_lease_until = $5 \
         WHERE agent_run_id = $1 AND client_ref = $2 AND remote_owner = $3",
        key,
    );
    let query = query
        .bind(owner.to_string())
        .bind(state.to_string())
        .bind(lease_until.to_string());
    changed(pool, query).await
}

/// Stores the document found for a pending key (state `found`, lease released), so the
/// next call replays it without sending anything.
pub(crate) async fn found(
    pool: &AnyPool,
    key: &IdempotencyKey,
    owner: &str,
    doc: &DocumentRef,
) -> Result<bool, sqlx::Error> {
    let (id, text_id) = DocumentId::columns(Some(&doc.id));
    let query = on_key(
        "UPDATE erp_idempotency_keys SET remote_state = 'found', remote_owner = NULL, \
         remote_lease_until = NULL, document_type = $4, document_id = $5, document_number = $6, \
         document_text_id = $7 \
         WHERE agent_run_id = $1 AND client_ref = $2 AND remote_owner = $3",
        key,
    );
    let query = query
        .bind(owner.to_string())
        .bind(doc.doc_type.clone())
        .bind(id)
        .bind(doc.number.clone())
        .bind(text_id);
    changed(pool, query).await
}

/// Settles the key: the document, the response and the call's audit row; the key is no
/// longer pending.
pub(crate) async fn settle(
    pool: &AnyPool,
    key: &IdempotencyKey,
    owner: &str,
    doc: &DocumentRef,
    response: &Value,
    response_text: Option<&str>,
    audit_id: AuditId,
) -> Result<bool, sqlx::Error> {
    let query = on_key(
        "UPDATE erp_idempotency_keys SET remote_state = NULL, remote_owner = NULL, \
         remote_lease_until = NULL, document_type = $4, document_id = $5, document_number = $6, \
         response = $7, response_text = $8, audit_id = $9, document_text_id = $10 \
         WHERE agent_run_id = $1 AND client_ref = $2 AND remote_owner = $3",
        key,
    );
    let done = Completed {
        document: doc,
        response,
        response_text,
        audit_id,
    };
    changed(pool, bind_completed(query.bind(owner.to_string()), &done)).await
}

/// Frees a key whose call certainly created nothing (the row is deleted, as a local
/// draft's failed transaction leaves no key).
pub(crate) async fn release(
    pool: &AnyPool,
    key: &IdempotencyKey,
    owner: &str,
) -> Result<bool, sqlx::Error> {
    let query = on_key(
        "DELETE FROM erp_idempotency_keys WHERE agent_run_id = $1 AND client_ref = $2 \
         AND remote_owner = $3 AND document_id IS NULL AND document_text_id IS NULL",
        key,
    );
    changed(pool, query.bind(owner.to_string())).await
}

/// A pending key as the recovery pass reads it.
#[derive(Clone, Debug)]
pub(crate) struct PendingKey {
    pub key: IdempotencyKey,
    pub tool_name: String,
    pub user_id: String,
    pub branch_id: i64,
    pub state: String,
    pub marker: String,
    pub lease_until: Option<String>,
}

/// Up to `limit` keys left `claimed`, `sending` or `unknown` (oldest first).
pub(crate) async fn pending(pool: &AnyPool, limit: i64) -> Result<Vec<PendingKey>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT agent_run_id, client_ref, tool_name, user_id, branch_id, remote_state, \
         remote_marker, remote_lease_until FROM erp_idempotency_keys \
         WHERE remote_state IN ('claimed', 'sending', 'unknown') ORDER BY created_at LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(PendingKey {
                key: IdempotencyKey {
                    agent_run_id: row.try_get("agent_run_id")?,
                    client_ref: row.try_get("client_ref")?,
                },
                tool_name: row.try_get("tool_name")?,
                user_id: row.try_get("user_id")?,
                branch_id: row.try_get("branch_id")?,
                state: row.try_get("remote_state")?,
                marker: row.try_get("remote_marker")?,
                lease_until: row.try_get("remote_lease_until")?,
            })
        })
        .collect()
}

/// How many keys are still pending (any state but settled).
pub(crate) async fn pending_count(pool: &AnyPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM erp_idempotency_keys WHERE remote_state IS NOT NULL \
         AND remote_state <> 'found'",
    )
    .fetch_one(pool)
    .await
}
