//! Opening SQLite: one write connection, a read-only pool on the same file, WAL with
//! `synchronous = FULL` unless relaxed; the
//! audit log in a file of its own (`<file>-audit`) with its own writer connection, attached
//! read-only to the other pools.

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe, Executor};

use std::path::PathBuf;

use super::error::StoreError;
use super::migrate;
use super::options::DatabaseOptions;
use super::pools::Pools;
use crate::tool::handles::Backend;

/// The file path of a `sqlite://path` / `sqlite:path` URL (no query parameters).
pub(super) fn sqlite_path(url: &str) -> Result<&str, StoreError> {
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

/// Where the audit log of the database file `path` lives: `<path>-audit`.
pub(super) fn audit_file_of(path: &str) -> String {
    format!("{path}-audit")
}

/// `path` as a read-only SQLite URI (`file:...?mode=ro`), quoted for an SQL literal.
fn read_only_uri_literal(path: &str) -> String {
    let mut uri = String::from("file:");
    for c in path.chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            '\'' => uri.push_str("''"),
            c => uri.push(c),
        }
    }
    format!("'{uri}?mode=ro'")
}

/// Name under which every connection of the write and read pools attaches the audit file
/// (read-only), so `SELECT ... FROM erp_audit_log` works on them as before.
const AUDIT_SCHEMA: &str = "erp_audit";

/// Page cache of each writer connection (the audit file's and the database's), in KiB
/// (SQLite's negative `cache_size`): 32 MiB, so that the interior pages of the indexes a
/// write touches stay cached at a year's size (SQLite's default is 2 MiB).
const WRITER_CACHE: i32 = -32 * 1024;
/// Page cache of each read connection, per file (database and attached audit log): 16 MiB.
const READER_CACHE: i32 = -16 * 1024;

pub(super) async fn open(options: &DatabaseOptions) -> Result<Pools, StoreError> {
    let path = sqlite_path(&options.url)?;
    let busy_ms = options.busy_timeout.as_millis().min(u128::from(u32::MAX)) as u64;
    // FULL unless relaxed: see `DatabaseOptions::sqlite_synchronous_normal_risks_last_commits`.
    let sync = options.sqlite_synchronous();
    let common = format!("PRAGMA busy_timeout = {busy_ms}; PRAGMA foreign_keys = ON;");
    // The audit file first, with its own single writer connection: the pools below
    // attach it.
    let audit_file = audit_file_of(path);
    let audit = pool(
        options,
        1,
        format!(
            "PRAGMA busy_timeout = {busy_ms}; PRAGMA synchronous = {sync}; \
             PRAGMA cache_size = {WRITER_CACHE};"
        ),
        &format!("sqlite://{audit_file}?mode=rwc"),
    )
    .await?;
    sqlx::raw_sql("PRAGMA journal_mode = WAL")
        .execute(&audit)
        .await?;
    migrate::run(
        &audit,
        Backend::Sqlite,
        migrate::SQLITE_AUDIT_FILE_MIGRATIONS,
    )
    .await?;
    let attach = format!(
        "ATTACH DATABASE {} AS {AUDIT_SCHEMA};",
        read_only_uri_literal(&audit_file)
    );
    let write = pool(
        options,
        options.max_connections.unwrap_or(1),
        format!(
            "{common} PRAGMA synchronous = {sync}; PRAGMA cache_size = {WRITER_CACHE}; {attach}"
        ),
        &format!("sqlite://{path}?mode=rwc"),
    )
    .await?;
    // WAL is a property of the file: set it once, before any reader opens it.
    sqlx::raw_sql("PRAGMA journal_mode = WAL")
        .execute(&write)
        .await?;
    let read = pool(
        options,
        4,
        format!(
            "{common} PRAGMA cache_size = {READER_CACHE}; {attach} \
             PRAGMA {AUDIT_SCHEMA}.cache_size = {READER_CACHE}; PRAGMA query_only = ON;"
        ),
        &format!("sqlite://{path}?mode=ro"),
    )
    .await?;
    Ok(Pools {
        write,
        audit_read: read.clone(),
        read,
        audit,
        audit_file: Some(PathBuf::from(audit_file)),
    })
}

/// Applies the framework migrations to the main file. Before the one that drops the main
/// file's old `erp_audit_log`, its rows are copied into the audit file (same ids; run again
/// after a crash in between, the copy skips rows already there).
pub(super) async fn migrate_main(pools: &Pools, main_path: &str) -> Result<(), StoreError> {
    let all = migrate::framework(Backend::Sqlite);
    let split = all
        .iter()
        .position(|(v, _)| *v == migrate::SQLITE_AUDIT_MOVE)
        .unwrap_or(all.len());
    migrate::run(&pools.write, Backend::Sqlite, &all[..split]).await?;
    let moved = migrate::applied(&pools.write)
        .await?
        .iter()
        .any(|v| v == migrate::SQLITE_AUDIT_MOVE);
    if !moved {
        copy_old_audit_rows(&pools.audit, main_path).await?;
    }
    migrate::run(&pools.write, Backend::Sqlite, &all[split..]).await
}

/// Copies the main file's `erp_audit_log` rows (if the table is there) into the audit file.
async fn copy_old_audit_rows(audit: &AnyPool, main_path: &str) -> Result<(), StoreError> {
    let mut conn = audit.acquire().await?;
    let attach = format!(
        "ATTACH DATABASE {} AS erp_old_main",
        read_only_uri_literal(main_path)
    );
    conn.execute(sqlx::raw_sql(AssertSqlSafe(attach))).await?;
    let copied = async {
        let old: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM erp_old_main.sqlite_master \
             WHERE type = 'table' AND name = 'erp_audit_log'",
        )
        .fetch_one(&mut *conn)
        .await?;
        if old == 0 {
            return Ok::<u64, sqlx::Error>(0);
        }
        let columns = |schema: &'static str| {
            sqlx::query_scalar::<_, String>(
                "SELECT name FROM pragma_table_info('erp_audit_log', $1) ORDER BY cid",
            )
            .bind(schema)
        };
        let ours = columns("main").fetch_all(&mut *conn).await?;
        let theirs = columns("erp_old_main").fetch_all(&mut *conn).await?;
        let shared: Vec<&str> = ours
            .iter()
            .filter(|c| theirs.contains(c))
            .map(String::as_str)
            .collect();
        let list = shared.join(", ");
        let sql = format!(
            "INSERT OR IGNORE INTO main.erp_audit_log ({list}) \
             SELECT {list} FROM erp_old_main.erp_audit_log"
        );
        Ok(sqlx::query(AssertSqlSafe(sql))
            .execute(&mut *conn)
            .await?
            .rows_affected())
    }
    .await;
    let detached = conn
        .execute(sqlx::raw_sql("DETACH DATABASE erp_old_main"))
        .await;
    let copied = copied?;
    detached?;
    if copied > 0 {
        tracing::info!(rows = copied, "moved the audit log into its own file");
    }
    Ok(())
}

/// A pool of `max` connections to `url`, each running `pragmas` when it opens, none
/// tested before use.
async fn pool(
    options: &DatabaseOptions,
    max: u32,
    pragmas: String,
    url: &str,
) -> Result<AnyPool, StoreError> {
    Ok(AnyPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(options.acquire_timeout)
        // A SQLite connection is a handle on a file in this process, it cannot be lost
        // the way a network connection can; testing it before each use (sqlx's default)
        // is a round trip to its worker thread per query for nothing.
        .test_before_acquire(false)
        .after_connect(move |conn, _meta| {
            let pragmas = pragmas.clone();
            Box::pin(async move {
                conn.execute(sqlx::raw_sql(AssertSqlSafe(pragmas))).await?;
                Ok(())
            })
        })
        .connect(url)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_audit_file_is_attached_by_a_read_only_uri_with_special_characters_escaped() {
        assert_eq!(audit_file_of("data/erp.db"), "data/erp.db-audit");
        assert_eq!(
            read_only_uri_literal("/tmp/a b/it's 100%?#.db-audit"),
            "'file:/tmp/a b/it''s 100%25%3f%23.db-audit?mode=ro'"
        );
    }
}
