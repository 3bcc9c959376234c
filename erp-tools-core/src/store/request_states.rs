//! The SQL of the record of used `requestState`s (`erp_used_request_states`), shared by
//! every replica of one database: only a state's random nonce is stored, until the state
//! would have expired.

use sqlx::AnyPool;

/// Records `nonce` as used until `expires_at` (seconds since the Unix epoch), after
/// deleting the rows expired at `now`. `false` when it was already recorded: the state
/// was used before, on this replica or another.
pub(crate) async fn claim(
    pool: &AnyPool,
    nonce: &str,
    expires_at: i64,
    now: i64,
) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM erp_used_request_states WHERE expires_at <= $1")
        .bind(now)
        .execute(pool)
        .await?;
    let inserted = sqlx::query(
        "INSERT INTO erp_used_request_states (nonce, expires_at) VALUES ($1, $2) \
         ON CONFLICT (nonce) DO NOTHING",
    )
    .bind(nonce.to_string())
    .bind(expires_at)
    .execute(pool)
    .await?;
    Ok(inserted.rows_affected() == 1)
}
