//! The store at the size a year of agents produces: the same operations timed on an empty
//! store and, in the same run, after a generator filled it with a year of traffic.
//!
//! The generator writes `--audit-rows` audit rows spread evenly over the last twelve months
//! (through `Database::backfill_audit`, so they are chained and, on PostgreSQL, land in
//! their monthly partitions; `source = "backfill"`), in `--runs` agent runs (each a stretch
//! of consecutive calls) of 500 people in both branches, one row in ten a draft naming its
//! document; `--keys` idempotency keys
//! and `--runs` agent runs (multi-row `INSERT`s). Full size (the issue's): 10 000 000
//! rows, 1 000 000 keys, 100 000 runs; CI runs a small size.
//!
//! Timed (`--samples` each, p50 and p95 in milliseconds): a read call and a draft call
//! through `ToolRuntime::call`, the review console's Runs page and its search by document
//! number, by person and by tool (HTTP, signed in), and the lease pass
//! (`Database::recover_dead_replicas`). Printed: each figure empty and at size, and the
//! ratio of the p50s (at size over empty). With kept stores, "empty" is a new store with
//! `--baseline-rows` rows (two pages of runs per branch by default), so that its Runs page
//! and searches show as many lines as the full store's; `--baseline-rows 0` compares with
//! a store with nothing in it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use erp_tools_benches::stats::{emit_json, percentile_sorted};
use erp_tools_core::sqlx;
use erp_tools_core::{AuditEntry, DocumentRef, Principal, ToolCall};
use erp_tools_tests::app::arguments::{po_draft, valid_arguments};
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_STOCK};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::principals::{BUYER, REVIEWER};
use erp_tools_tests::review::{Browser, ReviewServer};
use serde_json::json;

#[derive(Parser, Debug, Clone)]
#[command(about = "The store's operations empty and at a year's size")]
struct Args {
    /// Audit rows generated.
    #[arg(long, default_value_t = 10_000_000)]
    audit_rows: u64,
    /// Idempotency keys generated.
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Agent runs generated.
    #[arg(long, default_value_t = 100_000)]
    runs: u64,
    /// Timings per operation and size.
    #[arg(long, default_value_t = 30)]
    samples: usize,
    /// SQLite only (PostgreSQL too when ERP_TOOLS_PG_URL is set, unless this is given).
    #[arg(long)]
    sqlite_only: bool,
    /// PostgreSQL only.
    #[arg(long, conflicts_with = "sqlite_only")]
    postgres_only: bool,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Fill (once) and measure the SQLite store in this directory, and keep it: a later run
    /// with the same sizes measures it again without filling (the empty figures come from
    /// a new store in the same run). Remove the directory to drop it.
    #[arg(long)]
    sqlite_dir: Option<std::path::PathBuf>,
    /// The same for PostgreSQL: the schema of this name, kept (`DROP SCHEMA <name>
    /// CASCADE` drops it).
    #[arg(long)]
    pg_schema: Option<String>,
    /// Fill the kept stores and stop (no timings).
    #[arg(long)]
    fill_only: bool,
    /// PostgreSQL: write the generated rows with the run-summary triggers off and build the
    /// summaries afterwards, as the migrations do for rows written before them (the same
    /// lines, several times faster to fill).
    #[arg(long)]
    summaries_after: bool,
    /// Time the kept stores at the size they hold, even if their fill is unfinished.
    #[arg(long)]
    as_filled: bool,
    /// With kept stores (`--sqlite-dir`, `--pg-schema`): the new store the figures at size
    /// are compared with gets this many rows first, in runs of 20 (2 000: 100 runs, two
    /// full pages of the Runs page per branch, so both stores show the same lines); 0 for
    /// a store with nothing in it, whose Runs page and searches show no line at all.
    #[arg(long, default_value_t = 2_000)]
    baseline_rows: u64,
    /// PostgreSQL: audit writers filling at the same time (each a replica with chains of
    /// its own, as servers sharing the database have).
    #[arg(long, default_value_t = 2)]
    writers: usize,
}

const TOOLS: [&str; 4] = [
    "inventory_get_stock",
    "purchasing_get_po",
    "purchasing_search_vendors",
    "purchasing_create_po_draft",
];

/// p50 and p95 of `samples` runs of `op`, in milliseconds.
async fn time<F, Fut>(samples: usize, mut op: F) -> (f64, f64)
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut ms = Vec::with_capacity(samples);
    for i in 0..samples {
        let started = Instant::now();
        op(i).await;
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    (percentile_sorted(&ms, 50.0), percentile_sorted(&ms, 95.0))
}

/// Every operation timed once per sample: `(name, p50, p95)`.
async fn measure(
    t: &TestDb,
    server: &ReviewServer,
    browser: &mut Browser,
    samples: usize,
    round: &str,
) -> Vec<(&'static str, f64, f64)> {
    let who = Arc::new(BUYER.principal());
    let runtime = server.runtime().clone();
    let call = |name: &str, arguments: serde_json::Value, i: usize| ToolCall {
        agent_run_id: format!("bench-{round}"),
        tool_call_id: format!("call-{i}"),
        name: name.into(),
        arguments,
    };
    let mut out = Vec::new();
    let (p50, p95) = time(samples, |i| {
        let (runtime, who) = (runtime.clone(), who.clone());
        let c = call(GET_STOCK, valid_arguments(GET_STOCK, "x"), i);
        async move {
            runtime.call(&who, c).await.expect("read");
        }
    })
    .await;
    out.push(("read_call", p50, p95));
    let (p50, p95) = time(samples, |i| {
        let (runtime, who) = (runtime.clone(), who.clone());
        let c = call(CREATE_PO_DRAFT, po_draft(&format!("{round}-{i}")), 1000 + i);
        async move {
            runtime.call(&who, c).await.expect("draft");
        }
    })
    .await;
    out.push(("draft_call", p50, p95));
    for (name, path) in [
        ("runs_page", "/runs".to_string()),
        ("search_document_number", "/runs?q=PO-2026-0001".to_string()),
        ("search_person", "/runs?q=user-17".to_string()),
        ("search_tool", "/runs?q=purchasing_get_po".to_string()),
    ] {
        let mut ms = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            let page = browser.get(&path).await;
            assert_eq!(
                page.status,
                200,
                "{path}: {}",
                page.html.chars().take(600).collect::<String>()
            );
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        ms.sort_by(f64::total_cmp);
        out.push((
            name,
            percentile_sorted(&ms, 50.0),
            percentile_sorted(&ms, 95.0),
        ));
    }
    let (p50, p95) = time(samples, |_| async {
        t.db.recover_dead_replicas().await.expect("lease pass");
    })
    .await;
    out.push(("lease_pass", p50, p95));
    out
}

fn time_text(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Fills the store with a year of traffic: keys and agent runs first, then the audit rows
/// in chunks, the rows written so far recorded in `growth_fill` after each chunk (a fill
/// stopped half-way resumes from there; the chunk it was writing may be written twice).
async fn fill(t: &TestDb, args: &Args) -> Duration {
    let started = Instant::now();
    let pool = t.db.pool();
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS growth_fill (audit_rows BIGINT, keys BIGINT, runs BIGINT, \
         rows_done BIGINT)",
    )
    .execute(pool)
    .await
    .expect("the fill's record");
    let resumed: Option<i64> = sqlx::query_scalar("SELECT rows_done FROM growth_fill")
        .fetch_optional(pool)
        .await
        .expect("the fill's record");
    let now = chrono::Utc::now() - chrono::Duration::minutes(1);
    let year = chrono::Duration::days(365);
    let first = now - year;
    t.db.ensure_audit_partitions(
        &first.format("%Y-%m").to_string(),
        &now.format("%Y-%m").to_string(),
    )
    .await
    .expect("partitions");
    let step = year / (args.audit_rows.max(1) as i32);
    if resumed.is_none() {
        fill_keys_and_runs(t, args, first, step).await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "INSERT INTO growth_fill VALUES ({}, {}, {}, 0)",
            args.audit_rows, args.keys, args.runs
        )))
        .execute(pool)
        .await
        .expect("record the fill");
    }
    let people: Vec<Principal> = (0..500)
        .map(|u| {
            let (id, code) = if u % 2 == 0 {
                (1, "SBY-01")
            } else {
                (2, "JKT-01")
            };
            Principal::builder(format!("user-{u}"), id, code).build()
        })
        .collect();
    let people = Arc::new(people);
    // A run is a stretch of consecutive calls by one person (a run's rows lie in one or
    // two months, as an agent's do).
    let per_run = args.audit_rows.div_ceil(args.runs.max(1)).max(1);
    let rows = move |from: u64, to: u64| {
        let people = people.clone();
        (from..to).map(move |i| {
            let run = i / per_run;
            let who = &people[(run % 500) as usize];
            let run = format!("gen-run-{run}");
            let tool = TOOLS[(i % 4) as usize];
            let mut entry = AuditEntry::new(who, run, "ok").tool(tool, format!("c-{i}"));
            if i % 10 == 3 {
                entry = entry.document(DocumentRef {
                    doc_type: "purchase_order".into(),
                    id: erp_tools_core::DocumentId::Number(i as i64),
                    number: format!("PO-G-{i:08}"),
                });
            }
            (time_text(first + step * (i as i32)), entry)
        })
    };
    // PostgreSQL: several writers at once, each with chains of its own; with
    // `--summaries-after`, on sessions whose triggers are off
    // (`session_replication_role = replica`).
    let postgres = t.backend() == erp_tools_core::Backend::Postgres;
    let mut writers = Vec::new();
    if postgres && args.summaries_after {
        let url = t.url().replace(
            "options=-c%20search_path",
            "options=-c%20session_replication_role%3Dreplica%20-c%20search_path",
        );
        assert!(
            url != t.url(),
            "the store's URL sets the schema: {}",
            t.url()
        );
        for _ in 0..args.writers.max(1) {
            writers.push(
                erp_tools_core::Database::open(&url)
                    .await
                    .expect("a writer"),
            );
        }
    } else {
        writers.push(t.db.clone());
        for _ in 1..if postgres { args.writers.max(1) } else { 1 } {
            writers.push(t.open_again().await);
        }
    }
    const CHUNK: u64 = 100_000;
    let mut from = resumed.unwrap_or(0) as u64;
    let start = from;
    while from < args.audit_rows {
        let to = (from + CHUNK).min(args.audit_rows);
        let share = (to - from).div_ceil(writers.len() as u64);
        let mut tasks = Vec::new();
        for (w, db) in writers.iter().enumerate() {
            let (a, b) = (
                from + share * w as u64,
                (from + share * (w as u64 + 1)).min(to),
            );
            let (db, rows) = (db.clone(), rows(a, b.max(a)));
            tasks.push(tokio::spawn(async move { db.backfill_audit(rows).await }));
        }
        for task in tasks {
            task.await.expect("writer").expect("backfill");
        }
        from = to;
        sqlx::query("UPDATE growth_fill SET rows_done = $1")
            .bind(from as i64)
            .execute(pool)
            .await
            .expect("record the fill");
        if from.is_multiple_of(1_000_000) || from == args.audit_rows {
            let s = started.elapsed().as_secs_f64();
            eprintln!(
                "{:?}: {from} audit rows in {s:.0} s ({:.0} rows/s)",
                t.backend(),
                (from - start) as f64 / s
            );
        }
    }
    for db in &writers {
        if db.replica_id() != t.db.replica_id() {
            db.close().await;
        }
    }
    if postgres && args.summaries_after {
        // The run summaries of the rows written, built as the migrations build them for
        // rows written before them.
        let started = Instant::now();
        for sql in [
            include_str!("../../../erp-tools-core/migrations/postgres/0021_run_summaries.sql"),
            include_str!("../../../erp-tools-core/migrations/postgres/0026_run_lines.sql"),
        ] {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(pool)
                .await
                .expect("the run summaries");
        }
        eprintln!(
            "Postgres: run summaries built in {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }
    analyze(t).await;
    started.elapsed()
}

/// Planner statistics (and, on PostgreSQL, the visibility map), as autovacuum or SQLite's
/// `PRAGMA optimize` would gather them after such a load.
async fn analyze(t: &TestDb) {
    // On SQLite the audit log is a file of its own, attached read-only to the main pool:
    // the main pool analyzes its own schema, the audit file's pool the log.
    let (main, log) = match t.backend() {
        erp_tools_core::Backend::Postgres => ("VACUUM ANALYZE", "VACUUM ANALYZE"),
        // Sampled, as `PRAGMA optimize` does.
        erp_tools_core::Backend::Sqlite => (
            "PRAGMA analysis_limit = 1000; ANALYZE main",
            "PRAGMA analysis_limit = 1000; ANALYZE",
        ),
    };
    let audit = erp_tools_tests::db::raw_audit_pool(&t.db).await;
    for (pool, analyze) in [(t.db.pool(), main), (&audit, log)] {
        sqlx::raw_sql(analyze).execute(pool).await.expect("analyze");
    }
    if t.backend() == erp_tools_core::Backend::Sqlite {
        audit.close().await;
    }
}

/// `--keys` idempotency keys and `--runs` agent runs, by multi-row `INSERT`s.
async fn fill_keys_and_runs(
    t: &TestDb,
    args: &Args,
    first: chrono::DateTime<chrono::Utc>,
    step: chrono::Duration,
) {
    let pool = t.db.pool();
    for chunk_start in (0..args.keys).step_by(200) {
        let end = (chunk_start + 200).min(args.keys);
        let mut sql = String::from(
            "INSERT INTO erp_idempotency_keys (agent_run_id, client_ref, request_hash, \
             tool_name, user_id, branch_id, created_at, document_type, document_id, \
             document_number, response, audit_id) VALUES ",
        );
        for i in chunk_start..end {
            if i > chunk_start {
                sql.push_str(", ");
            }
            let at = time_text(first + step * ((i * 10) as i32));
            sql.push_str(&format!(
                "('gen-run-{}', 'ref-{i}', 'h', 'purchasing_create_po_draft', 'user-{}', {}, \
                 '{at}', 'purchase_order', {i}, 'PO-G-{i:08}', '{{}}', {i})",
                i % args.runs.max(1),
                i % 500,
                1 + i % 2
            ));
        }
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await
            .expect("keys");
    }
    for chunk_start in (0..args.runs).step_by(500) {
        let end = (chunk_start + 500).min(args.runs);
        let values: Vec<String> = (chunk_start..end)
            .map(|i| {
                format!(
                    "('gen-run-{i}', 'user-{}', {}, '{}')",
                    i % 500,
                    1 + i % 2,
                    time_text(first)
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO erp_agent_runs (agent_run_id, user_id, branch_id, first_seen_at) VALUES {} \
             ON CONFLICT DO NOTHING",
            values.join(", ")
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await
            .expect("runs");
    }
}

/// Whether `t` holds a finished fill of the sizes asked for.
async fn filled(t: &TestDb, args: &Args) -> bool {
    fill_record(t).await.is_some_and(|s| {
        s == (
            args.audit_rows as i64,
            args.keys as i64,
            args.runs as i64,
            args.audit_rows as i64,
        )
    })
}

/// The kept store's fill: the sizes asked for and the audit rows written so far.
async fn fill_record(t: &TestDb) -> Option<(i64, i64, i64, i64)> {
    sqlx::query_as("SELECT audit_rows, keys, runs, rows_done FROM growth_fill")
        .fetch_one(t.db.pool())
        .await
        .ok()
}

type Figures = Vec<(&'static str, f64, f64)>;

/// The operations timed on `t`: before and after filling it when `fill_it`, else at the
/// size it has; with the fill's time.
async fn timed(
    t: &TestDb,
    args: &Args,
    fill_it: bool,
) -> (Option<Figures>, Option<Duration>, Figures) {
    let server = ReviewServer::on(t, 25).await;
    let mut browser = Browser::new(&server);
    let signed_in = browser.sign_in(&server.token(&REVIEWER.principal())).await;
    assert!(signed_in.status < 400, "the reviewer signs in");
    // Warm-up: not counted.
    measure(t, &server, &mut browser, 3, "warm").await;
    if !fill_it {
        let full = measure(t, &server, &mut browser, args.samples, "full").await;
        return (None, None, full);
    }
    let empty = measure(t, &server, &mut browser, args.samples, "empty").await;
    let filled_in = fill(t, args).await;
    let full = measure(t, &server, &mut browser, args.samples, "full").await;
    (Some(empty), Some(filled_in), full)
}

/// The figures of `t` empty and at size; when `t` is a kept store, the empty ones come
/// from the new store `empty`, timed first in the same run.
async fn backend(name: &str, t: TestDb, empty: Option<TestDb>, args: &Args) -> serde_json::Value {
    let record = if empty.is_some() {
        fill_record(&t).await
    } else {
        None
    };
    let fill_it = !(args.as_filled || filled(&t, args).await);
    match record {
        Some((rows, keys, runs, done)) if args.as_filled && done < rows => {
            eprintln!(
                "{name}: the kept store holds {done} of {rows} audit rows, {keys} keys, \
                 {runs} runs (unfinished)"
            );
            analyze(&t).await;
        }
        Some((rows, keys, runs, done)) if args.as_filled || !fill_it => {
            eprintln!(
                "{name}: the kept store holds {done} of {rows} audit rows, {keys} keys, {runs} runs"
            );
            if args.as_filled {
                analyze(&t).await;
            }
        }
        Some((rows, keys, runs, done)) => assert!(
            (rows, keys, runs) == (args.audit_rows as i64, args.keys as i64, args.runs as i64),
            "{name}: the kept store was filled for {rows} rows, {keys} keys, {runs} runs \
             ({done} rows written): drop it first, or give those sizes to resume"
        ),
        None => {}
    }
    if args.fill_only {
        let s = if fill_it {
            fill(&t, args).await.as_secs_f64()
        } else {
            0.0
        };
        eprintln!("{name}: filled in {s:.1} s");
        return json!({ "backend": name, "fill_s": s });
    }
    let (empty, filled_in, full) = match &empty {
        Some(e) => {
            if args.baseline_rows > 0 {
                let small = Args {
                    audit_rows: args.baseline_rows,
                    keys: args.baseline_rows / 10,
                    runs: args.baseline_rows.div_ceil(20),
                    ..args.clone()
                };
                fill(e, &small).await;
            }
            let (_, _, empty) = timed(e, args, false).await;
            let (_, filled_in, full) = timed(&t, args, fill_it).await;
            (empty, filled_in, full)
        }
        None => {
            let (empty, filled_in, full) = timed(&t, args, true).await;
            (empty.expect("timed empty"), filled_in, full)
        }
    };
    let mut figures = Vec::new();
    for ((op, e50, e95), (_, f50, f95)) in empty.iter().zip(&full) {
        let ratio = f50 / e50;
        eprintln!(
            "{name} {op}: empty p50 {e50:.2} ms (p95 {e95:.2}), at size p50 {f50:.2} ms \
             (p95 {f95:.2}), ratio {ratio:.2}"
        );
        figures.push(json!({
            "operation": op, "empty_p50_ms": e50, "empty_p95_ms": e95,
            "full_p50_ms": f50, "full_p95_ms": f95, "ratio_p50": ratio,
        }));
    }
    let fill_s = filled_in.map(|d| d.as_secs_f64());
    if let Some(s) = fill_s {
        eprintln!("{name}: filled in {s:.1} s");
    }
    json!({ "backend": name, "fill_s": fill_s, "figures": figures })
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = Args::parse();
    let mut results = Vec::new();
    if !args.postgres_only {
        let (t, empty) = match &args.sqlite_dir {
            Some(dir) => (TestDb::sqlite_kept(dir).await, Some(TestDb::sqlite().await)),
            None => (TestDb::sqlite().await, None),
        };
        results.push(backend("sqlite", t, empty, &args).await);
    }
    if !args.sqlite_only {
        let stores = match &args.pg_schema {
            Some(schema) => TestDb::postgres_kept(schema)
                .await
                .zip(TestDb::postgres().await.map(Some)),
            None => TestDb::postgres().await.map(|t| (t, None)),
        };
        if let Some((t, empty)) = stores {
            results.push(backend("postgres", t, empty, &args).await);
        }
    }
    emit_json(
        &json!({
            "audit_rows": args.audit_rows, "keys": args.keys, "runs": args.runs,
            "samples": args.samples, "results": results,
        }),
        args.json.as_deref(),
    );
}
