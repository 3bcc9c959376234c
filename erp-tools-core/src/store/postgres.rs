//! Opening PostgreSQL: a write pool, a pool of read-only sessions, and the audit writer's
//! own connection.

use sqlx::Executor;
use sqlx::any::AnyPoolOptions;

use super::error::StoreError;
use super::options::DatabaseOptions;
use super::pools::Pools;

pub(super) async fn open(options: &DatabaseOptions) -> Result<Pools, StoreError> {
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
    // The audit writer's own connection, named so it can be told apart in
    // `pg_stat_activity` (with the schema it writes to).
    let audit = AnyPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(options.acquire_timeout)
        // Not tested before each batch (a round trip): the writer closes a connection
        // whose batch failed, so the next batch runs on a new one.
        .test_before_acquire(false)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute(
                    "SELECT set_config('application_name', \
                     'erp-tools audit writer (' || current_schema() || ')', false)",
                )
                .await?;
                Ok(())
            })
        })
        .connect(&options.url)
        .await?;
    warn_if_not_durable(&write).await;
    Ok(Pools {
        audit_read: write.clone(),
        write,
        read,
        audit,
        audit_file: None,
    })
}

/// The server settings a commit's durability rests on: `fsync` and `synchronous_commit`
/// must be `on` (the PostgreSQL defaults), or a committed draft and its answer can vanish
/// in an operating-system crash or a power loss. Warns at start-up when the server
/// reports either off; a setting that cannot be read is not reported.
async fn warn_if_not_durable(pool: &sqlx::AnyPool) {
    for setting in ["fsync", "synchronous_commit"] {
        let value: Result<String, _> =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SHOW {setting}")))
                .fetch_one(pool)
                .await;
        if let Ok(value) = value
            && value != "on"
            && !(setting == "synchronous_commit" && value == "remote_apply")
            && !(setting == "synchronous_commit" && value == "remote_write")
        {
            tracing::warn!(
                setting,
                value,
                "PostgreSQL reports {setting} = {value}: commits erp-tools answered for can \
                 be lost in an operating-system crash or a power loss; set it to on"
            );
        }
    }
}
