//! [`Database`]'s audit log: the rows of tool calls and agent-loop events, handed to the
//! audit writer (`store/writer.rs`), read back, and checked against the hash chain.

use sqlx::AnyPool;

use super::audit_row::{Final, NewRow};
use super::chain_head::ChainHead;
use super::chain_report::ChainReport;
use super::chain_verify;
use super::error::StoreError;
use super::writer::PendingRow;
use super::{Database, audit};
use crate::audit::{AuditEntry, AuditId, AuditRecord, SOURCE_AGENT, SOURCE_RUNTIME};

impl Database {
    /// Hands a tool call's `attempt` row to the audit writer; the returned handle says
    /// when it is durable (see `store/writer.rs` for the guarantee).
    pub(crate) async fn queue_attempt(&self, entry: &AuditEntry) -> Result<PendingRow, StoreError> {
        let mut row = NewRow::attempt(entry);
        row.replica_id = Some(self.inner.replica.clone());
        self.inner.audit.insert(row).await
    }

    /// Queues the link of row `id`, finished with `fin` by a draft's own transaction.
    pub(crate) async fn link_finished(&self, id: AuditId, fin: Final) -> Result<(), StoreError> {
        self.inner.audit.link(id, fin).await
    }

    /// Queues how a call whose attempt row is durable ended; committed with a later batch.
    pub(crate) async fn record_outcome(&self, id: AuditId, fin: Final) -> Result<(), StoreError> {
        self.inner.audit.finish(id, fin).await
    }

    /// Records a finished tool call in one row (calls refused before execution) and waits
    /// until it is durable.
    pub(crate) async fn record_call(&self, entry: &AuditEntry) -> Result<AuditId, StoreError> {
        let row = NewRow::finished(entry.clone(), SOURCE_RUNTIME);
        self.inner.audit.insert_finished(row).await
    }

    /// Records a call that ended before any of its rows was written (a read whose handler
    /// answered without waiting) in one row, with `fin` on it, and waits until it is
    /// durable.
    pub(crate) async fn record_ended_call(
        &self,
        entry: &AuditEntry,
        fin: Final,
    ) -> Result<AuditId, StoreError> {
        let mut row = NewRow::attempt(entry);
        row.replica_id = Some(self.inner.replica.clone());
        row.apply(fin);
        self.inner.audit.insert_finished(row).await
    }

    /// Records an agent-loop event (`started`, `denied`, `failed`, `answered`, or a final
    /// status such as `step_limit`) in the shared audit log, with `source = "agent"`.
    ///
    /// ```no_run
    /// # async fn demo(db: erp_tools_core::Database, principal: erp_tools_core::Principal)
    /// #     -> Result<(), erp_tools_core::StoreError> {
    /// use erp_tools_core::AuditEntry;
    ///
    /// db.record_event(
    ///     AuditEntry::new(&principal, "run-42", "denied")
    ///         .tool("finance_create_refund_draft", "call_7")
    ///         .message("amount 5000000 is above the limit of 1000000"),
    /// )
    /// .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// The row goes through the audit writer (committed with whatever else has queued);
    /// this returns once it is durable.
    pub async fn record_event(&self, entry: AuditEntry) -> Result<AuditId, StoreError> {
        let row = NewRow::finished(entry, SOURCE_AGENT);
        self.inner.audit.insert_finished(row).await
    }

    /// The audit log, oldest first: every row, or only those of one agent run. Waits first
    /// until the audit writer has committed everything queued before this call (rows and
    /// the outcomes of calls that have returned), so the log shows every call that
    /// returned with its final outcome.
    ///
    /// On SQLite the log lives in its own file ([`Database::audit_file`]); this, and every
    /// other read of `erp_audit_log`, goes through [`Database::audit_pool`].
    pub async fn audit_log(
        &self,
        agent_run_id: Option<&str>,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.inner.audit.flush().await?;
        Ok(audit::select(self.audit_pool(), agent_run_id).await?)
    }

    /// Waits until the audit writer has committed every row and outcome queued before
    /// this call. [`Database::audit_log`] does this itself; call it before reading
    /// `erp_audit_log` with SQL of your own ([`Database::audit_pool`]).
    pub async fn flush_audit(&self) -> Result<(), StoreError> {
        self.inner.audit.flush().await
    }

    /// A pool to read `erp_audit_log` with (`SELECT` only). On SQLite its connections
    /// read the audit file, attached read-only, so a query naming `erp_audit_log` works
    /// as on PostgreSQL; the pool is read-only there (the audit writer is the only
    /// writer of the audit file). On PostgreSQL it is the write pool.
    ///
    /// The pools of [`Database::pool`] and [`Database::read_db`] attach the audit file
    /// read-only too, so `SELECT`s on them also see the log.
    pub fn audit_pool(&self) -> &AnyPool {
        &self.inner.audit_pool
    }

    /// Walks the audit log's hash chains (see the guide's audit chapter, guide/src/audit.md) and reports
    /// the first row of each chain that was altered, inserted or removed, and finished
    /// rows in no chain. `known` are chain heads exported earlier
    /// ([`Database::audit_chain_heads`]) and kept elsewhere: a chain that now ends before
    /// one of them, or differs at its position, was cut or rewritten. Waits first for the
    /// audit writer to commit what is queued.
    pub async fn verify_audit_chain(&self, known: &[ChainHead]) -> Result<ChainReport, StoreError> {
        self.flush_audit().await?;
        Ok(chain_verify::verify(self.audit_pool(), known).await?)
    }

    /// The last link of every chain of the audit log, to export and keep elsewhere (an
    /// auditor's copy): [`Database::verify_audit_chain`] given them later detects rows
    /// removed from the end of a chain, or a chain rewritten, since.
    pub async fn audit_chain_heads(&self) -> Result<Vec<ChainHead>, StoreError> {
        self.flush_audit().await?;
        Ok(chain_verify::heads(self.audit_pool(), None).await?)
    }
}
