//! PostgreSQL: the per-caller rate limit shared by every replica of one database, a GCRA
//! bucket per principal in `erp_rate_buckets` on the database's clock.
//!
//! A call with emission interval `t` (60 s / calls per minute) and burst `b` is allowed
//! when the bucket's theoretical arrival time, advanced by `t`, is at most `b·t` ahead of
//! now; the check and the advance are one statement, so concurrent calls on any number
//! of replicas never take more than the burst plus the rate between them.

#[cfg(feature = "mcp-http")]
use std::time::Duration;

use sqlx::AnyPool;

/// One statement: advance the bucket of `$1` by `$2` seconds if it stays within `$3`
/// seconds of now (a new bucket starts at now); returns a row when the call is allowed.
#[cfg(feature = "mcp-http")]
const TAKE: &str = "INSERT INTO erp_rate_buckets AS b (key, tat) \
     VALUES ($1, extract(epoch from clock_timestamp())::float8 + $2) \
     ON CONFLICT (key) DO UPDATE \
     SET tat = greatest(b.tat, extract(epoch from clock_timestamp())::float8) + $2 \
     WHERE greatest(b.tat, extract(epoch from clock_timestamp())::float8) + $2 \
         - extract(epoch from clock_timestamp())::float8 <= $3 \
     RETURNING tat";

/// Takes one call from the bucket of `key`: `Ok(Ok(()))` when allowed, `Ok(Err(wait))`
/// when over the limit (how long until a call is allowed again).
#[cfg(feature = "mcp-http")]
pub(crate) async fn take(
    pool: &AnyPool,
    key: &str,
    interval: Duration,
    burst: u32,
) -> Result<Result<(), Duration>, sqlx::Error> {
    let t = interval.as_secs_f64();
    let tolerance = t * f64::from(burst.max(1));
    let allowed = sqlx::query(TAKE)
        .bind(key.to_string())
        .bind(t)
        .bind(tolerance)
        .fetch_optional(pool)
        .await?;
    if allowed.is_some() {
        return Ok(Ok(()));
    }
    // Refused: how far the bucket is ahead of what would allow a call (for Retry-After).
    let ahead: Option<f64> = sqlx::query_scalar(
        "SELECT tat - extract(epoch from clock_timestamp())::float8 FROM erp_rate_buckets \
         WHERE key = $1",
    )
    .bind(key.to_string())
    .fetch_optional(pool)
    .await?;
    let wait = ahead.map_or(t, |a| a + t - tolerance).clamp(0.0, 86_400.0);
    Ok(Err(Duration::from_secs_f64(wait)))
}

/// Deletes the buckets that are full again (their arrival time has passed): a missing
/// bucket and a full one allow the same.
pub(crate) async fn prune(pool: &AnyPool) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "DELETE FROM erp_rate_buckets WHERE tat < extract(epoch from clock_timestamp())::float8",
    )
    .execute(pool)
    .await?
    .rows_affected())
}
