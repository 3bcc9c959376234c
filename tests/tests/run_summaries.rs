//! The Runs page's lines (`erp_audit_runs`, kept by triggers) count what an aggregate over
//! the whole log counts, and show the last event, surfaces and first tool the log's rows
//! say, whatever the order in which a call's rows and the agent loop's events arrive;
//! archiving a month forgets the lines of runs that ended in it.

use erp_tools_core::sqlx::{self, Row};
use erp_tools_tests::db::{TestDb, raw_audit_pool};
use erp_tools_tests::on_both_backends;

/// The counts per run as the Runs page defined them before it had lines: one aggregate over
/// every row (a loop event is not counted when the runtime row of its call is).
const ORACLE: &str = "SELECT a.agent_run_id, COUNT(*) AS n_rows, \
     CAST(SUM(CASE WHEN a.source = 'runtime' THEN 1 ELSE 0 END) AS BIGINT) AS calls, \
     CAST(SUM(CASE WHEN a.outcome = 'denied' AND (a.source = 'runtime' OR NOT EXISTS ( \
         SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = a.agent_run_id \
         AND r.source = 'runtime' AND r.tool_call_id = a.tool_call_id)) \
         THEN 1 ELSE 0 END) AS BIGINT) AS denials, \
     CAST(SUM(CASE WHEN (a.source = 'runtime' AND a.outcome = 'tool_error') \
         OR (a.source = 'agent' AND a.outcome = 'failed' AND NOT EXISTS ( \
         SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = a.agent_run_id \
         AND r.source = 'runtime' AND r.tool_call_id = a.tool_call_id \
         AND r.outcome = 'tool_error')) THEN 1 ELSE 0 END) AS BIGINT) AS failures, \
     CAST(SUM(CASE WHEN a.outcome = 'replayed' THEN 1 ELSE 0 END) AS BIGINT) AS replays, \
     CAST(SUM(CASE WHEN a.source = 'runtime' AND a.outcome = 'ok' \
         AND a.document_number IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS drafts, \
     MIN(a.id) AS first_id, MAX(a.id) AS last_id \
     FROM erp_audit_log a WHERE a.branch_id = 1 GROUP BY a.agent_run_id ORDER BY a.agent_run_id";

const LINES: &str = "SELECT agent_run_id, calls, denials, failures, replays, drafts, first_id, \
     last_id, attention FROM erp_audit_runs WHERE branch_id = 1 ORDER BY agent_run_id";

/// A small deterministic generator (no two runs of the test differ).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

async fn insert(
    pool: &sqlx::AnyPool,
    at: &str,
    source: &str,
    run: &str,
    call: &str,
    outcome: &str,
    document: Option<&str>,
) {
    // The tool surface: runs whose id ends in 0 change it from their fifth minute on; the
    // loop's events have none.
    let surface = (source == "runtime").then(|| {
        if run.ends_with('0') && &at[14..16] >= "04" {
            "fp-2"
        } else {
            "fp-1"
        }
    });
    sqlx::query(
        "INSERT INTO erp_audit_log (at, source, agent_run_id, tool_call_id, tool_name, user_id, \
         branch_id, branch_code, outcome, document_number, finished_at, surface) \
         VALUES ($1, $2, $3, $4, $5, 'u-1', 1, 'SBY-01', $6, $7, $8, $9)",
    )
    .bind(at.to_string())
    .bind(source.to_string())
    .bind(run.to_string())
    .bind(call.to_string())
    .bind((source == "runtime").then(|| format!("tool_{}", call.len() % 3)))
    .bind(outcome.to_string())
    .bind(document.map(str::to_string))
    .bind((outcome != "attempt").then(|| at.to_string()))
    .bind(surface)
    .execute(pool)
    .await
    .unwrap();
}

async fn finish(pool: &sqlx::AnyPool, run: &str, call: &str, outcome: &str, doc: Option<&str>) {
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = $1, document_number = $2, finished_at = at \
         WHERE agent_run_id = $3 AND tool_call_id = $4 AND source = 'runtime' \
         AND outcome = 'attempt'",
    )
    .bind(outcome.to_string())
    .bind(doc.map(str::to_string))
    .bind(run.to_string())
    .bind(call.to_string())
    .execute(pool)
    .await
    .unwrap();
}

type Counts = Vec<(String, Vec<i64>)>;

/// What a line shows besides its counts.
#[derive(Debug, Default, PartialEq)]
struct Shown {
    last_event: Option<String>,
    last_surface: Option<String>,
    first_surface: Option<String>,
    first_tool: Option<String>,
    surface_changed: bool,
}

const LINES_SHOWN: &str = "SELECT agent_run_id, last_event, last_surface, first_surface, \
     first_tool, surface_changed FROM erp_audit_runs WHERE branch_id = 1 ORDER BY agent_run_id";

async fn shown(pool: &sqlx::AnyPool, sql: &str) -> Vec<(String, Shown)> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_all(pool)
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            let changed = r
                .try_get::<i64, _>("surface_changed")
                .unwrap_or_else(|_| i64::from(r.try_get::<i32, _>("surface_changed").unwrap()));
            (
                r.try_get("agent_run_id").unwrap(),
                Shown {
                    last_event: r.try_get("last_event").unwrap(),
                    last_surface: r.try_get("last_surface").unwrap(),
                    first_surface: r.try_get("first_surface").unwrap(),
                    first_tool: r.try_get("first_tool").unwrap(),
                    surface_changed: changed > 0,
                },
            )
        })
        .collect()
}

/// The same, read from the log's rows in order: the last row's outcome and surface, the
/// first row's surface, the first tool named, whether two rows name different surfaces.
async fn shown_by_the_log(pool: &sqlx::AnyPool) -> Vec<(String, Shown)> {
    let rows = sqlx::query(
        "SELECT agent_run_id, outcome, surface, tool_name FROM erp_audit_log \
         WHERE branch_id = 1 ORDER BY agent_run_id, id",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let mut out: Vec<(String, Shown, Vec<String>)> = Vec::new();
    for r in &rows {
        let run: String = r.try_get("agent_run_id").unwrap();
        let surface: Option<String> = r.try_get("surface").unwrap();
        let tool: Option<String> = r.try_get("tool_name").unwrap();
        if out.last().is_none_or(|(last, _, _)| *last != run) {
            let first = Shown {
                first_surface: surface.clone(),
                ..Shown::default()
            };
            out.push((run, first, Vec::new()));
        }
        let (_, line, surfaces) = out.last_mut().unwrap();
        line.last_event = r.try_get("outcome").unwrap();
        line.last_surface = surface.clone();
        if line.first_tool.is_none() {
            line.first_tool = tool;
        }
        if let Some(s) = surface
            && !surfaces.contains(&s)
        {
            surfaces.push(s);
        }
        line.surface_changed = surfaces.len() > 1;
    }
    out.into_iter().map(|(run, line, _)| (run, line)).collect()
}

async fn counts(pool: &sqlx::AnyPool, sql: &str, columns: &[&str]) -> Counts {
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_all(pool)
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            let values = columns
                .iter()
                .map(|c| {
                    r.try_get::<i64, _>(*c)
                        .unwrap_or_else(|_| i64::from(r.try_get::<i32, _>(*c).unwrap()))
                })
                .collect();
            (r.try_get("agent_run_id").unwrap(), values)
        })
        .collect()
}

async fn lines_count_what_the_log_holds(t: &TestDb) {
    let pool = raw_audit_pool(&t.db).await;
    let mut rng = Lcg(7);
    let mut expected_attention = 0;
    for run in 0..40 {
        let run_id = format!("run-{run:02}");
        let mut calls = 0;
        let mut needs_person = false;
        for step in 0..rng.below(12) + 1 {
            let at = format!("2026-03-{:02}T10:{:02}:00.000000Z", 1 + run % 28, step);
            // Call ids restart in every MCP session: a run over several sessions reuses
            // them (the agent loop's ids are its own, never reused).
            let call = format!("c{step}");
            let mcp_call = format!("c{}", if rng.below(3) == 0 { 1 } else { step });
            match rng.below(30) {
                // A call refused by the pipeline, then the loop's own event of it.
                0 => {
                    insert(&pool, &at, "runtime", &run_id, &call, "denied", None).await;
                    insert(&pool, &at, "agent", &run_id, &call, "denied", None).await;
                    needs_person = true;
                }
                // Refused by the loop's policy: no runtime row.
                1 => {
                    let call = format!("policy-{step}");
                    insert(&pool, &at, "agent", &run_id, &call, "denied", None).await;
                    needs_person = true;
                }
                // A failing tool: its outcome written before or after the loop's event.
                2 => {
                    insert(&pool, &at, "runtime", &run_id, &call, "attempt", None).await;
                    if rng.below(2) == 0 {
                        finish(&pool, &run_id, &call, "tool_error", None).await;
                        insert(&pool, &at, "agent", &run_id, &call, "failed", None).await;
                    } else {
                        insert(&pool, &at, "agent", &run_id, &call, "failed", None).await;
                        finish(&pool, &run_id, &call, "tool_error", None).await;
                    }
                    needs_person = true;
                }
                // A draft, a replay, a read.
                3..=9 => {
                    insert(&pool, &at, "runtime", &run_id, &mcp_call, "attempt", None).await;
                    let doc = format!("PO-{run}-{step}");
                    finish(&pool, &run_id, &mcp_call, "ok", Some(&doc)).await;
                }
                10..=13 => {
                    insert(&pool, &at, "runtime", &run_id, &mcp_call, "replayed", None).await
                }
                14..=28 => insert(&pool, &at, "runtime", &run_id, &mcp_call, "ok", None).await,
                // Invalid arguments, then the loop says the step failed.
                29 => {
                    insert(&pool, &at, "runtime", &run_id, &call, "attempt", None).await;
                    finish(&pool, &run_id, &call, "invalid_arguments", None).await;
                    insert(&pool, &at, "agent", &run_id, &call, "failed", None).await;
                    needs_person = true;
                }
                _ => unreachable!(),
            }
            calls += 1;
        }
        assert!(calls > 0);
        expected_attention += i64::from(needs_person);
    }
    let columns = [
        "calls", "denials", "failures", "replays", "drafts", "first_id", "last_id",
    ];
    let oracle = counts(&pool, ORACLE, &columns).await;
    let lines = counts(&pool, LINES, &columns).await;
    assert_eq!(lines.len(), 40);
    assert_eq!(
        lines, oracle,
        "the lines differ from the aggregate over the log"
    );
    let attention: i64 = counts(&pool, LINES, &["attention"])
        .await
        .iter()
        .map(|(_, v)| v[0])
        .sum();
    assert_eq!(attention, expected_attention);
    assert!(attention > 0 && attention < 40, "{attention}");
    let shown = shown(&pool, LINES_SHOWN).await;
    let expected = shown_by_the_log(&pool).await;
    assert_eq!(shown.len(), 40);
    assert_eq!(shown, expected, "the lines show other rows than the log's");
    assert!(
        shown.iter().any(|(_, s)| s.surface_changed)
            && shown.iter().any(|(_, s)| !s.surface_changed),
        "some runs changed their surface, some did not"
    );
    pool.close().await;
}
on_both_backends!(lines_count_what_the_log_holds);
