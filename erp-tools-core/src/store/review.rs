//! Read queries of the review console over the audit log: one line per agent run with its
//! counts, and the documents agents drafted. Always within one branch.

use serde::Serialize;
use sqlx::Row;

use crate::tool::handles::DocumentId;

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
    /// The run's first tool, to name it by.
    pub first_tool: Option<String>,
    /// The tool surface (fingerprint) of the run's last row, and how many different ones
    /// its rows were written under (more than one: the surface changed during the run).
    pub surface: Option<String>,
    pub surfaces: i64,
    /// The surface of the branch's last row before the run began, in another run: when it
    /// differs from the run's first, the surface changed between the two runs.
    pub previous_surface: Option<String>,
    /// The surface of the run's first row.
    pub first_surface: Option<String>,
}

/// What the Runs page searches for: a run id, person id, tool name or document number (or
/// a part of one), a date (`2026-12-02`), the ids of people whose name matched and the
/// tools whose title matched.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunSearch {
    pub text: String,
    pub users: Vec<String>,
    /// The tools whose title matched.
    pub tools: Vec<String>,
}

impl RunSearch {
    pub(crate) fn new(text: &str) -> Self {
        RunSearch {
            text: text.trim().to_string(),
            users: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// The SQL condition on `a` (from `$5`), and its values.
    fn condition(&self) -> (String, Vec<String>) {
        if self.text.is_empty() {
            return (String::new(), Vec::new());
        }
        // `%`, `_` and `\` match themselves (tool names have `_`): escaped for LIKE.
        let mut like = String::new();
        for c in self.text.to_lowercase().chars() {
            if matches!(c, '%' | '_' | '\\') {
                like.push('\\');
            }
            like.push(c);
        }
        let is_date = !self.text.is_empty()
            && self.text.len() <= 10
            && self.text.chars().all(|c| c.is_ascii_digit() || c == '-');
        let mut values = vec![
            self.text.clone(),
            format!("%{like}%"),
            if is_date {
                format!("{}%", self.text)
            } else {
                "\u{1}".to_string()
            },
        ];
        let mut users = String::new();
        for u in &self.users {
            values.push(u.clone());
            users.push_str(&format!(" OR x.user_id = ${}", 4 + values.len()));
        }
        for t in &self.tools {
            values.push(t.clone());
            users.push_str(&format!(" OR x.tool_name = ${}", 4 + values.len()));
        }
        let sql = format!(
            " AND a.agent_run_id IN (SELECT x.agent_run_id FROM erp_audit_log x \
             WHERE x.branch_id = $1 AND (x.agent_run_id = $5 OR x.user_id = $5 \
             OR LOWER(x.tool_name) LIKE $6 ESCAPE '\\' \
             OR LOWER(x.document_number) LIKE $6 ESCAPE '\\' \
             OR x.at LIKE $7{users}))"
        );
        (sql, values)
    }
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
// with the same call id: it is counted once, by its runtime row. Runs that need a person
// (waiting approvals, denials, failures) come first.
const RUNS_SQL: &str = "SELECT s.*, \
       (SELECT l.outcome FROM erp_audit_log l WHERE l.id = s.last_id) AS last_event, \
       (SELECT l.surface FROM erp_audit_log l WHERE l.id = s.last_id) AS surface, \
       (SELECT l.surface FROM erp_audit_log l WHERE l.id = s.first_id) AS first_surface, \
       (SELECT p.surface FROM erp_audit_log p WHERE p.branch_id = $1 AND p.id < s.first_id \
           AND p.agent_run_id <> s.agent_run_id AND p.surface IS NOT NULL \
           ORDER BY p.id DESC LIMIT 1) AS previous_surface, \
       (SELECT l.tool_name FROM erp_audit_log l WHERE l.agent_run_id = s.agent_run_id \
           AND l.branch_id = $1 AND l.tool_name IS NOT NULL ORDER BY l.id LIMIT 1) \
           AS first_tool \
     FROM (SELECT a.agent_run_id, MIN(a.user_id) AS user_id, MIN(a.branch_code) AS branch_code, \
       MIN(a.at) AS first_at, MAX(a.at) AS last_at, MAX(a.id) AS last_id, \
       MIN(a.id) AS first_id, COUNT(DISTINCT a.surface) AS surfaces, \
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
     FROM erp_audit_log a WHERE a.branch_id = $1{SEARCH} GROUP BY a.agent_run_id) s \
     WHERE {FILTER} ORDER BY CASE WHEN s.pending > 0 OR s.denials > 0 OR s.failures > 0 \
     THEN 0 ELSE 1 END, s.last_id DESC LIMIT $3 OFFSET $4";

/// Runs of `branch_id` matching `filter` and `search`, those needing attention first,
/// then the latest activity: `limit` from `offset`.
pub(crate) async fn runs(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    filter: RunFilter,
    search: &RunSearch,
    now: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<RunLine>, sqlx::Error> {
    let (condition, values) = search.condition();
    let sql = RUNS_SQL
        .replace("{FILTER}", filter.condition())
        .replace("{SEARCH}", &condition);
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(now.to_string())
        .bind(limit)
        .bind(offset);
    for v in values {
        q = q.bind(v);
    }
    let rows = q.fetch_all(pool).await?;
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
                first_tool: row.try_get("first_tool")?,
                surface: row.try_get("surface")?,
                surfaces: count(row, "surfaces")?,
                previous_surface: row.try_get("previous_surface")?,
                first_surface: row.try_get("first_surface")?,
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
    pub document_id: DocumentId,
    pub document_number: String,
}

/// Documents drafted in `branch_id` (successful draft calls), the newest first: each once,
/// from the call that first answered with it (a remote draft whose answer was lost is
/// first answered by the resend that found it by its marker, a `replayed` row).
pub(crate) async fn drafts(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    limit: i64,
    offset: i64,
) -> Result<Vec<DraftLine>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, at, agent_run_id, tool_name, user_id, document_type, document_id, \
         document_text_id, document_number FROM erp_audit_log l WHERE branch_id = $1 \
         AND source = 'runtime' AND document_number IS NOT NULL \
         AND (outcome = 'ok' OR (outcome = 'replayed' AND NOT EXISTS ( \
             SELECT 1 FROM erp_audit_log e WHERE e.agent_run_id = l.agent_run_id AND e.id < l.id \
             AND e.document_type = l.document_type AND e.document_number = l.document_number \
             AND e.outcome IN ('ok', 'replayed')))) \
         ORDER BY id DESC LIMIT $2 OFFSET $3",
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
                document_id: document_id(row)?,
                document_number: row.try_get("document_number")?,
            })
        })
        .collect()
}

/// The people who have runs in `branch_id` (their user ids), for searching by name.
pub(crate) async fn people(
    pool: &sqlx::AnyPool,
    branch_id: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT DISTINCT user_id FROM erp_audit_log WHERE branch_id = $1 ORDER BY user_id LIMIT 1000",
    )
    .bind(branch_id)
    .fetch_all(pool)
    .await
}

/// A document a draft call stored with its idempotency key: what the handler returned.
#[derive(Clone, Debug)]
pub(crate) struct DraftedDocument {
    pub run_id: String,
    pub tool: String,
    pub user_id: String,
    pub document_type: String,
    pub document_id: DocumentId,
    pub number: String,
    pub response: Option<serde_json::Value>,
    pub response_text: Option<String>,
    pub created_at: String,
}

const DOCUMENT_COLUMNS: &str = "agent_run_id, tool_name, user_id, document_type, document_id, \
    document_text_id, document_number, response, response_text, created_at";

/// A document row's id (`document_id`, or `document_text_id` for a string id).
fn document_id(row: &sqlx::any::AnyRow) -> Result<DocumentId, sqlx::Error> {
    DocumentId::from_columns(
        row.try_get("document_id")?,
        row.try_get("document_text_id")?,
    )
    .ok_or_else(|| sqlx::Error::Decode("a drafted document's row has no id".into()))
}

fn drafted(row: &sqlx::any::AnyRow) -> Result<DraftedDocument, sqlx::Error> {
    let response: Option<String> = row.try_get("response")?;
    Ok(DraftedDocument {
        run_id: row.try_get("agent_run_id")?,
        tool: row.try_get("tool_name")?,
        user_id: row.try_get("user_id")?,
        document_type: row.try_get("document_type")?,
        document_id: document_id(row)?,
        number: row.try_get("document_number")?,
        response: response.and_then(|r| serde_json::from_str(&r).ok()),
        response_text: row.try_get("response_text")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Document `number` of `doc_type` drafted in `branch_id`, if an agent drafted it.
pub(crate) async fn document(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    doc_type: &str,
    number: &str,
) -> Result<Option<DraftedDocument>, sqlx::Error> {
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM erp_idempotency_keys WHERE branch_id = $1 \
         AND document_type = $2 AND document_number = $3 LIMIT 1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(doc_type.to_string())
        .bind(number.to_string())
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(drafted).transpose()
}

/// The documents run `run_id` drafted in `branch_id`.
pub(crate) async fn run_documents(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    run_id: &str,
) -> Result<Vec<DraftedDocument>, sqlx::Error> {
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM erp_idempotency_keys WHERE branch_id = $1 \
         AND agent_run_id = $2 AND document_number IS NOT NULL"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(run_id.to_string())
        .fetch_all(pool)
        .await?;
    rows.iter().map(drafted).collect()
}

/// What a run was asked and how it ended, as kept on the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct RunStory {
    pub task: Option<String>,
    pub ended_status: Option<String>,
    pub answer: Option<String>,
    pub ended_at: Option<String>,
}

/// The task and ending kept on `run_id`, if the run is known.
pub(crate) async fn story(pool: &sqlx::AnyPool, run_id: &str) -> Result<RunStory, sqlx::Error> {
    let row = sqlx::query(
        "SELECT task, ended_status, answer, ended_at FROM erp_agent_runs WHERE agent_run_id = $1",
    )
    .bind(run_id.to_string())
    .fetch_optional(pool)
    .await?;
    row.map(|row| {
        Ok(RunStory {
            task: row.try_get("task")?,
            ended_status: row.try_get("ended_status")?,
            answer: row.try_get("answer")?,
            ended_at: row.try_get("ended_at")?,
        })
    })
    .transpose()
    .map(Option::unwrap_or_default)
}

/// Documents of `doc_type` drafted in `branch_id` since `since` (RFC 3339 text), the
/// newest first, at most `limit`: what a new proposal may repeat.
pub(crate) async fn recent_documents(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    doc_type: &str,
    since: &str,
    limit: i64,
) -> Result<Vec<DraftedDocument>, sqlx::Error> {
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM erp_idempotency_keys WHERE branch_id = $1 \
         AND document_type = $2 AND document_number IS NOT NULL AND created_at >= $3 \
         ORDER BY created_at DESC LIMIT $4"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(branch_id)
        .bind(doc_type.to_string())
        .bind(since.to_string())
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.iter().map(drafted).collect()
}
