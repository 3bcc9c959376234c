//! The review console's Runs page: one line per agent run, read from `erp_audit_runs`
//! (kept by triggers with the audit rows it counts, see the migration
//! `run_summaries`), so a page costs the same at any size of the log: those needing a
//! person first (denials, failures, waiting approvals), then the latest activity, each
//! part read in the order of an index.

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
    /// The run's last audit row (the order of the page).
    #[serde(skip)]
    pub last_id: i64,
    pub last_event: String,
    pub calls: i64,
    pub denials: i64,
    pub failures: i64,
    pub replays: i64,
    pub drafts: i64,
    pub pending: i64,
    /// The run's first tool, to name it by.
    pub first_tool: Option<String>,
    /// The tool surface (fingerprint) of the run's last row, and how many different ones
    /// its rows were written under (more than one: the surface changed during the run).
    pub surface: Option<String>,
    pub surfaces: i64,
    /// The surface of the last row of the branch's run that ended last before this one
    /// began: when it differs from the run's first, the surface changed between the two
    /// runs.
    pub previous_surface: Option<String>,
    /// The surface of the run's first row.
    pub first_surface: Option<String>,
}

/// What the Runs page searches for: a run id, person id, tool name (or a part of one) or
/// document number, a date (`2026-12-02`), the ids of people whose name matched and the
/// tools whose title matched.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunSearch {
    pub text: String,
    pub users: Vec<String>,
    /// The tools whose title matched.
    pub tools: Vec<String>,
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
            RunFilter::AwaitingApproval => PENDING,
        }
    }
}

/// The run `s` has an approval waiting (`$1` the branch, `$2` now).
const PENDING: &str = "EXISTS (SELECT 1 FROM erp_approvals p WHERE p.agent_run_id = s.agent_run_id \
     AND p.branch_id = $1 AND p.status = 'pending' AND p.expires_at > $2)";

/// A run line, the counts from `erp_audit_runs` and the rest read for the line alone
/// (each an indexed lookup); `{WHERE}` is the part's condition on `s`.
const LINES_SQL: &str = "SELECT s.agent_run_id, s.user_id, s.branch_code, s.first_at, \
       s.last_at, s.last_id, s.calls, s.denials, s.failures, s.replays, s.drafts, \
       (SELECT l.outcome FROM erp_audit_log l WHERE l.id = s.last_id) AS last_event, \
       (SELECT l.surface FROM erp_audit_log l WHERE l.id = s.last_id) AS surface, \
       (SELECT l.surface FROM erp_audit_log l WHERE l.id = s.first_id) AS first_surface, \
       (SELECT l.surface FROM erp_audit_log l WHERE l.id = (SELECT p.last_id \
           FROM erp_audit_runs p WHERE p.branch_id = $1 AND p.last_id < s.first_id \
           ORDER BY p.last_id DESC LIMIT 1)) AS previous_surface, \
       (SELECT l.tool_name FROM erp_audit_log l WHERE l.agent_run_id = s.agent_run_id \
           AND l.branch_id = $1 AND l.tool_name IS NOT NULL ORDER BY l.id LIMIT 1) \
           AS first_tool, \
       (SELECT COUNT(DISTINCT l.surface) FROM erp_audit_log l \
           WHERE l.agent_run_id = s.agent_run_id AND l.branch_id = $1) AS surfaces, \
       (SELECT COUNT(*) FROM erp_approvals p WHERE p.agent_run_id = s.agent_run_id \
           AND p.branch_id = $1 AND p.status = 'pending' AND p.expires_at > $2) AS pending \
     FROM erp_audit_runs s WHERE s.branch_id = $1 AND {WHERE} \
     ORDER BY s.last_id DESC LIMIT $3 OFFSET $4";

impl RunSearch {
    pub(crate) fn new(text: &str) -> Self {
        RunSearch {
            text: text.trim().to_string(),
            users: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// The condition on `s` (parameters from `$5`), and its values: the run id, a person
    /// (id, or one whose name matched), a document number (as typed or upper-case), a
    /// tool whose name contains the text, a date (`2026`, `2026-12`, `2026-12-02`) on
    /// which the run wrote a row. Each alternative is read through an index.
    fn condition(&self) -> (String, Vec<String>) {
        if self.text.is_empty() {
            return ("1 = 1".to_string(), Vec::new());
        }
        // `%`, `_` and `\` match themselves (tool names have `_`): escaped for LIKE.
        let mut like = String::new();
        for c in self.text.to_lowercase().chars() {
            if matches!(c, '%' | '_' | '\\') {
                like.push('\\');
            }
            like.push(c);
        }
        let mut values = vec![
            self.text.clone(),
            self.text.to_uppercase(),
            format!("%{like}%"),
        ];
        let mut people = String::from("$5");
        for u in &self.users {
            values.push(u.clone());
            people.push_str(&format!(", ${}", 4 + values.len()));
        }
        // Tools whose title matched, by name.
        let mut titled = Vec::new();
        for t in &self.tools {
            values.push(t.clone());
            titled.push(format!("${}", 4 + values.len()));
        }
        let titled = if titled.is_empty() {
            String::new()
        } else {
            format!(" OR n.tool_name IN ({})", titled.join(", "))
        };
        let mut sql = format!(
            "s.agent_run_id IN (\
             SELECT r.agent_run_id FROM erp_audit_runs r WHERE r.branch_id = $1 \
               AND (r.agent_run_id = $5 OR r.user_id IN ({people})) \
             UNION SELECT x.agent_run_id FROM erp_audit_log x \
               WHERE x.document_number IN ($5, $6) AND x.branch_id = $1 \
             UNION SELECT t.agent_run_id FROM erp_audit_run_tools t \
               WHERE t.tool_name IN (SELECT n.tool_name FROM erp_audit_tools n \
               WHERE LOWER(n.tool_name) LIKE $7 ESCAPE '\\'{titled})"
        );
        if let Some((from, to)) = date_range(&self.text) {
            values.push(from);
            values.push(to);
            sql.push_str(&format!(
                " UNION SELECT x.agent_run_id FROM erp_audit_log x WHERE x.at >= ${} \
                 AND x.at < ${} AND x.branch_id = $1",
                3 + values.len(),
                4 + values.len()
            ));
        }
        sql.push(')');
        (sql, values)
    }
}

/// `2026`, `2026-12` or `2026-12-02` as the range of `at` texts it covers.
fn date_range(text: &str) -> Option<(String, String)> {
    use chrono::{Datelike, NaiveDate};
    let parts: Vec<&str> = text.split('-').collect();
    let number = |s: &str, len: usize| {
        (s.len() == len && s.chars().all(|c| c.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let year = number(parts.first()?, 4)? as i32;
    let (from, to) = match parts[..] {
        [_] => (
            NaiveDate::from_ymd_opt(year, 1, 1)?,
            NaiveDate::from_ymd_opt(year + 1, 1, 1)?,
        ),
        [_, m] => {
            let from = NaiveDate::from_ymd_opt(year, number(m, 2)?, 1)?;
            (from, from.checked_add_months(chrono::Months::new(1))?)
        }
        [_, m, d] => {
            let from = NaiveDate::from_ymd_opt(year, number(m, 2)?, number(d, 2)?)?;
            (from, from.succ_opt()?)
        }
        _ => return None,
    };
    let text = |d: NaiveDate| format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day());
    Some((text(from), text(to)))
}

/// Runs of `branch_id` matching `filter` and `search`, those needing attention first
/// (denials, failures, a waiting approval), then the latest activity: `limit` from
/// `offset`.
pub(crate) async fn runs(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    filter: RunFilter,
    search: &RunSearch,
    now: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<RunLine>, sqlx::Error> {
    let (found, values) = search.condition();
    let matching = format!("{} AND {found}", filter.condition());
    let part = |group: &str, limit: i64, offset: i64| {
        let sql = LINES_SQL.replace("{WHERE}", &format!("{group} AND {matching}"));
        let values = values.clone();
        async move {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(branch_id)
                .bind(now.to_string())
                .bind(limit)
                .bind(offset);
            for v in values {
                q = q.bind(v);
            }
            let rows = q.fetch_all(pool).await?;
            rows.iter().map(line).collect::<Result<Vec<_>, _>>()
        }
    };
    // Those needing a person: denials or failures (an index), or a waiting approval.
    let wanted = offset + limit;
    let mut first = part("s.attention = 1", wanted, 0).await?;
    first.extend(part(&format!("s.attention = 0 AND {PENDING}"), wanted, 0).await?);
    first.sort_by_key(|l| std::cmp::Reverse(l.last_id));
    if first.len() as i64 >= wanted {
        return Ok(first
            .into_iter()
            .skip(offset as usize)
            .take(limit as usize)
            .collect());
    }
    // Both parts were read whole: the rest of the page is the other runs'.
    let taken = first.len() as i64;
    let mut page: Vec<RunLine> = first.into_iter().skip(offset as usize).collect();
    let rest = format!("s.attention = 0 AND NOT {PENDING}");
    let (rest_offset, rest_limit) = ((offset - taken).max(0), limit - page.len() as i64);
    page.extend(part(&rest, rest_limit, rest_offset).await?);
    Ok(page)
}

fn line(row: &sqlx::any::AnyRow) -> Result<RunLine, sqlx::Error> {
    Ok(RunLine {
        run_id: row.try_get("agent_run_id")?,
        user_id: row.try_get("user_id")?,
        branch_code: row.try_get("branch_code")?,
        first_at: row.try_get("first_at")?,
        last_at: row.try_get("last_at")?,
        last_id: row.try_get("last_id")?,
        last_event: row.try_get("last_event")?,
        calls: count(row, "calls")?,
        denials: count(row, "denials")?,
        failures: count(row, "failures")?,
        replays: count(row, "replays")?,
        drafts: count(row, "drafts")?,
        pending: count(row, "pending")?,
        first_tool: row.try_get("first_tool")?,
        surface: row.try_get("surface")?,
        surfaces: count(row, "surfaces")?,
        previous_surface: row.try_get("previous_surface")?,
        first_surface: row.try_get("first_surface")?,
    })
}

/// The people who have runs in `branch_id` (their user ids), for searching by name.
pub(crate) async fn people(
    pool: &sqlx::AnyPool,
    branch_id: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT DISTINCT user_id FROM erp_audit_runs WHERE branch_id = $1 ORDER BY user_id \
         LIMIT 1000",
    )
    .bind(branch_id)
    .fetch_all(pool)
    .await
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
