//! Replica leases: one row per serving [`Database`](super::Database) in `erp_replicas`,
//! written when it opens, renewed in the background, deleted when it closes.
//!
//! A replica whose heartbeat is older than its lease is dead (its process was killed, its
//! machine lost): any live replica closes its `attempt` audit rows as `interrupted`
//! (`store/recover.rs`). A live replica's rows are never touched. Times are each
//! replica's own clock, so the replicas' clocks must agree to well within a lease.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::{AnyPool, Row};

use crate::audit::now_text;

/// The default lease: a replica that has not renewed its row for this long is dead.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// A new replica id: host name (when the environment names it), process id, start time
/// and a counter, unique per `Database` opened.
pub(crate) fn new_id() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let host = std::env::var("HOSTNAME").unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = N.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    if host.is_empty() {
        format!("{pid}-{nanos:x}-{n}")
    } else {
        format!("{host}-{pid}-{nanos:x}-{n}")
    }
}

/// Writes the lease row of `id`.
pub(crate) async fn register(pool: &AnyPool, id: &str, lease: Duration) -> Result<(), sqlx::Error> {
    let now = now_text();
    sqlx::query(
        "INSERT INTO erp_replicas (id, started_at, heartbeat_at, lease_ms) VALUES ($1, $2, $3, $4)",
    )
    .bind(id.to_string())
    .bind(now.clone())
    .bind(now)
    .bind(lease.as_millis().min(i64::MAX as u128) as i64)
    .execute(pool)
    .await?;
    Ok(())
}

/// Renews the lease row of `id`; writes it again if another replica removed it (this one
/// stalled for longer than its lease).
pub(crate) async fn renew(pool: &AnyPool, id: &str, lease: Duration) -> Result<(), sqlx::Error> {
    let done = sqlx::query("UPDATE erp_replicas SET heartbeat_at = $1 WHERE id = $2")
        .bind(now_text())
        .bind(id.to_string())
        .execute(pool)
        .await?;
    if done.rows_affected() == 0 {
        tracing::warn!(
            replica = id,
            "this replica's lease row was gone (it stalled for longer than its lease); \
             writing it again"
        );
        register(pool, id, lease).await?;
    }
    Ok(())
}

/// Deletes the lease row of `id` (the replica stops).
pub(crate) async fn release(pool: &AnyPool, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM erp_replicas WHERE id = $1")
        .bind(id.to_string())
        .execute(pool)
        .await?;
    Ok(())
}

/// The replicas whose lease has not expired at `now` (`me` always counts as live).
pub(crate) async fn live(
    pool: &AnyPool,
    me: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<String>, sqlx::Error> {
    let (live, _) = split(pool, me, now).await?;
    Ok(live)
}

/// The lease rows, split at `now` into live ids and expired (id, heartbeat) pairs (`me`
/// always live).
async fn split(
    pool: &AnyPool,
    me: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(Vec<String>, Vec<(String, String)>), sqlx::Error> {
    let rows = sqlx::query("SELECT id, heartbeat_at, lease_ms FROM erp_replicas")
        .fetch_all(pool)
        .await?;
    let (mut live, mut expired) = (Vec::new(), Vec::new());
    for row in rows {
        let id: String = row.try_get("id")?;
        let heartbeat: String = row.try_get("heartbeat_at")?;
        let lease_ms: i64 = row.try_get("lease_ms")?;
        let renewed = chrono::DateTime::parse_from_rfc3339(&heartbeat)
            .map(|t| t.with_timezone(&chrono::Utc))
            .ok();
        let alive = id == me
            || renewed.is_some_and(|t| t + chrono::Duration::milliseconds(lease_ms) >= now);
        if alive {
            live.push(id);
        } else {
            expired.push((id, heartbeat));
        }
    }
    Ok((live, expired))
}

/// Deletes the lease rows that had expired at `now` and are still expired (their rows
/// were closed by the caller first).
pub(crate) async fn forget_expired(
    pool: &AnyPool,
    me: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<u64, sqlx::Error> {
    let (_, expired) = split(pool, me, now).await?;
    let mut n = 0;
    for (id, heartbeat) in expired {
        // Only if not renewed since (a stalled replica that came back keeps its row).
        n += sqlx::query("DELETE FROM erp_replicas WHERE id = $1 AND heartbeat_at = $2")
            .bind(id)
            .bind(heartbeat)
            .execute(pool)
            .await?
            .rows_affected();
    }
    Ok(n)
}
