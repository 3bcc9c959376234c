//! Every query the recovery pass, the chain's writer and the review console's Runs page
//! run on the audit log, its run lines and the idempotency keys uses an index (`verify` reads the whole log, in chain order, by design), as the planners say (`EXPLAIN` on PostgreSQL,
//! `EXPLAIN QUERY PLAN` on SQLite), on a log of a few thousand rows with statistics.

use erp_tools_core::sqlx::{self, Row};
use erp_tools_core::{AuditEntry, Backend, Database};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;

/// The plan of `sql` (values written in), one line per step. On PostgreSQL with
/// sequential scans priced out (`enable_seqscan = off`): at a few thousand rows a scan can
/// be the cheaper plan, so this asks whether an index serves the query at all.
async fn plan(db: &Database, pool: &sqlx::AnyPool, sql: &str) -> String {
    let mut conn = pool.acquire().await.unwrap();
    let explain = match db.backend() {
        Backend::Postgres => {
            sqlx::raw_sql("SET enable_seqscan = off")
                .execute(&mut *conn)
                .await
                .unwrap();
            format!("EXPLAIN {sql}")
        }
        Backend::Sqlite => format!("EXPLAIN QUERY PLAN {sql}"),
    };
    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(explain))
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    if db.backend() == Backend::Postgres {
        sqlx::raw_sql("RESET enable_seqscan")
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    rows.iter()
        .map(|r| match db.backend() {
            Backend::Postgres => r.try_get::<String, _>(0).unwrap(),
            Backend::Sqlite => r.try_get::<String, _>("detail").unwrap(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `plan` reads `table` only through an index (or SQLite's rowid).
fn uses_an_index(backend: Backend, plan: &str, table: &str) -> bool {
    match backend {
        Backend::Postgres => !plan.contains("Seq Scan") && plan.contains("Index"),
        Backend::Sqlite => {
            let steps: Vec<&str> = plan.lines().filter(|l| l.contains(table)).collect();
            !steps.is_empty()
                && steps.iter().all(|step| {
                    step.starts_with("SEARCH")
                        && (step.contains("INDEX") || step.contains("PRIMARY KEY"))
                })
        }
    }
}

async fn the_passes_queries_use_indexes(t: &TestDb) {
    let who = BUYER.principal();
    let rows = (0..3_000).map(|i| {
        let at = format!("2026-03-{:02}T10:00:{:02}.{:06}Z", 1 + i % 28, i % 60, i);
        (
            at,
            AuditEntry::new(&who, format!("run-{}", i % 300), "answered"),
        )
    });
    t.db.ensure_audit_partitions("2026-03", "2026-03")
        .await
        .unwrap();
    t.db.backfill_audit(rows).await.unwrap();
    t.db.flush_audit().await.unwrap();
    if t.backend() == Backend::Postgres {
        sqlx::raw_sql(
            "ANALYZE erp_audit_log; ANALYZE erp_idempotency_keys; ANALYZE erp_audit_runs; \
             ANALYZE erp_audit_run_tools",
        )
        .execute(t.db.pool())
        .await
        .unwrap();
    }
    let chain: String = sqlx::query_scalar("SELECT MIN(chain_id) FROM erp_audit_log")
        .fetch_one(t.db.audit_pool())
        .await
        .unwrap();
    let queries = [
        (
            "the recovery pass: the key row a call wrote",
            "erp_idempotency_keys",
            "SELECT document_type, document_id FROM erp_idempotency_keys \
             WHERE audit_id = 1500 AND agent_run_id = 'run-1'"
                .to_string(),
        ),
        (
            "the recovery pass: the open calls (partial index erp_audit_log_attempts)",
            "erp_audit_log",
            "SELECT id, replica_id, at FROM erp_audit_log WHERE outcome = 'attempt' \
             AND source = 'runtime' ORDER BY id"
                .to_string(),
        ),
        (
            "the recovery pass: an open call's row",
            "erp_audit_log",
            "SELECT id, agent_run_id, tool_name, arguments FROM erp_audit_log \
             WHERE id = 1500 AND outcome = 'attempt'"
                .to_string(),
        ),
        (
            "the recovery pass: closing a row",
            "erp_audit_log",
            "SELECT outcome FROM erp_audit_log WHERE id = 1500 AND outcome = 'attempt'".to_string(),
        ),
        (
            "the writer: a chain's head",
            "erp_audit_log",
            format!(
                "SELECT chain_seq, chain_hash FROM erp_audit_log WHERE chain_id = '{chain}' \
                 ORDER BY chain_seq DESC LIMIT 1"
            ),
        ),
        (
            "the lease pass: finished rows not yet linked",
            "erp_audit_log",
            "SELECT id, replica_id FROM erp_audit_log WHERE chain_seq IS NULL \
             AND id > 0 AND outcome <> 'attempt' ORDER BY id LIMIT 1000"
                .to_string(),
        ),
        (
            "the Runs page: the runs needing a person, latest first",
            "erp_audit_runs",
            "SELECT s.agent_run_id FROM erp_audit_runs s WHERE s.branch_id = 1 \
             AND s.attention = 1 ORDER BY s.last_id DESC LIMIT 51"
                .to_string(),
        ),
        (
            "the Runs page: the other runs, latest first",
            "erp_audit_runs",
            "SELECT s.agent_run_id FROM erp_audit_runs s WHERE s.branch_id = 1 \
             AND s.attention = 0 ORDER BY s.last_id DESC LIMIT 51"
                .to_string(),
        ),
        (
            "the Runs page: the runs with a waiting approval",
            "erp_approvals",
            "SELECT p.agent_run_id FROM erp_approvals p WHERE p.branch_id = 1 \
             AND p.status = 'pending' AND p.expires_at > '2026-03-02'"
                .to_string(),
        ),
        (
            "the Runs page: a line's waiting approvals",
            "erp_approvals",
            "SELECT COUNT(*) FROM erp_approvals p WHERE p.agent_run_id = 'run-7' \
             AND p.branch_id = 1 AND p.status = 'pending' AND p.expires_at > '2026-03-02'"
                .to_string(),
        ),
        (
            "the Runs page: the surface of the line before a run",
            "erp_audit_runs",
            "SELECT p.last_surface FROM erp_audit_runs p WHERE p.branch_id = 1 \
             AND p.last_id < 1500 ORDER BY p.last_id DESC LIMIT 1"
                .to_string(),
        ),
        (
            "search: a person's runs",
            "erp_audit_runs",
            "SELECT s.agent_run_id FROM erp_audit_runs s WHERE s.branch_id = 1 \
             AND (s.agent_run_id = 'u-buyer' OR s.user_id IN ('u-buyer', 'u-2')) \
             ORDER BY s.last_id DESC LIMIT 51"
                .to_string(),
        ),
        (
            "search: a document number",
            "erp_audit_log",
            "SELECT x.agent_run_id FROM erp_audit_log x \
             WHERE x.document_number IN ('PO-2026-0046', 'po-2026-0046') AND x.branch_id = 1"
                .to_string(),
        ),
        (
            "search: a tool's runs",
            "erp_audit_run_tools",
            "SELECT t.agent_run_id FROM erp_audit_run_tools t \
             WHERE t.tool_name IN ('inventory_get_stock')"
                .to_string(),
        ),
        (
            "search: whether a tool has few runs",
            "erp_audit_run_tools",
            "SELECT COUNT(*) FROM (SELECT 1 FROM erp_audit_run_tools t \
             WHERE t.tool_name IN ('inventory_get_stock') LIMIT 1000) f"
                .to_string(),
        ),
        (
            "search: whether a run called a common tool",
            "erp_audit_run_tools",
            "SELECT 1 FROM erp_audit_run_tools t WHERE t.agent_run_id = 'run-7' \
             AND t.tool_name IN ('inventory_get_stock', 'purchasing_get_po')"
                .to_string(),
        ),
        (
            "search: a day's runs",
            "erp_audit_log",
            "SELECT x.agent_run_id FROM erp_audit_log x WHERE x.at >= '2026-03-02' \
             AND x.at < '2026-03-03' AND x.branch_id = 1"
                .to_string(),
        ),
        (
            "search: the branch's next person",
            "erp_audit_runs",
            "SELECT MIN(r.user_id) FROM erp_audit_runs r WHERE r.branch_id = 1 \
             AND r.user_id > 'u-1'"
                .to_string(),
        ),
    ];
    let mut failed = Vec::new();
    for (what, table, sql) in queries {
        let pool = if table.starts_with("erp_audit") {
            t.db.audit_pool()
        } else {
            t.db.pool()
        };
        let plan = plan(&t.db, pool, &sql).await;
        println!("{what}:\n{plan}\n");
        if !uses_an_index(t.backend(), &plan, table) {
            failed.push(format!("{what}: {plan}"));
        }
    }
    assert!(
        failed.is_empty(),
        "queries without an index:\n{}",
        failed.join("\n")
    );
}
on_both_backends!(the_passes_queries_use_indexes);

/// PostgreSQL: a row the writer updates by its id and its `at` (a call's outcome, a
/// draft's completion, a link in its chain) is looked for in its month's partition alone,
/// also under the generic plan a prepared statement ends up with; by its id alone, in
/// every partition. At a year's size that is 14 index probes instead of one per update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_updated_by_id_and_at_is_looked_for_in_one_partition() {
    let Some(t) = TestDb::postgres().await else {
        return;
    };
    t.db.ensure_audit_partitions("2026-01", "2026-03")
        .await
        .unwrap();
    let who = BUYER.principal();
    let rows = (0..300).map(|i| {
        let at = format!("2026-{:02}-10T10:00:00.{:06}Z", 1 + i % 3, i);
        (at, AuditEntry::new(&who, format!("run-{i}"), "answered"))
    });
    t.db.backfill_audit(rows).await.unwrap();
    t.db.flush_audit().await.unwrap();
    let partitions: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_inherits WHERE inhparent = 'erp_audit_log'::regclass",
    )
    .fetch_one(t.db.pool())
    .await
    .unwrap();
    assert!(partitions >= 3, "{partitions} partitions");
    let (id, at): (i64, String) =
        sqlx::query_as("SELECT id, at FROM erp_audit_log WHERE at LIKE '2026-02%' LIMIT 1")
            .fetch_one(t.db.pool())
            .await
            .unwrap();
    let mut conn = t.db.pool().acquire().await.unwrap();
    let generic = |params: &str, condition: &str, execute: String| {
        format!(
            "SET plan_cache_mode = force_generic_plan; \
             PREPARE finish_row({params}) AS UPDATE erp_audit_log SET message = 'checked' \
             WHERE {condition}; \
             EXPLAIN (ANALYZE, COSTS OFF) EXECUTE finish_row({execute})"
        )
    };
    async fn plan(conn: &mut sqlx::AnyConnection, sql: String) -> String {
        let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        sqlx::raw_sql("DEALLOCATE finish_row; RESET plan_cache_mode")
            .execute(&mut *conn)
            .await
            .unwrap();
        rows.iter()
            .map(|r| r.try_get::<String, _>(0).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }
    let by_id_and_at = plan(
        &mut conn,
        generic(
            "bigint, text",
            "id = $1 AND at = $2",
            format!("{id}, '{at}'"),
        ),
    )
    .await;
    let scans = |plan: &str| plan.matches("Index Scan").count();
    assert_eq!(scans(&by_id_and_at), 1, "{by_id_and_at}");
    assert!(
        by_id_and_at.contains(&format!("Subplans Removed: {}", partitions - 1)),
        "{by_id_and_at}"
    );
    let by_id = plan(&mut conn, generic("bigint", "id = $1", id.to_string())).await;
    assert_eq!(scans(&by_id), partitions as usize, "{by_id}");
}
