//! [`StoreError`]: what can go wrong opening or maintaining the database.

/// Errors from opening or maintaining the database. Not model-facing: the call pipeline
/// turns storage failures into [`ToolError::internal`](crate::ToolError::internal).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no supported database.
    #[error(
        "unsupported database URL `{0}`: use sqlite://<path to file> (created if missing) \
         or postgres://<user>@<host>/<database>"
    )]
    UnsupportedUrl(String),
    /// The URL names a backend this build does not include.
    #[error(
        "this build of erp-tools-core has no {0:?} support: enable the crate feature `{feature}`",
        feature = match .0 { crate::Backend::Sqlite => "sqlite", crate::Backend::Postgres => "postgres" }
    )]
    BackendNotEnabled(crate::Backend),
    /// The database driver failed.
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    /// A migration could not be applied.
    #[error("migration `{version}`: {message}")]
    Migration {
        /// The migration's version.
        version: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// A purge was asked to drop idempotency keys younger than the published minimum.
    #[error(
        "idempotency keys are kept at least {min_hours} hours; refusing to purge keys \
         younger than that (asked for {asked_secs} seconds)"
    )]
    RetentionTooShort {
        /// The minimum retention, in hours.
        min_hours: u64,
        /// The retention asked for, in seconds.
        asked_secs: u64,
    },
    /// The audit writer could not commit a row (the database failed, or it is closed). The
    /// call it belonged to gave no result and changed nothing.
    #[error("the audit writer could not commit the row: {0}")]
    AuditWrite(String),
    /// Archiving the audit log ([`Database::archive_audit_log`](crate::Database::archive_audit_log))
    /// was refused or could not write its files; nothing of the month named was removed.
    #[error("cannot archive the audit log: {0}")]
    Archive(String),
    /// An argument was refused; the message says what to give instead.
    #[error("{0}")]
    BadInput(String),
}
