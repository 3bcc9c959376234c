//! Read queries of the review console over the audit log: one line per agent run with its
//! counts, and the documents agents drafted. Always within one branch.

use serde::Serialize;
use sqlx::Row;

/// One agent run as the Runs page lists it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct RunLine {
    pub run_id: String,
    pub user_id: String,
    pub branch_code: Option<String>,
    pub first_at: String,
    pub last_at: String,
    pub last_event: String,
    pub calls: i64,
    pub denials: i64,
    pub failures: i64,
    pub replays: i64,
    pub drafts: i64,
    pub pending: i64,
}

/// Which runs the Runs page shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunFilter {
    All,
    Denied,
    Failed,
    Replayed,
    Drafted,
    AwaitingApproval,
}

impl RunFilter {
    /// Every filter, with its query value and label.
    pub(crate) const ALL: [(RunFilter, &'static str, &'static str); 6] = [
        (RunFilter::All, "", "Every run"),
        (RunFilter::Denied, "denied", "With denials"),
        (RunFilter::Failed, "failed", "With failures"),
        (RunFilter::Replayed, "replayed", "With replays"),
        (RunFilter::Drafted, "drafted", "With drafts"),
        (
            RunFilter::AwaitingApproval,
            "awaiting_approval",
            "Awaiting approval",
        ),
    ];

    /// The filter named `value` (`""` is every run).
    pub(crate) fn parse(value: &str) -> Option<RunFilter> {
        Self::ALL
            .iter()
            .find(|(_, v, _)| *v == value)
            .map(|(f, _, _)| *f)
    }

    fn condition(self) -> &'static str {
        match self {
            RunFilter::All => "1 = 1",
            RunFilter::Denied => "s.denials > 0",
            RunFilter::Failed => "s.failures > 0",
            RunFilter::Replayed => "s.replays > 0",
            RunFilter::Drafted => "s.drafts > 0",
            RunFilter::AwaitingApproval => "s.pending > 0",
        }
    }
}

// A loop call that fails or is refused in the pipeline has a runtime row and a loop event
// with the same call id: it is counted once, by its runtime row.
const RUNS_SQL: &str = "SELECT s.*, \
       (SELECT l.outcome FROM erp_audit_log l WHERE l.id = s.last_id) AS last_event \
     FROM (SELECT a.agent_run_id, MIN(a.user_id) AS user_id, MIN(a.branch_code) AS branch_code, \
       MIN(a.at) AS first_at, MAX(a.at) AS last_at, MAX(a.id) AS last_id, \
       SUM(CASE WHEN a.source = 'runtime' THEN 1 ELSE 0 END) AS calls, \
       SUM(CASE WHEN a.outcome = 'denied' AND (a.source = 'runtime' OR NOT EXISTS ( \
           SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = a.agent_run_id \
           AND r.source = 'runtime' AND r.tool_call_id = a.tool_call_id)) \
           THEN 1 ELSE 0 END) AS denials, \
       SUM(CASE WHEN (a.source = 'runtime' AND a.outcome = 'tool_error') \
           OR (a.source = 'agent' AND a.outcome = 'failed' AND NOT EXISTS ( \
           SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = a.agent_run_id \
           AND r.source = 'runtime' AND r.tool_call_id = a.tool_call_id \
           AND r.outcome = 'tool_error')) THEN 1 ELSE 0 END) AS failures, \
       SUM(CASE WHEN a.outcome = 'replayed' THEN 1 ELSE 0 END) AS replays, \
       SUM(CASE WHEN a.source = 'runtime' AND a.outcome = 'ok' \
           AND a.document_number IS NOT NULL THEN 1 ELSE 0 END) AS drafts, \
       (SELECT COUNT(*) FROM erp_approvals p WHERE p.agent_run_id = a.agent_run_id \
           AND p.branch_id = $1 AND p.status = 'pending' AND p.expires_at > $2) AS pending \
     FROM erp_audit_log a WHERE a.branch_id = $1 GROUP BY a.agent_run_id) s \
     WHERE {FILTER} ORDER BY s.last_id DESC LIMIT $3 OFFSET $4";

/// Runs of `branch_id` matching `filter`, the latest activity first: `limit` from `offset`.
pub(crate) async fn runs(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    filter: RunFilter,
    now: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<RunLine>, sqlx::Error> {
    let sql = RUNS_SQL.replace("{FILTER}", filter.condition());
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(now.to_string())
        .bind(limit)
        .bind(offset)
        .fetch_all(pool)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(RunLine {
                run_id: row.try_get("agent_run_id")?,
                user_id: row.try_get("user_id")?,
                branch_code: row.try_get("branch_code")?,
                first_at: row.try_get("first_at")?,
                last_at: row.try_get("last_at")?,
                last_event: row.try_get("last_event")?,
                calls: count(row, "calls")?,
                denials: count(row, "denials")?,
                failures: count(row, "failures")?,
                replays: count(row, "replays")?,
                drafts: count(row, "drafts")?,
                pending: count(row, "pending")?,
            })
        })
        .collect()
}

/// A sum or count column: `BIGINT` or `NUMERIC` on PostgreSQL, `INTEGER` on SQLite.
fn count(row: &sqlx::any::AnyRow, column: &str) -> Result<i64, sqlx::Error> {
    match row.try_get::<Option<i64>, _>(column) {
        Ok(v) => Ok(v.unwrap_or(0)),
        Err(_) => {
            let text: Option<String> = row.try_get(column)?;
            Ok(text.and_then(|t| t.parse().ok()).unwrap_or(0))
        }
    }
}

/// One document an agent drafted.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct DraftLine {
    pub audit_id: i64,
    pub at: String,
    pub run_id: String,
    pub tool: Option<String>,
    pub user_id: String,
    pub document_type: String,
    pub document_id: i64,
    pub document_number: String,
}

/// Documents drafted in `branch_id` (successful draft calls), the newest first.
pub(crate) async fn drafts(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    limit: i64,
    offset: i64,
) -> Result<Vec<DraftLine>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, at, agent_run_id, tool_name, user_id, document_type, document_id, \
         document_number FROM erp_audit_log WHERE branch_id = $1 AND source = 'runtime' \
         AND outcome = 'ok' AND document_number IS NOT NULL ORDER BY id DESC LIMIT $2 OFFSET $3",
    )
    .bind(branch_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(DraftLine {
                audit_id: row.try_get("id")?,
                at: row.try_get("at")?,
                run_id: row.try_get("agent_run_id")?,
                tool: row.try_get("tool_name")?,
                user_id: row.try_get("user_id")?,
                document_type: row.try_get("document_type")?,
                document_id: row.try_get("document_id")?,
                document_number: row.try_get("document_number")?,
            })
        })
        .collect()
}
