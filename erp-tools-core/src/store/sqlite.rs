//! Opening SQLite: one write connection, a read-only pool on the same file, WAL.

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe, Executor};

use super::{DatabaseOptions, StoreError};

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

pub(super) async fn open(options: &DatabaseOptions) -> Result<(AnyPool, AnyPool), StoreError> {
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
}
