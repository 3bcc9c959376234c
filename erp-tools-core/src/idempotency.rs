//! Idempotency keys for draft tools (SPEC R4).
//!
//! Every draft call carries a `client_ref` (the model's own id for the write, reused on
//! retry). The key is `agent_run_id:client_ref`: the run id comes from the token or the
//! agent host, so two runs never collide, and a retry inside one run always lands on the
//! same key. The request hash is the sha256 of the canonical JSON of the *validated*
//! arguments ([`crate::validate::canonical_hash`]): object key order does not matter,
//! absent optional fields equal `null`, and decimals are compared as numbers (`"24"` and
//! `"24.00"` are the same request).
//!
//! The call pipeline runs one transaction per draft call:
//!
//! 1. `INSERT` the key `ON CONFLICT DO NOTHING`, as the transaction's first statement
//!    (SQLite: under `BEGIN IMMEDIATE`, so the write lock is held from the start;
//!    PostgreSQL: an in-flight duplicate waits on the primary key until the first
//!    transaction ends, then sees its committed row).
//! 2. Inserted: the handler runs on that transaction ([`DraftTx`]); the document it
//!    records and the response are stored on the key row; the audit row gets its
//!    outcome; all of it commits together. If the handler fails, everything is rolled
//!    back: no key, no document.
//! 3. Not inserted: the stored row decides. Same tool, same caller, same hash: the stored
//!    response is returned with `replayed: true` (not an error). Anything else: a
//!    model-facing error telling the model to use a new `client_ref` or resend the
//!    original arguments; nothing is written.
//!
//! A key row therefore never exists without its committed document.
//!
//! ## Retention
//!
//! Keys are kept at least [`MIN_KEY_RETENTION`] (24 hours) and by default
//! [`DEFAULT_KEY_RETENTION`] (7 days). Call [`Database::purge_idempotency_keys`]
//! periodically (e.g. daily) with the retention you publish, or start
//! [`Database::spawn_idempotency_reaper`] once per process; after a key is purged, a
//! retry with the same `client_ref` creates a new draft. Keys live in the database, so
//! they survive restarts and are shared by every server process using it.
//!
//! [`DraftTx`]: crate::DraftTx

use std::time::Duration;

use serde_json::Value;
use sqlx::Row;

use crate::db::DocumentRef;
use crate::store::{Database, StoreError};

/// Default retention of idempotency keys: 7 days.
pub const DEFAULT_KEY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// Shortest retention [`Database::purge_idempotency_keys`] accepts: 24 hours.
pub const MIN_KEY_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// Longest `client_ref` accepted, in characters.
pub const MAX_CLIENT_REF_CHARS: usize = 200;

/// The idempotency key of one draft call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// The agent run (from the token or the agent host).
    pub agent_run_id: String,
    /// The model's own id for the write.
    pub client_ref: String,
}

impl std::fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.agent_run_id, self.client_ref)
    }
}

/// What is claimed with the key.
pub(crate) struct Claim<'a> {
    pub key: &'a IdempotencyKey,
    pub request_hash: &'a str,
    pub tool_name: &'a str,
    pub user_id: &'a str,
    pub branch_id: i64,
}

/// A key row as stored.
#[derive(Clone, Debug)]
pub(crate) struct StoredKey {
    pub request_hash: String,
    pub tool_name: String,
    pub user_id: String,
    pub branch_id: i64,
    pub document: Option<DocumentRef>,
    pub response: Option<Value>,
}

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
         document_number, response FROM erp_idempotency_keys \
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
    }))
}

/// Stores the document and the response on the claimed key, inside the transaction.
pub(crate) async fn complete(
    conn: &mut sqlx::AnyConnection,
    key: &IdempotencyKey,
    document: &DocumentRef,
    response: &Value,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE erp_idempotency_keys SET document_type = $1, document_id = $2, \
         document_number = $3, response = $4 WHERE agent_run_id = $5 AND client_ref = $6",
    )
    .bind(document.doc_type.clone())
    .bind(document.id)
    .bind(document.number.clone())
    .bind(response.to_string())
    .bind(key.agent_run_id.clone())
    .bind(key.client_ref.clone())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

impl Database {
    /// Deletes idempotency keys created more than `older_than` ago and returns how many
    /// were deleted. `older_than` must be at least [`MIN_KEY_RETENTION`] (24 hours); the
    /// default policy is [`DEFAULT_KEY_RETENTION`] (7 days). After a key is purged, a
    /// retry with its `client_ref` creates a new draft.
    pub async fn purge_idempotency_keys(&self, older_than: Duration) -> Result<u64, StoreError> {
        if older_than < MIN_KEY_RETENTION {
            return Err(StoreError::RetentionTooShort {
                min_hours: MIN_KEY_RETENTION.as_secs() / 3600,
                asked_secs: older_than.as_secs(),
            });
        }
        let age = chrono::Duration::from_std(older_than).unwrap_or(chrono::Duration::MAX);
        let cutoff = chrono::Utc::now()
            .checked_sub_signed(age)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        let done = sqlx::query("DELETE FROM erp_idempotency_keys WHERE created_at < $1")
            .bind(crate::audit::time_text(cutoff))
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Starts a background task that purges keys older than `retention` every `every`
    /// (first run after one interval). A `retention` below [`MIN_KEY_RETENTION`] is raised
    /// to it. Failures are logged and retried at the next interval; abort the returned
    /// handle to stop. Needs a Tokio runtime.
    pub fn spawn_idempotency_reaper(
        &self,
        retention: Duration,
        every: Duration,
    ) -> tokio::task::JoinHandle<()> {
        let db = self.clone();
        let retention = retention.max(MIN_KEY_RETENTION);
        let every = every.max(Duration::from_secs(1));
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                match db.purge_idempotency_keys(retention).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(purged = n, "purged expired idempotency keys"),
                    Err(e) => tracing::warn!(error = %e, "could not purge idempotency keys"),
                }
            }
        })
    }

    /// How many idempotency keys are stored (for reports and tests).
    pub async fn idempotency_key_count(&self) -> Result<i64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM erp_idempotency_keys")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }
}
