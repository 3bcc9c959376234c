//! What the audit log's hash chain costs the group-commit audit writer: the same storm of
//! calls on a database whose writer links every row into its chain (the default) and on
//! one opened with `DatabaseOptions::without_audit_chain_loses_tamper_evidence`, in one
//! run, rounds interleaved (with, without, with, ...), per backend (PostgreSQL when
//! `ERP_TOOLS_PG_URL` is set).
//!
//! Each round: `--callers` concurrent callers, each its own agent run, each sending
//! `--calls` calls through `ToolRuntime::call`: read calls (`catalog_get_item`; each an
//! audit row, usually its attempt row and its outcome update) and, with `--drafts`, one
//! draft in every four calls (on PostgreSQL the draft's row is finished in its own
//! transaction and linked by the writer afterwards). Reports the wall time of each round
//! and the ratio of the medians, with chain over without (the target is at most 1.10),
//! and checks that the chained log verifies intact.

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::fixtures::BenchDb;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::tools::order_arguments;
use erp_tools_benches::{bench_registry, principal};
use erp_tools_core::{Database, Outcome, ToolCall, ToolRuntime};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "The audit writer's throughput with and without the hash chain")]
struct Args {
    /// Concurrent callers.
    #[arg(long, default_value_t = 32)]
    callers: usize,
    /// Calls per caller per round.
    #[arg(long, default_value_t = 100)]
    calls: usize,
    /// Rounds per variant (interleaved).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Make one call in four a draft.
    #[arg(long)]
    drafts: bool,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// One round on `db`: the wall time in seconds.
async fn round(db: &Database, args: &Args, round: usize) -> f64 {
    let runtime = ToolRuntime::new(bench_registry(), db.clone());
    let who = Arc::new(principal(&["catalog:read", "orders:draft"]));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for caller in 0..args.callers {
        let (runtime, who) = (runtime.clone(), who.clone());
        let (calls, drafts) = (args.calls, args.drafts);
        tasks.push(tokio::spawn(async move {
            let run = format!("chain-bench-{round}-{caller}");
            for i in 0..calls {
                let (name, arguments) = if drafts && i % 4 == 3 {
                    let client_ref = format!("{run}-{i}");
                    ("orders_create_order_draft", order_arguments(&client_ref, 3))
                } else {
                    ("catalog_get_item", json!({ "item_code": "BRG-0042" }))
                };
                let call = ToolCall {
                    agent_run_id: run.clone(),
                    tool_call_id: format!("call-{i}"),
                    name: name.into(),
                    arguments,
                };
                let out = runtime.call(&who, call).await.expect("call");
                assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
            }
        }));
    }
    for task in tasks {
        task.await.expect("caller");
    }
    db.flush_audit().await.expect("flush");
    started.elapsed().as_secs_f64()
}

/// Rounds on both databases, interleaved; returns the JSON of the backend.
async fn measure(name: &str, chained: BenchDb, plain: BenchDb, args: &Args) -> serde_json::Value {
    let (mut with, mut without) = (Vec::new(), Vec::new());
    // One warm-up round each, not counted.
    round(&chained.db, args, 0).await;
    round(&plain.db, args, 0).await;
    for r in 1..=args.rounds {
        if r % 2 == 1 {
            with.push(round(&chained.db, args, r).await);
            without.push(round(&plain.db, args, r).await);
        } else {
            without.push(round(&plain.db, args, r).await);
            with.push(round(&chained.db, args, r).await);
        }
    }
    let report = chained.db.verify_audit_chain(&[]).await.expect("verify");
    assert!(report.is_intact(), "the chained log verifies: {report:?}");
    let calls = (args.callers * args.calls) as f64;
    let (w, wo) = (
        Summary::of(&with).expect("rounds"),
        Summary::of(&without).expect("rounds"),
    );
    let ratio = w.median / wo.median;
    eprintln!(
        "{name}: {calls} calls a round; with the chain {} s, without {} s; ratio {ratio:.3}; \
         {} rows verified intact",
        w.display(3),
        wo.display(3),
        report.rows
    );
    json!({
        "backend": name,
        "calls_per_round": calls,
        "with_chain_s": w,
        "without_chain_s": wo,
        "with_chain_calls_per_s": calls / w.median,
        "without_chain_calls_per_s": calls / wo.median,
        "ratio_with_over_without": ratio,
        "rows_verified": report.rows,
    })
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = Args::parse();
    let mut results = Vec::new();
    let plain = |o: erp_tools_core::DatabaseOptions| o.without_audit_chain_loses_tamper_evidence();
    let sqlite = (BenchDb::sqlite().await, BenchDb::sqlite_with(plain).await);
    results.push(measure("sqlite", sqlite.0, sqlite.1, &args).await);
    if let (Some(chained), Some(unchained)) = (
        BenchDb::postgres(None).await,
        BenchDb::postgres_with(plain).await,
    ) {
        results.push(measure("postgres", chained, unchained, &args).await);
    }
    emit_json(
        &json!({
            "callers": args.callers,
            "calls": args.calls,
            "rounds": args.rounds,
            "drafts": args.drafts,
            "results": results,
        }),
        args.json.as_deref(),
    );
}
