//! The audit log's pool that writes, for the one column set the audit writer does not own:
//! a remote draft's `erp_outcome` and `erp_error` (see `remote/`).

use sqlx::AnyPool;

use super::Database;

impl Database {
    /// The pool that writes the audit log (the writer's; SQLite: the audit file).
    pub(crate) fn audit_writer_pool(&self) -> &AnyPool {
        &self.inner.audit_writer_pool
    }
}
