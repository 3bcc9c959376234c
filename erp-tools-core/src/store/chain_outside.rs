//! The rows outside every chain of the audit log, as [`verify`](super::chain_verify::verify)
//! reports them: rows written before the chain existed, calls still open (with their
//! age; each checked against the hash written with it), and finished rows in no chain;
//! and the check that the chain's origin was not moved to hide rows.

use sqlx::Row;

use super::chain::{CHAINED, attempt_hash, fields, read_chained};
use super::chain_report::{ChainProblem, ChainReport, OpenCall};
use crate::audit::{ATTEMPT, AuditId};

/// How long a finished row may wait for its link before it is reported.
const LINK_DELAY: chrono::Duration = chrono::Duration::minutes(2);

/// Most rows of one kind listed ([`ChainProblem::Unchained`], [`OpenCall`]).
const MAX_LISTED: usize = 20;

/// Adds the rows outside every chain to `report`.
pub(crate) async fn check(
    pool: &sqlx::AnyPool,
    report: &mut ChainReport,
) -> Result<(), sqlx::Error> {
    let origin: Option<AuditId> =
        sqlx::query_scalar("SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin")
            .fetch_one(pool)
            .await?;
    let origin = origin.unwrap_or(0);
    let first_chained: Option<AuditId> =
        sqlx::query_scalar("SELECT MIN(id) FROM erp_audit_log WHERE chain_seq IS NOT NULL")
            .fetch_one(pool)
            .await?;
    // Rows before the chain are those below its first link, whatever the origin says.
    let floor = match first_chained {
        Some(first) if first <= origin => {
            report.problems.push(ChainProblem::OriginMoved {
                audit_id: first,
                origin,
            });
            first - 1
        }
        _ => origin,
    };
    report.before_chain =
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM erp_audit_log WHERE id <= $1")
            .bind(floor)
            .fetch_one(pool)
            .await? as u64;
    let now = chrono::Utc::now();
    let cutoff = crate::audit::time_text(now - LINK_DELAY);
    let sql = format!(
        "SELECT id, outcome, finished_at, at, attempt_hash, {} FROM erp_audit_log \
         WHERE chain_seq IS NULL AND id > $1 ORDER BY id",
        *CHAINED
    );
    let outside = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(floor)
        .fetch_all(pool)
        .await?;
    let mut unchained = 0;
    for row in outside {
        let outcome: String = row.try_get(1)?;
        let finished_at: Option<String> = row.try_get(2)?;
        if outcome == ATTEMPT {
            report.open += 1;
            let audit_id: AuditId = row.try_get(0)?;
            let stored: Option<String> = row.try_get(4)?;
            let hashed = hex::encode(attempt_hash(&fields(&read_chained(&row, 5)?)));
            match stored {
                None => report
                    .problems
                    .push(ChainProblem::AttemptUnsealed { audit_id }),
                Some(h) if h != hashed => report
                    .problems
                    .push(ChainProblem::AttemptAltered { audit_id }),
                Some(_) => {}
            }
            if report.open_calls.len() < MAX_LISTED {
                let at: String = row.try_get(3)?;
                let age_secs = chrono::DateTime::parse_from_rfc3339(&at)
                    .map(|t| (now - t.with_timezone(&chrono::Utc)).num_seconds())
                    .unwrap_or(0);
                report.open_calls.push(OpenCall {
                    audit_id: row.try_get(0)?,
                    at,
                    age_secs,
                });
            }
        } else if finished_at.as_deref().is_some_and(|f| f > cutoff.as_str()) {
            report.pending += 1;
        } else if unchained < MAX_LISTED {
            unchained += 1;
            report.problems.push(ChainProblem::Unchained {
                audit_id: row.try_get(0)?,
            });
        }
    }
    Ok(())
}
