//! [`AuditReader`]: the audit log opened for checking only. Unlike
//! [`Database::open`](super::Database::open) it runs nothing that writes: no migration, no
//! recovery pass, no lease, no sweep that links unlinked rows. So what it reports is the
//! log as it is on disk, not as the checking process made it.

use sqlx::AnyPool;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use sqlx::{Executor, any::AnyPoolOptions};

use super::chain_head::ChainHead;
use super::chain_report::ChainReport;
use super::chain_verify;
use super::error::StoreError;
use crate::tool::handles::Backend;

/// The audit log of a database, opened read-only: for `verify`, `chain-heads` and a
/// digest check, run by an auditor or a cron job next to a live server.
///
/// - **SQLite**: the audit file (`<database file>-audit`) is opened with `mode=ro` and
///   `PRAGMA query_only = ON`; the main file is not opened.
/// - **PostgreSQL**: sessions with `default_transaction_read_only = on` (give a role that
///   only has `SELECT` for a hard guarantee).
///
/// ```no_run
/// # async fn demo() -> Result<(), erp_tools_core::StoreError> {
/// let reader = erp_tools_core::AuditReader::open("sqlite://distributor.db").await?;
/// let report = reader.verify(&[]).await?;
/// assert!(report.is_intact(), "{:?}", report.problems);
/// reader.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct AuditReader {
    pool: AnyPool,
    backend: Backend,
}

impl AuditReader {
    /// Opens the audit log of the database at `url` (as [`Database::open`](super::Database::open)
    /// takes it) read-only. Fails, saying so, when the database or its audit log does not
    /// exist (nothing is created).
    pub async fn open(url: &str) -> Result<AuditReader, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = super::pools::backend_of(url)
            .ok_or_else(|| StoreError::UnsupportedUrl(url.to_string()))?;
        let pool = match backend {
            Backend::Sqlite => open_sqlite(url).await?,
            Backend::Postgres => open_postgres(url).await?,
        };
        let origin: Result<Option<i64>, _> =
            sqlx::query_scalar("SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin")
                .fetch_one(&pool)
                .await;
        if let Err(e) = origin {
            pool.close().await;
            return Err(StoreError::BadInput(format!(
                "{url} has no audit log with a hash chain ({e}): open it once with the \
                 framework (a server start) to create its tables; a reader never creates them"
            )));
        }
        Ok(AuditReader { pool, backend })
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A read-only pool on the audit log (`erp_audit_log`, `erp_audit_archives`,
    /// `erp_audit_chain_origin`).
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Walks every hash chain and reports what it cannot vouch for: as
    /// [`Database::verify_audit_chain`](super::Database::verify_audit_chain), but on the
    /// log as found, so a finished row nobody linked is reported, not linked first.
    pub async fn verify(&self, known: &[ChainHead]) -> Result<ChainReport, StoreError> {
        Ok(chain_verify::verify(&self.pool, known).await?)
    }

    /// The last link of every chain, as
    /// [`Database::audit_chain_heads`](super::Database::audit_chain_heads) gives them.
    pub async fn chain_heads(&self) -> Result<Vec<ChainHead>, StoreError> {
        Ok(chain_verify::heads(&self.pool, None).await?)
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// The audit file of the SQLite database at `url`, opened read-only.
#[cfg(feature = "sqlite")]
async fn open_sqlite(url: &str) -> Result<AnyPool, StoreError> {
    let path = super::sqlite::sqlite_path(url)?;
    let file = super::sqlite::audit_file_of(path);
    if !std::path::Path::new(&file).is_file() {
        return Err(StoreError::BadInput(format!(
            "{file} does not exist: {url} has no audit log (check the path; a reader never \
             creates one)"
        )));
    }
    Ok(AnyPoolOptions::new()
        .max_connections(2)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute("PRAGMA query_only = ON").await?;
                Ok(())
            })
        })
        .connect(&format!("sqlite://{file}?mode=ro"))
        .await?)
}

/// Sessions on the PostgreSQL database at `url` that cannot write.
#[cfg(feature = "postgres")]
async fn open_postgres(url: &str) -> Result<AnyPool, StoreError> {
    Ok(AnyPoolOptions::new()
        .max_connections(2)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute("SET default_transaction_read_only = on")
                    .await?;
                Ok(())
            })
        })
        .connect(url)
        .await?)
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_url: &str) -> Result<AnyPool, StoreError> {
    Err(StoreError::BackendNotEnabled(Backend::Postgres))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_url: &str) -> Result<AnyPool, StoreError> {
    Err(StoreError::BackendNotEnabled(Backend::Sqlite))
}
