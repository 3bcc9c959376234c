//! The SQL of the review console's sessions (`erp_review_sessions`), shared by every
//! replica of one database. Rows are keyed by the SHA-256 of the cookie's value; the
//! value itself is never stored.

use sqlx::{AnyPool, Row};

/// A session as stored: the principal as JSON.
pub(crate) struct SessionRow {
    pub principal: String,
    pub csrf: String,
    pub expires_at: i64,
    pub notice: Option<String>,
}

/// Stores a new session and deletes the expired ones.
pub(crate) async fn insert(
    pool: &AnyPool,
    id_hash: &str,
    row: &SessionRow,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM erp_review_sessions WHERE expires_at <= $1")
        .bind(now)
        .execute(pool)
        .await?;
    sqlx::query(
        "INSERT INTO erp_review_sessions (id_hash, principal, csrf, expires_at, notice) \
         VALUES ($1, $2, $3, $4, NULL)",
    )
    .bind(id_hash.to_string())
    .bind(row.principal.clone())
    .bind(row.csrf.clone())
    .bind(row.expires_at)
    .execute(pool)
    .await?;
    Ok(())
}

/// The live session of `id_hash` (expiring after `now`), if any.
pub(crate) async fn load(
    pool: &AnyPool,
    id_hash: &str,
    now: i64,
) -> Result<Option<SessionRow>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT principal, csrf, expires_at, notice FROM erp_review_sessions \
         WHERE id_hash = $1 AND expires_at > $2",
    )
    .bind(id_hash.to_string())
    .bind(now)
    .fetch_optional(pool)
    .await?;
    row.map(|r| {
        Ok(SessionRow {
            principal: r.try_get(0)?,
            csrf: r.try_get(1)?,
            expires_at: r.try_get(2)?,
            notice: r.try_get(3)?,
        })
    })
    .transpose()
}

/// Clears the session's one-time notice if it is still `notice`: true for exactly one of
/// concurrent takers, which shows it.
pub(crate) async fn take_notice(
    pool: &AnyPool,
    id_hash: &str,
    notice: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE erp_review_sessions SET notice = NULL WHERE id_hash = $1 AND notice = $2",
    )
    .bind(id_hash.to_string())
    .bind(notice.to_string())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Leaves `notice` for the session's next page.
pub(crate) async fn set_notice(
    pool: &AnyPool,
    id_hash: &str,
    notice: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE erp_review_sessions SET notice = $2 WHERE id_hash = $1")
        .bind(id_hash.to_string())
        .bind(notice.to_string())
        .execute(pool)
        .await?;
    Ok(())
}

/// Ends the session of `id_hash` (on every replica).
pub(crate) async fn delete(pool: &AnyPool, id_hash: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM erp_review_sessions WHERE id_hash = $1")
        .bind(id_hash.to_string())
        .execute(pool)
        .await?;
    Ok(())
}
