//! Opening PostgreSQL: a write pool and a pool of read-only sessions.

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Executor};

use super::{DatabaseOptions, StoreError};

pub(super) async fn open(options: &DatabaseOptions) -> Result<(AnyPool, AnyPool), StoreError> {
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
