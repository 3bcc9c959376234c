//! The review console's Runs page: one line per agent run, read from `erp_audit_runs`
//! (kept by triggers with the audit rows it counts and the few it shows, see the
//! migrations `run_summaries` and `run_lines`), so a page costs the same at any size of
//! the log: those needing a person first (denials, failures, waiting approvals), then the
//! latest activity, each part read in the order of an index. A search reads each of its
//! alternatives (run id or person, document number, tool, date) on its own, through an
//! index, and merges them.

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
    /// The tool surface (fingerprint) of the run's last row, and whether its rows were
    /// written under more than one (the surface changed during the run).
    pub surface: Option<String>,
    pub surface_changed: bool,
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
            RunFilter::AwaitingApproval => PENDING_RUNS,
        }
    }
}

/// The run `s` has an approval waiting (`$1` the branch, `$2` now), tested line by line
/// (an index probe each), for the lines of a walk in page order.
const PENDING: &str = "EXISTS (SELECT 1 FROM erp_approvals p WHERE p.agent_run_id = s.agent_run_id \
     AND p.branch_id = $1 AND p.status = 'pending' AND p.expires_at > $2)";

/// The same, read from the branch's waiting approvals (index `erp_approvals_branch`): the
/// runs that have one, whatever the number of runs.
const PENDING_RUNS: &str = "s.agent_run_id IN (SELECT p.agent_run_id FROM erp_approvals p \
     WHERE p.branch_id = $1 AND p.status = 'pending' AND p.expires_at > $2)";

/// A run line from `erp_audit_runs`, with the surface of the line before it and its
/// waiting approvals (an index probe each); `{WHERE}` is the part's condition on `s`,
/// `{LIMIT}` the number of lines.
const LINES_SQL: &str = "SELECT s.agent_run_id, s.user_id, s.branch_code, s.first_at, \
       s.last_at, s.last_id, s.calls, s.denials, s.failures, s.replays, s.drafts, \
       s.last_event, s.last_surface AS surface, s.first_surface, s.first_tool, \
       s.surface_changed, \
       (SELECT p.last_surface FROM erp_audit_runs p WHERE p.branch_id = $1 \
           AND p.last_id < s.first_id ORDER BY p.last_id DESC LIMIT 1) AS previous_surface, \
       (SELECT COUNT(*) FROM erp_approvals p WHERE p.agent_run_id = s.agent_run_id \
           AND p.branch_id = $1 AND p.status = 'pending' AND p.expires_at > $2) AS pending \
     FROM erp_audit_runs s WHERE s.branch_id = $1 AND {WHERE} \
     ORDER BY s.last_id DESC LIMIT {LIMIT}";

/// Below this many runs with a matching tool, the search reads them all and sorts them;
/// from it on, it walks the branch's runs latest first and tests each (a common tool
/// fills a page within a few lines).
const FEW_TOOL_RUNS: i64 = 1000;

/// One alternative of a search: a condition on `s` and its values (from `$3`).
#[derive(Clone, Debug)]
pub(crate) struct Alternative {
    sql: String,
    values: Vec<String>,
}

impl Alternative {
    fn new(sql: String, values: Vec<String>) -> Self {
        Alternative { sql, values }
    }
}

/// `$3, $4, ...` for `n` values from `$3` (or from another first number).
fn params(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl RunSearch {
    pub(crate) fn new(text: &str) -> Self {
        RunSearch {
            text: text.trim().to_string(),
            users: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// The alternatives of the search, each a condition on `s` (parameters from `$3`)
    /// read through an index on its own: the run id or a person (id, or one whose name
    /// matched), a document number (as typed or upper-case), a tool whose name contains
    /// the text (or whose title matched), a date (`2026`, `2026-12`, `2026-12-02`) on which
    /// the run wrote a row. No text: every run.
    async fn alternatives(&self, pool: &sqlx::AnyPool) -> Result<Vec<Alternative>, sqlx::Error> {
        if self.text.is_empty() {
            return Ok(vec![Alternative::new("1 = 1".into(), Vec::new())]);
        }
        let mut people = vec![self.text.clone()];
        people.extend(self.users.iter().cloned());
        let mut out = vec![
            // As a set of runs (one index each for the run id and the people), not as a
            // test on every line of the branch's runs in page order.
            Alternative::new(
                format!(
                    "s.agent_run_id IN (SELECT r.agent_run_id FROM erp_audit_runs r \
                     WHERE r.branch_id = $1 AND (r.agent_run_id = $3 OR r.user_id IN ({})))",
                    params(3, people.len())
                ),
                people,
            ),
            Alternative::new(
                "s.agent_run_id IN (SELECT x.agent_run_id FROM erp_audit_log x \
                 WHERE x.document_number IN ($3, $4) AND x.branch_id = $1)"
                    .into(),
                vec![self.text.clone(), self.text.to_uppercase()],
            ),
        ];
        let tools = self.tools(pool).await?;
        if !tools.is_empty() {
            let list = params(3, tools.len());
            let mut count = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT COUNT(*) FROM (SELECT 1 FROM erp_audit_run_tools t \
                 WHERE t.tool_name IN ({}) LIMIT {FEW_TOOL_RUNS}) f",
                params(1, tools.len())
            )));
            for t in &tools {
                count = count.bind(t.clone());
            }
            let few: i64 = count.fetch_one(pool).await?;
            let sql = if few < FEW_TOOL_RUNS {
                format!(
                    "s.agent_run_id IN (SELECT t.agent_run_id FROM erp_audit_run_tools t \
                     WHERE t.tool_name IN ({list}))"
                )
            } else {
                format!(
                    "EXISTS (SELECT 1 FROM erp_audit_run_tools t \
                     WHERE t.agent_run_id = s.agent_run_id AND t.tool_name IN ({list}))"
                )
            };
            out.push(Alternative::new(sql, tools));
        }
        if let Some((from, to)) = date_range(&self.text) {
            out.push(Alternative::new(
                "s.agent_run_id IN (SELECT x.agent_run_id FROM erp_audit_log x \
                 WHERE x.at >= $3 AND x.at < $4 AND x.branch_id = $1)"
                    .into(),
                vec![from, to],
            ));
        }
        Ok(out)
    }

    /// The tools whose name contains the text (from `erp_audit_tools`, one line per
    /// tool), and those whose title matched.
    async fn tools(&self, pool: &sqlx::AnyPool) -> Result<Vec<String>, sqlx::Error> {
        // One line per tool name the log has seen (as many as the registry has tools, in
        // the hundreds at most): read whole and matched here. A `LIKE` with a bound pattern
        // would be prepared again by SQLite at every run (it plans with the pattern).
        let needle = self.text.to_lowercase();
        let mut tools: Vec<String> =
            sqlx::query_scalar("SELECT tool_name FROM erp_audit_tools ORDER BY tool_name")
                .fetch_all(pool)
                .await?
                .into_iter()
                .filter(|t: &String| t.to_lowercase().contains(&needle))
                .take(100)
                .collect();
        for t in &self.tools {
            if !tools.contains(t) {
                tools.push(t.clone());
            }
        }
        Ok(tools)
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
    let alternatives = search.alternatives(pool).await?;
    // The lines of one part of the page: each alternative read on its own (the first
    // `offset + limit` in page order), merged.
    let part = |group: String, limit: i64, offset: i64| {
        let alternatives = alternatives.clone();
        async move {
            let mut lines: Vec<RunLine> = Vec::new();
            for alternative in alternatives {
                let condition =
                    format!("{group} AND {} AND {}", filter.condition(), alternative.sql);
                // The limit is written into the text: a bound `LIMIT` makes SQLite prepare
                // the statement again at every run (it plans with the value).
                let sql = LINES_SQL
                    .replace("{WHERE}", &condition)
                    .replace("{LIMIT}", &(offset + limit).to_string());
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(branch_id)
                    .bind(now.to_string());
                for v in alternative.values {
                    q = q.bind(v);
                }
                for row in q.fetch_all(pool).await? {
                    let line = line(&row)?;
                    if !lines.iter().any(|l| l.run_id == line.run_id) {
                        lines.push(line);
                    }
                }
            }
            lines.sort_by_key(|l| std::cmp::Reverse(l.last_id));
            Ok::<_, sqlx::Error>(
                lines
                    .into_iter()
                    .skip(offset as usize)
                    .take(limit as usize)
                    .collect::<Vec<_>>(),
            )
        }
    };
    // Those needing a person: denials or failures (an index), or a waiting approval.
    let wanted = offset + limit;
    let mut first = part("s.attention = 1".into(), wanted, 0).await?;
    first.extend(part(format!("s.attention = 0 AND {PENDING_RUNS}"), wanted, 0).await?);
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
    page.extend(part(rest, rest_limit, rest_offset).await?);
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
        last_event: row
            .try_get::<Option<String>, _>("last_event")?
            .unwrap_or_default(),
        calls: count(row, "calls")?,
        denials: count(row, "denials")?,
        failures: count(row, "failures")?,
        replays: count(row, "replays")?,
        drafts: count(row, "drafts")?,
        pending: count(row, "pending")?,
        first_tool: row.try_get("first_tool")?,
        surface: row.try_get("surface")?,
        surface_changed: count(row, "surface_changed")? > 0,
        previous_surface: row.try_get("previous_surface")?,
        first_surface: row.try_get("first_surface")?,
    })
}

/// The people who have runs in `branch_id` (their user ids), for searching by name.
pub(crate) async fn people(
    pool: &sqlx::AnyPool,
    branch_id: i64,
) -> Result<Vec<String>, sqlx::Error> {
    // One index probe per person (`erp_audit_runs_user`), however many runs they have.
    sqlx::query_scalar(
        "WITH RECURSIVE u(user_id, n) AS ( \
           SELECT MIN(user_id), 1 FROM erp_audit_runs WHERE branch_id = $1 \
           UNION ALL SELECT (SELECT MIN(r.user_id) FROM erp_audit_runs r \
             WHERE r.branch_id = $1 AND r.user_id > u.user_id), n + 1 \
           FROM u WHERE u.user_id IS NOT NULL AND n < 1000) \
         SELECT user_id FROM u WHERE user_id IS NOT NULL ORDER BY user_id",
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
