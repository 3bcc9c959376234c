//! What a digest reads from the audit log beyond the chain heads, and what checking one
//! reads again: the rows in no chain, and the archive claims.

use sqlx::Row;

use super::archive_record::AuditArchive;
use super::chain::{CHAINED, attempt_hash, fields, read_chained};
use super::digest::UnlinkedRow;
use crate::audit::AuditId;

/// The rows in no chain with ids in `(origin, max]`, each with the hash of its columns.
pub(crate) async fn unlinked(
    pool: &sqlx::AnyPool,
    origin: AuditId,
    max: AuditId,
) -> Result<Vec<UnlinkedRow>, sqlx::Error> {
    let sql = format!(
        "SELECT id, outcome, {} FROM erp_audit_log WHERE chain_seq IS NULL AND id > $1 \
         AND id <= $2 ORDER BY id",
        *CHAINED
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(origin)
        .bind(max)
        .fetch_all(pool)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(UnlinkedRow {
                audit_id: row.try_get(0)?,
                outcome: row.try_get(1)?,
                hash: hex::encode(attempt_hash(&fields(&read_chained(row, 2)?))),
            })
        })
        .collect()
}

/// The archive claims of `erp_audit_archives`.
pub(crate) async fn archives(pool: &sqlx::AnyPool) -> Result<Vec<AuditArchive>, sqlx::Error> {
    let records: Vec<String> =
        sqlx::query_scalar("SELECT heads FROM erp_audit_archives ORDER BY month")
            .fetch_all(pool)
            .await?;
    records
        .iter()
        .map(|r| {
            serde_json::from_str(r)
                .map_err(|e| sqlx::Error::Protocol(format!("an archive record is not valid: {e}")))
        })
        .collect()
}
