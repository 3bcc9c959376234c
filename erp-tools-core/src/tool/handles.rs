//! Database handles given to handlers: [`ReadDb`] for read tools, [`DraftTx`] for draft
//! tools. Both speak SQL through `sqlx`'s `Any` driver, so one handler body runs on the
//! embedded SQLite default and on PostgreSQL. Use `$1, $2, ...` placeholders, and store
//! decimals and dates as `TEXT`.
//!
//! ## Provenance
//!
//! Every document a draft tool inserts must carry two provenance columns, so the link to
//! the agent run survives when audit logs are rotated:
//!
//! - `drafted_by_agent_run` ← [`DraftTx::agent_run_id`]
//! - `drafted_on_behalf_of` ← [`DraftTx::user_id`]
//!
//! ```no_run
//! use erp_tools_core::prelude::*;
//!
//! async fn insert_draft(ctx: &ToolContext, tx: &mut DraftTx, number: &str) -> Result<i64, ToolError> {
//!     let p = tx.provenance();
//!     let (run, user) = (p.drafted_by_agent_run.to_string(), p.drafted_on_behalf_of.to_string());
//!     let (id,): (i64,) = sqlx::query_as(
//!         "INSERT INTO purchase_orders (number, branch_id, status, drafted_by_agent_run, \
//!          drafted_on_behalf_of) VALUES ($1, $2, 'draft', $3, $4) RETURNING id",
//!     )
//!     .bind(number.to_string())
//!     .bind(ctx.branch_id())
//!     .bind(run)
//!     .bind(user)
//!     .fetch_one(tx.conn())
//!     .await?;
//!     tx.record_document(DocumentRef::new("purchase_order", id, number));
//!     Ok(id)
//! }
//! ```
//!
//! `?` works on `sqlx` errors inside handlers: they become
//! [`ToolError::internal`](crate::ToolError::internal) (the detail is logged and audited,
//! the model is told only that the call failed and nothing was created).

use serde::{Deserialize, Serialize};

/// The database a handle points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Embedded SQLite (the zero set-up default).
    Sqlite,
    /// PostgreSQL (several server processes sharing one database).
    Postgres,
}

/// A document a draft tool created, recorded with the idempotency key before commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentRef {
    /// Document type, e.g. `purchase_order`.
    pub doc_type: String,
    /// The id the system holding the document gave it: a number (a local table's key,
    /// Tryton's or Odoo's id) or a string (ERPNext's `PUR-ORD-2026-00042`, a GUID); kept
    /// in structured content and audit, not in model-facing text.
    pub id: DocumentId,
    /// Business number, e.g. `PO-2026-0042`.
    pub number: String,
}

impl DocumentRef {
    /// The document `doc_type` with `id` and `number`.
    pub fn new(
        doc_type: impl Into<String>,
        id: impl Into<DocumentId>,
        number: impl Into<String>,
    ) -> DocumentRef {
        DocumentRef {
            doc_type: doc_type.into(),
            id: id.into(),
            number: number.into(),
        }
    }
}

/// A document's id as the system holding it names it: a number or a string, carried
/// unchanged to the audit log, the review console and the cards. It serializes as what it
/// is (a JSON number or a JSON string) and shows as its digits or its text.
///
/// ```
/// use erp_tools_core::DocumentId;
///
/// assert_eq!(DocumentId::from(42), DocumentId::Number(42));
/// assert_eq!(DocumentId::from("PUR-ORD-2026-00042").to_string(), "PUR-ORD-2026-00042");
/// assert_eq!(serde_json::to_value(DocumentId::from(7)).unwrap(), serde_json::json!(7));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DocumentId {
    /// A numeric id (a table's key).
    Number(i64),
    /// A string id (a name, a code, a GUID), exactly as the system gave it.
    Text(String),
}

impl DocumentId {
    /// The numeric id, if it is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            DocumentId::Number(n) => Some(*n),
            DocumentId::Text(_) => None,
        }
    }

    /// The string id, if it is one.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            DocumentId::Number(_) => None,
            DocumentId::Text(t) => Some(t),
        }
    }

    /// As stored: a numeric id in `document_id`, a string id in `document_text_id`.
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub(crate) fn columns(id: Option<&DocumentId>) -> (Option<i64>, Option<String>) {
        match id {
            Some(DocumentId::Number(n)) => (Some(*n), None),
            Some(DocumentId::Text(t)) => (None, Some(t.clone())),
            None => (None, None),
        }
    }

    /// From the stored columns (`document_id`, `document_text_id`).
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub(crate) fn from_columns(number: Option<i64>, text: Option<String>) -> Option<DocumentId> {
        number
            .map(DocumentId::Number)
            .or(text.map(DocumentId::Text))
    }
}

impl std::fmt::Display for DocumentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DocumentId::Number(n) => write!(f, "{n}"),
            DocumentId::Text(t) => f.write_str(t),
        }
    }
}

impl From<i64> for DocumentId {
    fn from(n: i64) -> Self {
        DocumentId::Number(n)
    }
}

impl From<String> for DocumentId {
    fn from(t: String) -> Self {
        DocumentId::Text(t)
    }
}

impl From<&str> for DocumentId {
    fn from(t: &str) -> Self {
        DocumentId::Text(t.to_string())
    }
}

impl PartialEq<i64> for DocumentId {
    fn eq(&self, other: &i64) -> bool {
        self.as_i64() == Some(*other)
    }
}

/// Read-only database access for read tools. Cheap to clone.
///
/// On SQLite the pool is opened read-only (`mode=ro`, `PRAGMA query_only = ON`); on
/// PostgreSQL its sessions run with `default_transaction_read_only = on`. A statement
/// that writes fails.
#[derive(Clone)]
pub struct ReadDb {
    #[cfg(feature = "runtime")]
    pool: sqlx::AnyPool,
    backend: Backend,
}

impl std::fmt::Debug for ReadDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadDb")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl ReadDb {
    #[cfg(feature = "runtime")]
    pub(crate) fn new(pool: sqlx::AnyPool, backend: Backend) -> Self {
        ReadDb { pool, backend }
    }

    /// The read-only pool. Statements that write fail.
    #[cfg(feature = "runtime")]
    pub fn pool(&self) -> &sqlx::AnyPool {
        &self.pool
    }
    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }
}

/// The write transaction of one draft call: the framework has already claimed the
/// idempotency key in it, and commits document, key and audit row together after the
/// handler returns `Ok` (or rolls all of it back on `Err`).
///
/// Write only through [`conn`](Self::conn), create documents in status `draft`, call
/// [`record_document`](Self::record_document) with the document created (a draft call
/// that returns `Ok` without recording one is rolled back as an internal error), and fill
/// the provenance columns from [`provenance`](Self::provenance).
///
/// # Idempotency keys (SPEC R4)
///
/// Every draft call carries a `client_ref` (the model's own id for the write, reused on
/// retry). The key is `agent_run_id:client_ref`: the run id comes from the token or the
/// agent host, so two runs never collide, and a retry inside one run always lands on the
/// same key. The request hash is the sha256 of the canonical JSON of the *validated*
/// arguments ([`canonical_hash`](crate::validate::canonical_hash)): object key order does not matter,
/// absent optional fields equal `null`, and decimals are compared as numbers (`"24"` and
/// `"24.00"` are the same request).
///
/// The call pipeline runs one transaction per draft call:
///
/// 1. `INSERT` the key `ON CONFLICT DO NOTHING`, as the transaction's first statement
///    (SQLite: under `BEGIN IMMEDIATE`, so the write lock is held from the start;
///    PostgreSQL: an in-flight duplicate waits on the primary key until the first
///    transaction ends, then sees its committed row).
/// 2. Inserted: the handler runs on that transaction ([`DraftTx`]); the document it
///    records and the response are stored on the key row; the audit row gets its
///    outcome; all of it commits together. If the handler fails, everything is rolled
///    back: no key, no document.
/// 3. Not inserted: the stored row decides. Same tool, same caller, same hash: the stored
///    response is returned with `replayed: true` (not an error). Anything else: a
///    model-facing error telling the model to use a new `client_ref` or resend the
///    original arguments; nothing is written.
///
/// A key row therefore never exists without its committed document.
///
/// ## Retention
///
/// Keys are kept at least [`Database::MIN_KEY_RETENTION`](crate::Database::MIN_KEY_RETENTION) (24 hours) and by default
/// [`Database::DEFAULT_KEY_RETENTION`](crate::Database::DEFAULT_KEY_RETENTION) (7 days). Call [`Database::purge_idempotency_keys`](crate::Database::purge_idempotency_keys)
/// periodically (e.g. daily) with the retention you publish, or start
/// [`Database::spawn_idempotency_reaper`](crate::Database::spawn_idempotency_reaper) once per process; after a key is purged, a
/// retry with the same `client_ref` creates a new draft. Keys live in the database, so
/// they survive restarts and are shared by every server process using it.
pub struct DraftTx {
    #[cfg(feature = "runtime")]
    tx: sqlx::Transaction<'static, sqlx::Any>,
    backend: Backend,
    document: Option<DocumentRef>,
    agent_run_id: String,
    user_id: String,
}

/// The provenance columns of a drafted document; see [`DraftTx::provenance`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance<'a> {
    /// Value for the document's `drafted_by_agent_run` column.
    pub drafted_by_agent_run: &'a str,
    /// Value for the document's `drafted_on_behalf_of` column.
    pub drafted_on_behalf_of: &'a str,
}

impl std::fmt::Debug for DraftTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DraftTx")
            .field("backend", &self.backend)
            .field("agent_run_id", &self.agent_run_id)
            .field("user_id", &self.user_id)
            .field("document", &self.document)
            .finish_non_exhaustive()
    }
}

impl DraftTx {
    /// A draft transaction in which the key for `agent_run_id` was claimed, on behalf of
    /// `user_id`.
    #[cfg(feature = "runtime")]
    pub(crate) fn new(
        tx: sqlx::Transaction<'static, sqlx::Any>,
        backend: Backend,
        agent_run_id: String,
        user_id: String,
    ) -> Self {
        DraftTx {
            tx,
            backend,
            document: None,
            agent_run_id,
            user_id,
        }
    }

    /// The transaction and the document recorded, once the handler has returned.
    #[cfg(feature = "runtime")]
    pub(crate) fn into_parts(self) -> (sqlx::Transaction<'static, sqlx::Any>, Option<DocumentRef>) {
        (self.tx, self.document)
    }

    /// The connection inside the transaction. Use it for every statement of the write.
    #[cfg(feature = "runtime")]
    pub fn conn(&mut self) -> &mut sqlx::AnyConnection {
        &mut self.tx
    }
    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }
    /// Records the document this call created; stored with the idempotency key and in
    /// the audit row.
    pub fn record_document(&mut self, doc: DocumentRef) {
        self.document = Some(doc);
    }
    /// The document recorded so far.
    pub fn document(&self) -> Option<&DocumentRef> {
        self.document.as_ref()
    }
    /// The agent run drafting the document: write it to `drafted_by_agent_run`.
    pub fn agent_run_id(&self) -> &str {
        &self.agent_run_id
    }
    /// The person on whose behalf it is drafted: write it to `drafted_on_behalf_of`.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }
    /// Both provenance values.
    pub fn provenance(&self) -> Provenance<'_> {
        Provenance {
            drafted_by_agent_run: &self.agent_run_id,
            drafted_on_behalf_of: &self.user_id,
        }
    }
}

#[cfg(feature = "runtime")]
impl From<sqlx::Error> for crate::ToolError {
    /// A database failure inside a handler: an internal error (detail kept out of the
    /// model-facing text).
    fn from(e: sqlx::Error) -> Self {
        crate::ToolError::internal(e)
    }
}
