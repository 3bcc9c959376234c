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
//!     tx.record_document(DocumentRef { doc_type: "purchase_order".into(), id, number: number.into() });
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
    /// Internal id (kept in structured content and audit, not in model-facing text).
    pub id: i64,
    /// Business number, e.g. `PO-2026-0042`.
    pub number: String,
}

/// Read-only database access for read tools. Cheap to clone.
///
/// On SQLite the pool is opened read-only (`mode=ro`, `PRAGMA query_only = ON`); on
/// PostgreSQL its sessions run with `default_transaction_read_only = on`. A statement
/// that writes fails.
#[derive(Clone)]
pub struct ReadDb {
    pub(crate) pool: sqlx::AnyPool,
    pub(crate) backend: Backend,
}

impl std::fmt::Debug for ReadDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadDb")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
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
///
/// Write only through [`conn`](Self::conn), create documents in status `draft`, call
/// [`record_document`](Self::record_document) with the document created (a draft call
/// that returns `Ok` without recording one is rolled back as an internal error), and fill
/// the provenance columns from [`provenance`](Self::provenance).
pub struct DraftTx {
    pub(crate) tx: sqlx::Transaction<'static, sqlx::Any>,
    pub(crate) backend: Backend,
    pub(crate) document: Option<DocumentRef>,
    pub(crate) agent_run_id: String,
    pub(crate) user_id: String,
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

impl From<sqlx::Error> for crate::ToolError {
    /// A database failure inside a handler: an internal error (detail kept out of the
    /// model-facing text).
    fn from(e: sqlx::Error) -> Self {
        crate::ToolError::internal(e)
    }
}
