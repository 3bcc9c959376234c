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
    let common = format!("PRAGMA busy_timeout = {busy_ms}; PRAGMA foreign_keys = ON;");
    let write = pool(
        options,
        options.max_connections.unwrap_or(1),
        format!("{common} PRAGMA synchronous = NORMAL;"),
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
        format!("{common} PRAGMA query_only = ON;"),
        &format!("sqlite://{path}?mode=ro"),
    )
    .await?;
    Ok((write, read))
}

/// A pool of `max` connections to `url`, each running `pragmas` when it opens.
async fn pool(
    options: &DatabaseOptions,
    max: u32,
    pragmas: String,
    url: &str,
) -> Result<AnyPool, StoreError> {
    Ok(AnyPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(options.acquire_timeout)
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
}
