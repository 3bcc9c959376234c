//! The connection pools a backend opens for a [`Database`](super::Database).

use std::path::PathBuf;

use sqlx::AnyPool;

use crate::tool::handles::Backend;

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

/// The backend a database URL names.
pub(crate) fn backend_of(url: &str) -> Option<Backend> {
    if url.starts_with("sqlite:") {
        Some(Backend::Sqlite)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Some(Backend::Postgres)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_backends() {
        assert_eq!(backend_of("sqlite://x.db"), Some(Backend::Sqlite));
        assert_eq!(
            backend_of("postgres://root@localhost/test"),
            Some(Backend::Postgres)
        );
        assert_eq!(
            backend_of("postgresql://root@localhost/test"),
            Some(Backend::Postgres)
        );
        assert_eq!(backend_of("mysql://root@localhost/test"), None);
    }
}
