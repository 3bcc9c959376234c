//! Storage: the database behind tools, idempotency keys and the audit log.
//!
//! [`Database`] is one interface over two backends:
//!
//! - **SQLite** (`sqlite://path/to/file.db`): the zero set-up default. The file is created
//!   if missing and put in WAL mode; every connection gets a busy timeout and foreign keys.
//!   Writes go through a single-connection pool (SQLite has one writer at a time), reads
//!   through a separate read-only pool (`mode=ro` plus `PRAGMA query_only`), so reads
//!   never wait for a write.
//! - **PostgreSQL** (`postgres://user@host/db`): for several server processes sharing one
//!   database. The read pool's sessions have `default_transaction_read_only = on`; for a
//!   hard guarantee give [`DatabaseOptions::read_url`] a role that only has `SELECT`.
//!
//! Opening a database applies the framework's own migrations (shipped in the crate under
//! `migrations/sqlite/` and `migrations/postgres/`), which create:
//!
//! - `erp_idempotency_keys`: one row per claimed `agent_run_id:client_ref` key, with the
//!   request hash, the document created and the response returned (see
//!   [`crate::idempotency`] for the retention policy);
//! - `erp_audit_log`: one row per tool call and per agent-loop event (see [`crate::audit`]).
//!
//! Applications add their own tables with [`Database::apply_migrations`]. All SQL goes
//! through `sqlx`'s `Any` driver with `$1, $2, ...` placeholders (SQLite accepts them too).
//! Store decimals and dates as `TEXT` (`"1234.50"`, `"2026-12-01"`) so one schema and one
//! handler body serve both backends.

use std::sync::Arc;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe, Executor};

use crate::db::{Backend, ReadDb};

/// Framework migrations, applied by [`Database::open`]. Versions are prefixed
/// `erp_tools/`; application versions must not use that prefix.
const SQLITE_MIGRATIONS: &[(&str, &str)] = &[
    (
        "erp_tools/0001_framework",
        include_str!("../migrations/sqlite/0001_framework.sql"),
    ),
    (
        "erp_tools/0002_audit_agent_columns",
        include_str!("../migrations/sqlite/0002_audit_agent_columns.sql"),
    ),
];
const POSTGRES_MIGRATIONS: &[(&str, &str)] = &[
    (
        "erp_tools/0001_framework",
        include_str!("../migrations/postgres/0001_framework.sql"),
    ),
    (
        "erp_tools/0002_audit_agent_columns",
        include_str!("../migrations/postgres/0002_audit_agent_columns.sql"),
    ),
];

/// Prefix reserved for the framework's own migration versions.
pub const FRAMEWORK_MIGRATION_PREFIX: &str = "erp_tools/";

/// Key of the PostgreSQL advisory lock held while migrations run, so that several server
/// processes starting at once apply each migration exactly once.
const PG_MIGRATION_LOCK: i64 = 0x6572_705f_746f_6f6c; // "erp_tool"

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
}

/// How to open a [`Database`]; [`Database::open`] uses the defaults.
#[derive(Clone, Debug)]
pub struct DatabaseOptions {
    url: String,
    read_url: Option<String>,
    max_connections: Option<u32>,
    busy_timeout: Duration,
    acquire_timeout: Duration,
}

impl DatabaseOptions {
    /// Options for `url` (`sqlite://path` or `postgres://...`).
    pub fn new(url: impl Into<String>) -> Self {
        DatabaseOptions {
            url: url.into(),
            read_url: None,
            max_connections: None,
            busy_timeout: Duration::from_secs(10),
            acquire_timeout: Duration::from_secs(30),
        }
    }

    /// PostgreSQL only: a separate URL for the read pool, typically a role granted only
    /// `SELECT`. Without it the read pool uses the main URL with read-only sessions.
    pub fn read_url(mut self, url: impl Into<String>) -> Self {
        self.read_url = Some(url.into());
        self
    }

    /// Size of the write pool. Defaults: 1 for SQLite (one writer at a time), 10 for
    /// PostgreSQL.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = Some(n.max(1));
        self
    }

    /// SQLite only: how long a writer waits for another process's write lock
    /// (default 10 s).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How long a call waits for a pooled connection (default 30 s).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }
}

struct Inner {
    backend: Backend,
    write: AnyPool,
    read: ReadDb,
}

/// A connection to the application database (SQLite or PostgreSQL): the write pool, the
/// read-only pool, the idempotency keys and the audit log. Cheap to clone.
///
/// ```no_run
/// # async fn demo() -> Result<(), erp_tools_core::store::StoreError> {
/// use erp_tools_core::Database;
///
/// let db = Database::open("sqlite://distributor.db").await?;
/// db.apply_migrations(&[(
///     "0001_purchase_orders",
///     "CREATE TABLE IF NOT EXISTS purchase_orders (id INTEGER PRIMARY KEY, number TEXT NOT NULL)",
/// )])
/// .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Database {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("backend", &self.inner.backend)
            .finish_non_exhaustive()
    }
}

fn backend_of(url: &str) -> Option<Backend> {
    if url.starts_with("sqlite:") {
        Some(Backend::Sqlite)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Some(Backend::Postgres)
    } else {
        None
    }
}

/// The file path of a `sqlite://path` / `sqlite:path` URL (no query parameters).
fn sqlite_path(url: &str) -> Result<&str, StoreError> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or("");
    if rest.is_empty() || rest.contains('?') || rest == ":memory:" || rest.starts_with("file:") {
        return Err(StoreError::UnsupportedUrl(format!(
            "{url}` (SQLite needs a plain file path, e.g. sqlite://data/erp.db; in-memory \
             databases and URL parameters are not supported because the read-only pool \
             must open the same file: use a temporary file instead"
        )));
    }
    Ok(rest)
}

impl Database {
    /// Opens (and for SQLite creates) the database at `url` with default
    /// [`DatabaseOptions`], and applies the framework migrations.
    ///
    /// - `sqlite://data/erp.db` (relative path), `sqlite:///var/lib/erp.db` (absolute);
    /// - `postgres://root@127.0.0.1:5432/test`, optionally with
    ///   `?options=-c%20search_path%3Dmy_schema`.
    pub async fn open(url: &str) -> Result<Database, StoreError> {
        Self::connect(DatabaseOptions::new(url)).await
    }

    /// Opens the database described by `options` and applies the framework migrations.
    pub async fn connect(options: DatabaseOptions) -> Result<Database, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = backend_of(&options.url)
            .ok_or_else(|| StoreError::UnsupportedUrl(options.url.clone()))?;
        let (write, read) = match backend {
            Backend::Sqlite => open_sqlite(&options).await?,
            Backend::Postgres => open_postgres(&options).await?,
        };
        let db = Database {
            inner: Arc::new(Inner {
                backend,
                write,
                read: ReadDb {
                    pool: read,
                    backend,
                },
            }),
        };
        let framework = match backend {
            Backend::Sqlite => SQLITE_MIGRATIONS,
            Backend::Postgres => POSTGRES_MIGRATIONS,
        };
        db.run_migrations(framework).await?;
        Ok(db)
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The write pool. Tool handlers never get it (draft handlers get a [`DraftTx`]
    /// instead); use it for set-up, seeding and reports.
    ///
    /// On SQLite it holds a single connection by default: do not keep a transaction of
    /// your own open on it while calling tools, or the calls wait for it.
    ///
    /// [`DraftTx`]: crate::DraftTx
    pub fn pool(&self) -> &AnyPool {
        &self.inner.write
    }

    /// A read-only handle, as given to read tools: any statement that writes fails.
    pub fn read_db(&self) -> ReadDb {
        self.inner.read.clone()
    }

    /// Closes both pools, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.inner.read.pool.close().await;
        self.inner.write.close().await;
    }

    /// Applies the application's own migrations, in slice order, each exactly once.
    ///
    /// Each entry is `(version, sql)`: `version` is any unique text (e.g.
    /// `"0001_purchase_orders"`; the `erp_tools/` prefix is reserved) and `sql` one or more
    /// statements separated by `;`. Applied versions are recorded in
    /// `erp_schema_migrations` with a checksum of their SQL: an applied migration whose
    /// SQL has since changed is an error (add a new migration instead of editing one).
    /// Each migration runs in its own transaction. On PostgreSQL, concurrent starts are
    /// serialised with an advisory lock.
    ///
    /// SQL differs between backends in a few places (`INTEGER PRIMARY KEY` vs `BIGINT
    /// GENERATED BY DEFAULT AS IDENTITY`); branch on [`Database::backend`] to pass the
    /// right set, as the framework does for its own tables.
    pub async fn apply_migrations(&self, migrations: &[(&str, &str)]) -> Result<(), StoreError> {
        for (version, _) in migrations {
            if version.starts_with(FRAMEWORK_MIGRATION_PREFIX) || version.trim().is_empty() {
                return Err(StoreError::Migration {
                    version: (*version).to_string(),
                    message: format!(
                        "application migration versions must be non-empty and must not start \
                         with `{FRAMEWORK_MIGRATION_PREFIX}`"
                    ),
                });
            }
        }
        self.run_migrations(migrations).await
    }

    /// The migration versions applied so far, in the order they were applied.
    pub async fn applied_migrations(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = sqlx::query_as(
            "SELECT version FROM erp_schema_migrations ORDER BY applied_at, version",
        )
        .fetch_all(&self.inner.write)
        .await?;
        Ok(rows.into_iter().map(|(v,)| v).collect())
    }

    async fn run_migrations(&self, migrations: &[(&str, &str)]) -> Result<(), StoreError> {
        let mut seen = std::collections::BTreeSet::new();
        for (version, _) in migrations {
            if !seen.insert(*version) {
                return Err(StoreError::Migration {
                    version: (*version).to_string(),
                    message: "listed twice; give each migration its own version".into(),
                });
            }
        }
        let mut conn = self.inner.write.acquire().await?;
        if self.inner.backend == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(PG_MIGRATION_LOCK)
                .execute(&mut *conn)
                .await?;
        }
        let result = run_migrations_on(&mut conn, self.inner.backend, migrations).await;
        if self.inner.backend == Backend::Postgres {
            let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(PG_MIGRATION_LOCK)
                .execute(&mut *conn)
                .await;
            if let Err(e) = unlocked {
                // The lock is session-scoped: closing the connection releases it.
                conn.close_on_drop();
                tracing::warn!(error = %e, "could not release the migration lock; closing the connection");
            }
        }
        result
    }

    /// Begins a write transaction. On SQLite it is `BEGIN IMMEDIATE`, so the write lock
    /// is taken at once (waiting up to the busy timeout) instead of failing later.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.inner.backend {
            Backend::Sqlite => self.inner.write.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.inner.write.begin().await,
        }
    }
}

async fn run_migrations_on(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    migrations: &[(&str, &str)],
) -> Result<(), StoreError> {
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS erp_schema_migrations (\
            version TEXT PRIMARY KEY, \
            checksum TEXT NOT NULL, \
            applied_at TEXT NOT NULL)",
    )
    .execute(&mut *conn)
    .await?;
    for (version, sql) in migrations {
        let checksum = {
            use sha2::{Digest, Sha256};
            hex::encode(Sha256::digest(sql.as_bytes()))
        };
        let mut tx = match backend {
            Backend::Sqlite => sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?,
            Backend::Postgres => sqlx::Connection::begin(&mut *conn).await?,
        };
        // Claim the version first: on SQLite this takes the write lock, on PostgreSQL a
        // concurrent claim of the same version waits for this transaction.
        let claimed = sqlx::query(
            "INSERT INTO erp_schema_migrations (version, checksum, applied_at) VALUES ($1, $2, $3) \
             ON CONFLICT (version) DO NOTHING",
        )
        .bind(*version)
        .bind(checksum.as_str())
        .bind(crate::audit::now_text())
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if claimed {
            if let Err(e) = tx
                .execute(sqlx::raw_sql(AssertSqlSafe(sql.to_string())))
                .await
            {
                let _ = tx.rollback().await;
                return Err(StoreError::Migration {
                    version: (*version).to_string(),
                    message: format!("its SQL failed, nothing of it was applied: {e}"),
                });
            }
            tx.commit().await?;
        } else {
            let (applied,): (String,) =
                sqlx::query_as("SELECT checksum FROM erp_schema_migrations WHERE version = $1")
                    .bind(*version)
                    .fetch_one(&mut *tx)
                    .await?;
            tx.rollback().await?;
            if applied != checksum {
                return Err(StoreError::Migration {
                    version: (*version).to_string(),
                    message: "was already applied with different SQL; migrations must not be \
                              edited once applied: add a new migration with the change"
                        .into(),
                });
            }
        }
    }
    Ok(())
}

async fn open_sqlite(options: &DatabaseOptions) -> Result<(AnyPool, AnyPool), StoreError> {
    let path = sqlite_path(&options.url)?;
    let busy_ms = options.busy_timeout.as_millis().min(u128::from(u32::MAX)) as u64;
    let write_pragmas = format!(
        "PRAGMA busy_timeout = {busy_ms}; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;"
    );
    let write = AnyPoolOptions::new()
        .max_connections(options.max_connections.unwrap_or(1))
        .acquire_timeout(options.acquire_timeout)
        .after_connect(move |conn, _meta| {
            let pragmas = write_pragmas.clone();
            Box::pin(async move {
                conn.execute(sqlx::raw_sql(AssertSqlSafe(pragmas))).await?;
                Ok(())
            })
        })
        .connect(&format!("sqlite://{path}?mode=rwc"))
        .await?;
    // WAL is a property of the file: set it once, before any reader opens it.
    sqlx::raw_sql("PRAGMA journal_mode = WAL")
        .execute(&write)
        .await?;

    let read_pragmas = format!(
        "PRAGMA busy_timeout = {busy_ms}; PRAGMA foreign_keys = ON; PRAGMA query_only = ON;"
    );
    let read = AnyPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(options.acquire_timeout)
        .after_connect(move |conn, _meta| {
            let pragmas = read_pragmas.clone();
            Box::pin(async move {
                conn.execute(sqlx::raw_sql(AssertSqlSafe(pragmas))).await?;
                Ok(())
            })
        })
        .connect(&format!("sqlite://{path}?mode=ro"))
        .await?;
    Ok((write, read))
}

async fn open_postgres(options: &DatabaseOptions) -> Result<(AnyPool, AnyPool), StoreError> {
    let write = AnyPoolOptions::new()
        .max_connections(options.max_connections.unwrap_or(10))
        .acquire_timeout(options.acquire_timeout)
        .connect(&options.url)
        .await?;
    let read_url = options.read_url.as_deref().unwrap_or(&options.url);
    let read = AnyPoolOptions::new()
        .max_connections(options.max_connections.unwrap_or(10))
        .acquire_timeout(options.acquire_timeout)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute("SET default_transaction_read_only = on")
                    .await?;
                Ok(())
            })
        })
        .connect(read_url)
        .await?;
    Ok((write, read))
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

    #[test]
    fn sqlite_urls_need_a_file() {
        assert_eq!(sqlite_path("sqlite://data/erp.db").unwrap(), "data/erp.db");
        assert_eq!(sqlite_path("sqlite:///tmp/erp.db").unwrap(), "/tmp/erp.db");
        assert_eq!(sqlite_path("sqlite:erp.db").unwrap(), "erp.db");
        for bad in [
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite://x.db?mode=ro",
            "sqlite://",
        ] {
            let e = sqlite_path(bad).unwrap_err().to_string();
            assert!(e.contains("temporary file"), "{bad}: {e}");
        }
    }
}
