//! The connection pools a backend opens for a [`Database`](super::Database).

use std::path::PathBuf;

use sqlx::AnyPool;

/// The pools a backend opens.
pub(crate) struct Pools {
    /// Documents, keys, runs (SQLite: one connection).
    pub write: AnyPool,
    /// Read-only sessions for read tools.
    pub read: AnyPool,
    /// The audit writer's own connection (SQLite: to the audit file).
    pub audit: AnyPool,
    /// Where `Database::audit_log` reads from.
    pub audit_read: AnyPool,
    /// SQLite: the audit file.
    pub audit_file: Option<PathBuf>,
}
