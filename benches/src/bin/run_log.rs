//! What keeping an agent run as a log costs (`Agent::run_log`): the same scripted runs
//! with and without the run log, in one process, rounds interleaved (with, without,
//! without, with, ...), per backend (PostgreSQL when `ERP_TOOLS_PG_URL` is set).
//!
//! Each run takes `--steps` model turns: tool calls alternating a read
//! (`catalog_get_item`) and a draft (`orders_create_order_draft`, its own `client_ref`),
//! then the answer. With the log, each turn stores the model's answer before its action
//! runs, with the previous action's outcome (one commit a step, not waiting for the disk:
//! `store/relaxed.rs`), plus the run's row at start and end. Reports the median time of
//! a step with and without, and the checkpoint's share of a step: (with - without) /
//! without (the target is at most 0.10).

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::fixtures::BenchDb;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::tools::order_arguments;
use erp_tools_benches::{bench_registry, principal};
use erp_tools_core::agent::{Agent, ModelAction, Policy, RunLog, RunRequest, ScriptedModel};
use erp_tools_core::{Database, ToolRuntime};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "The cost of keeping agent runs as a log, per step")]
struct Args {
    /// Runs per round.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Model turns per run (the last one answers).
    #[arg(long, default_value_t = 9)]
    steps: usize,
    /// Rounds per variant (interleaved).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// One round: `runs` runs, one after the other; the median time of a step, in seconds.
async fn round(db: &Database, logged: bool, args: &Args, round: usize) -> f64 {
    let runtime = ToolRuntime::new(bench_registry(), db.clone());
    // The same read in every other step is the point here, not a stuck model.
    let mut agent = Agent::new(runtime, Policy::new())
        .expect("policy")
        .max_repeats(args.steps as u32)
        .max_steps(args.steps as u32 + 1);
    if logged {
        agent = agent.run_log(RunLog::new(db.clone()));
    }
    let who = Arc::new(principal(&["catalog:read", "orders:draft"]));
    let mut per_step = Vec::new();
    for r in 0..args.runs {
        let run = format!("log-bench-{logged}-{round}-{r}");
        let mut actions: Vec<ModelAction> = (1..args.steps)
            .map(|i| {
                if i % 2 == 1 {
                    ModelAction::tool_call("catalog_get_item", json!({"item_code": "BRG-0042"}))
                } else {
                    let client_ref = format!("{run}-{i}");
                    ModelAction::tool_call(
                        "orders_create_order_draft",
                        order_arguments(&client_ref, 3),
                    )
                }
            })
            .collect();
        actions.push(ModelAction::answer("done"));
        let mut model = ScriptedModel::new(actions);
        let started = Instant::now();
        let out = agent
            .run_with(&who, &mut model, RunRequest::new("bench").run_id(run))
            .await;
        let took = started.elapsed().as_secs_f64();
        assert_eq!(out.status.as_str(), "done", "{:?}", out.status);
        per_step.push(took / args.steps as f64);
    }
    Summary::of(&per_step).expect("runs").median
}

async fn measure(name: &str, bench: BenchDb, args: &Args) -> serde_json::Value {
    let db = &bench.db;
    round(db, true, args, 0).await;
    round(db, false, args, 0).await;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for r in 1..=args.rounds {
        if r % 2 == 1 {
            with.push(round(db, true, args, r).await);
            without.push(round(db, false, args, r).await);
        } else {
            without.push(round(db, false, args, r).await);
            with.push(round(db, true, args, r).await);
        }
    }
    let (w, wo) = (
        Summary::of(&with).expect("rounds"),
        Summary::of(&without).expect("rounds"),
    );
    let share = (w.median - wo.median) / wo.median;
    eprintln!(
        "{name}: a step with the run log {} ms, without {} ms; checkpoint share {share:.3}",
        w.median * 1e3,
        wo.median * 1e3
    );
    json!({
        "backend": name,
        "step_with_log_s": w,
        "step_without_log_s": wo,
        "checkpoint_share_of_step": share,
    })
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = Args::parse();
    let mut results = vec![measure("sqlite", BenchDb::sqlite().await, &args).await];
    if let Some(pg) = BenchDb::postgres(None).await {
        results.push(measure("postgres", pg, &args).await);
    }
    emit_json(
        &json!({
            "runs": args.runs,
            "steps": args.steps,
            "rounds": args.rounds,
            "results": results,
        }),
        args.json.as_deref(),
    );
}
