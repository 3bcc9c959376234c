//! Migrations: the framework's own (shipped in the crate) and the application's, each
//! applied exactly once and checked against its checksum.

use sqlx::{AssertSqlSafe, Executor};

use super::error::StoreError;
use crate::tool::handles::Backend;

/// Framework migrations, applied by [`Database::open`](super::Database::open). Versions are prefixed
/// `erp_tools/`; application versions must not use that prefix.
const SQLITE_MIGRATIONS: &[(&str, &str)] = &[
    (
        "erp_tools/0001_framework",
        include_str!("../../migrations/sqlite/0001_framework.sql"),
    ),
    (
        "erp_tools/0002_audit_agent_columns",
        include_str!("../../migrations/sqlite/0002_audit_agent_columns.sql"),
    ),
    (
        "erp_tools/0003_agent_runs",
        include_str!("../../migrations/sqlite/0003_agent_runs.sql"),
    ),
    (
        "erp_tools/0004_key_response_text",
        include_str!("../../migrations/sqlite/0004_key_response_text.sql"),
    ),
    (
        "erp_tools/0005_approvals",
        include_str!("../../migrations/sqlite/0005_approvals.sql"),
    ),
    (
        SQLITE_AUDIT_MOVE,
        include_str!("../../migrations/sqlite/0007_audit_writer.sql"),
    ),
    (
        "erp_tools/0008_replicas",
        include_str!("../../migrations/sqlite/0008_replicas.sql"),
    ),
    (
        "erp_tools/0009_review_sessions",
        include_str!("../../migrations/sqlite/0009_review_sessions.sql"),
    ),
    (
        "erp_tools/0010_remote_drafts",
        include_str!("../../migrations/sqlite/0010_remote_drafts.sql"),
    ),
    (
        "erp_tools/0011_approval_preview",
        include_str!("../../migrations/sqlite/0011_approval_preview.sql"),
    ),
    (
        "erp_tools/0012_used_request_states",
        include_str!("../../migrations/sqlite/0012_used_request_states.sql"),
    ),
    (
        "erp_tools/0014_audit_chain",
        include_str!("../../migrations/sqlite/0014_audit_chain.sql"),
    ),
    (
        "erp_tools/0015_surface",
        include_str!("../../migrations/sqlite/0015_surface.sql"),
    ),
    (
        "erp_tools/0016_document_text_id",
        include_str!("../../migrations/sqlite/0016_document_text_id.sql"),
    ),
    (
        "erp_tools/0017_run_story",
        include_str!("../../migrations/sqlite/0017_run_story.sql"),
    ),
    (
        "erp_tools/0019_tasks",
        include_str!("../../migrations/sqlite/0019_tasks.sql"),
    ),
    (
        "erp_tools/0020_run_log",
        include_str!("../../migrations/sqlite/0020_run_log.sql"),
    ),
    (
        "erp_tools/0022_task_takeover",
        include_str!("../../migrations/sqlite/0022_task_takeover.sql"),
    ),
    (
        "erp_tools/0027_documents",
        include_str!("../../migrations/sqlite/0027_documents.sql"),
    ),
    (
        "erp_tools/0028_run_checkpoint",
        include_str!("../../migrations/sqlite/0028_run_checkpoint.sql"),
    ),
    (
        "erp_tools/0029_run_answer_ends",
        include_str!("../../migrations/sqlite/0029_run_answer_ends.sql"),
    ),
    (
        "erp_tools/0030_run_turn_appends",
        include_str!("../../migrations/sqlite/0030_run_turn_appends.sql"),
    ),
];
const POSTGRES_MIGRATIONS: &[(&str, &str)] = &[
    (
        "erp_tools/0001_framework",
        include_str!("../../migrations/postgres/0001_framework.sql"),
    ),
    (
        "erp_tools/0002_audit_agent_columns",
        include_str!("../../migrations/postgres/0002_audit_agent_columns.sql"),
    ),
    (
        "erp_tools/0003_agent_runs",
        include_str!("../../migrations/postgres/0003_agent_runs.sql"),
    ),
    (
        "erp_tools/0004_key_response_text",
        include_str!("../../migrations/postgres/0004_key_response_text.sql"),
    ),
    (
        "erp_tools/0005_approvals",
        include_str!("../../migrations/postgres/0005_approvals.sql"),
    ),
    (
        "erp_tools/0007_audit_writer",
        include_str!("../../migrations/postgres/0007_audit_writer.sql"),
    ),
    (
        "erp_tools/0008_replicas",
        include_str!("../../migrations/postgres/0008_replicas.sql"),
    ),
    (
        "erp_tools/0009_review_sessions",
        include_str!("../../migrations/postgres/0009_review_sessions.sql"),
    ),
    (
        "erp_tools/0010_remote_drafts",
        include_str!("../../migrations/postgres/0010_remote_drafts.sql"),
    ),
    (
        "erp_tools/0011_approval_preview",
        include_str!("../../migrations/postgres/0011_approval_preview.sql"),
    ),
    (
        "erp_tools/0012_used_request_states",
        include_str!("../../migrations/postgres/0012_used_request_states.sql"),
    ),
    (
        "erp_tools/0014_audit_chain",
        include_str!("../../migrations/postgres/0014_audit_chain.sql"),
    ),
    (
        "erp_tools/0015_surface",
        include_str!("../../migrations/postgres/0015_surface.sql"),
    ),
    (
        "erp_tools/0016_document_text_id",
        include_str!("../../migrations/postgres/0016_document_text_id.sql"),
    ),
    (
        "erp_tools/0017_run_story",
        include_str!("../../migrations/postgres/0017_run_story.sql"),
    ),
    (
        "erp_tools/0018_result_tokens",
        include_str!("../../migrations/postgres/0018_result_tokens.sql"),
    ),
    (
        "erp_tools/0019_tasks",
        include_str!("../../migrations/postgres/0019_tasks.sql"),
    ),
    (
        "erp_tools/0020_run_log",
        include_str!("../../migrations/postgres/0020_run_log.sql"),
    ),
    (
        "erp_tools/0021_run_summaries",
        include_str!("../../migrations/postgres/0021_run_summaries.sql"),
    ),
    (
        "erp_tools/0022_task_takeover",
        include_str!("../../migrations/postgres/0022_task_takeover.sql"),
    ),
    (
        "erp_tools/0026_run_lines",
        include_str!("../../migrations/postgres/0026_run_lines.sql"),
    ),
    (
        "erp_tools/0027_documents",
        include_str!("../../migrations/postgres/0027_documents.sql"),
    ),
    (
        "erp_tools/0030_run_turn_appends",
        include_str!("../../migrations/postgres/0030_run_turn_appends.sql"),
    ),
    (
        "erp_tools/0031_attempt_hash",
        include_str!("../../migrations/postgres/0031_attempt_hash.sql"),
    ),
];

/// The SQLite migration that drops the main file's audit table after its rows were copied
/// to the audit file (`store/sqlite.rs`).
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) const SQLITE_AUDIT_MOVE: &str = "erp_tools/0007_audit_writer";

/// Migrations of SQLite's audit file (`<database file>-audit`), recorded in that file's
/// own `erp_schema_migrations`. A change to the audit table on SQLite goes here.
#[cfg(feature = "sqlite")]
pub(crate) const SQLITE_AUDIT_FILE_MIGRATIONS: &[(&str, &str)] = &[
    (
        "erp_tools/audit/0001_audit_log",
        include_str!("../../migrations/sqlite/audit/0001_audit_log.sql"),
    ),
    (
        "erp_tools/audit/0002_replica",
        include_str!("../../migrations/sqlite/audit/0002_replica.sql"),
    ),
    (
        "erp_tools/audit/0003_erp_outcome",
        include_str!("../../migrations/sqlite/audit/0003_erp_outcome.sql"),
    ),
    (
        "erp_tools/audit/0005_audit_chain",
        include_str!("../../migrations/sqlite/audit/0005_audit_chain.sql"),
    ),
    (
        "erp_tools/audit/0006_surface",
        include_str!("../../migrations/sqlite/audit/0006_surface.sql"),
    ),
    (
        "erp_tools/audit/0007_document_text_id",
        include_str!("../../migrations/sqlite/audit/0007_document_text_id.sql"),
    ),
    (
        "erp_tools/audit/0008_call_key",
        include_str!("../../migrations/sqlite/audit/0008_call_key.sql"),
    ),
    (
        "erp_tools/audit/0009_result_tokens",
        include_str!("../../migrations/sqlite/audit/0009_result_tokens.sql"),
    ),
    (
        "erp_tools/audit/0012_run_summaries",
        include_str!("../../migrations/sqlite/audit/0012_run_summaries.sql"),
    ),
    (
        "erp_tools/audit/0013_run_lines",
        include_str!("../../migrations/sqlite/audit/0013_run_lines.sql"),
    ),
    (
        "erp_tools/audit/0014_attempt_hash",
        include_str!("../../migrations/sqlite/audit/0014_attempt_hash.sql"),
    ),
];

/// Prefix reserved for the framework's own migration versions.
pub(crate) const FRAMEWORK_MIGRATION_PREFIX: &str = "erp_tools/";

/// Key of the PostgreSQL advisory lock held while migrations run, so that several server
/// processes starting at once apply each migration exactly once.
const PG_MIGRATION_LOCK: i64 = 0x6572_705f_746f_6f6c; // "erp_tool"

/// The framework's migrations for `backend`.
pub(crate) fn framework(backend: Backend) -> &'static [(&'static str, &'static str)] {
    match backend {
        Backend::Sqlite => SQLITE_MIGRATIONS,
        Backend::Postgres => POSTGRES_MIGRATIONS,
    }
}

/// Applies `migrations` in order, each exactly once. On PostgreSQL, concurrent starts are
/// serialised with an advisory lock.
pub(crate) async fn run(
    pool: &sqlx::AnyPool,
    backend: Backend,
    migrations: &[(&str, &str)],
) -> Result<(), StoreError> {
    let mut seen = std::collections::BTreeSet::new();
    for (version, _) in migrations {
        if !seen.insert(*version) {
            return Err(StoreError::Migration {
                version: (*version).to_string(),
                message: "listed twice; give each migration its own version".into(),
            });
        }
    }
    let mut conn = pool.acquire().await?;
    if backend == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(PG_MIGRATION_LOCK)
            .execute(&mut *conn)
            .await?;
    }
    let result = run_migrations_on(&mut conn, backend, migrations).await;
    if backend == Backend::Postgres {
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

/// Refuses application migration versions that are empty or use the framework's prefix.
pub(crate) fn check_application_versions(migrations: &[(&str, &str)]) -> Result<(), StoreError> {
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
    Ok(())
}

/// The migration versions applied so far, in the order they were applied.
pub(crate) async fn applied(pool: &sqlx::AnyPool) -> Result<Vec<String>, StoreError> {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT version FROM erp_schema_migrations ORDER BY applied_at, version")
            .fetch_all(pool)
            .await?;
    Ok(rows.into_iter().map(|(v,)| v).collect())
}

/// The versions applied to the main database, read on any of its pools (on SQLite the
/// audit file, attached to the read pool, has a migrations table of its own).
#[cfg(feature = "mcp-http")]
pub(crate) async fn applied_on_main(
    pool: &sqlx::AnyPool,
    backend: Backend,
) -> Result<Vec<String>, StoreError> {
    let sql = match backend {
        Backend::Sqlite => "SELECT version FROM main.erp_schema_migrations",
        Backend::Postgres => "SELECT version FROM erp_schema_migrations",
    };
    let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(pool).await?;
    Ok(rows.into_iter().map(|(v,)| v).collect())
}

/// How many framework migrations `pool`'s database has not applied.
#[cfg(feature = "mcp-http")]
pub(crate) async fn pending_framework(
    pool: &sqlx::AnyPool,
    backend: Backend,
) -> Result<usize, StoreError> {
    let applied = applied_on_main(pool, backend).await?;
    Ok(framework(backend)
        .iter()
        .filter(|(v, _)| !applied.iter().any(|a| a == v))
        .count())
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
