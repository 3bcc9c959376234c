//! Database handles given to handlers: [`ReadDb`] for read tools, [`DraftTx`] for draft
//! tools. Both speak SQL through `sqlx`'s `Any` driver, so one handler body runs on the
//! embedded SQLite default and on PostgreSQL. Use `$1, $2, ...` placeholders.

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
    /// Internal id (kept in structured content and audit, not in model-facing text).
    pub id: i64,
    /// Business number, e.g. `PO-2026-0042`.
    pub number: String,
}

/// Read-only database access for read tools.
pub struct ReadDb {
    pub(crate) pool: sqlx::AnyPool,
    pub(crate) backend: Backend,
}

impl ReadDb {
    /// The read-only pool. Statements that write fail.
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
pub struct DraftTx {
    pub(crate) tx: sqlx::Transaction<'static, sqlx::Any>,
    pub(crate) backend: Backend,
    pub(crate) document: Option<DocumentRef>,
}

impl DraftTx {
    /// The connection inside the transaction. Use it for every statement of the write.
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
}
