//! What keeping an agent run as a log costs (`Agent::run_log`): the same scripted runs
//! with and without the run log, in one process, per backend (PostgreSQL when
//! `ERP_TOOLS_PG_URL` is set), run in pairs: one run with the log, one without, one after
//! the other (which goes first alternates), so both of a pair see the same machine.
//!
//! Each run takes `--steps` model turns: tool calls alternating a read
//! (`catalog_get_item`) and a draft (`orders_create_order_draft`, its own `client_ref`),
//! then the answer. With the log, each turn stores the model's answer before its action
//! runs, with the previous action's outcome (one commit a step, not waiting for the disk,
//! on the run log's own connection: `store/relaxed.rs`), plus the run's row at start and
//! end. Reports the median time of a step with and without, and the checkpoint's share
//! of a step two ways: the median of the pairs' (with - without) / without, and (median
//! with - median without) / median without (the target is at most 0.10). On a shared
//! machine whose disk stalls now and then, the pairs' median is the steadier of the two:
//! a stall spans both runs of a pair or neither.

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::fixtures::BenchDb;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::tools::order_arguments;
use erp_tools_benches::{bench_registry, principal};
use erp_tools_core::agent::{Agent, ModelAction, Policy, RunLog, RunRequest, ScriptedModel};
use erp_tools_core::{Database, Principal, ToolRuntime};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "The cost of keeping agent runs as a log, per step")]
struct Args {
    /// Pairs of runs per round.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Model turns per run (the last one answers).
    #[arg(long, default_value_t = 9)]
    steps: usize,
    /// Rounds (after one to warm up).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// An agent on `db`, keeping its runs in the run log if `logged`.
fn agent(db: &Database, logged: bool, args: &Args) -> Agent {
    let runtime = ToolRuntime::new(bench_registry(), db.clone());
    // The same read in every other step is the point here, not a stuck model.
    let agent = Agent::new(runtime, Policy::new())
        .expect("policy")
        .max_repeats(args.steps as u32)
        .max_steps(args.steps as u32 + 1);
    if logged {
        agent.run_log(RunLog::new(db.clone()))
    } else {
        agent
    }
}

/// One scripted run as `run`; the time of a step, in seconds.
async fn one_run(agent: &Agent, who: &Arc<Principal>, run: String, steps: usize) -> f64 {
    let mut actions: Vec<ModelAction> = (1..steps)
        .map(|i| {
            if i % 2 == 1 {
                ModelAction::tool_call("catalog_get_item", json!({"item_code": "BRG-0042"}))
            } else {
                let client_ref = format!("{run}-{i}");
                ModelAction::tool_call("orders_create_order_draft", order_arguments(&client_ref, 3))
            }
        })
        .collect();
    actions.push(ModelAction::answer("done"));
    let mut model = ScriptedModel::new(actions);
    let started = Instant::now();
    let out = agent
        .run_with(who, &mut model, RunRequest::new("bench").run_id(run))
        .await;
    let took = started.elapsed().as_secs_f64();
    assert_eq!(out.status.as_str(), "done", "{:?}", out.status);
    took / steps as f64
}

/// One round: `runs` pairs of runs; per pair, the time of a step with the log and without.
async fn round(db: &Database, args: &Args, round: usize) -> Vec<(f64, f64)> {
    let (logged, unlogged) = (agent(db, true, args), agent(db, false, args));
    let who = Arc::new(principal(&["catalog:read", "orders:draft"]));
    let mut pairs = Vec::new();
    for r in 0..args.runs {
        let run = |kind: &str| format!("log-bench-{kind}-{round}-{r}");
        let (with, without) = if (round + r).is_multiple_of(2) {
            let with = one_run(&logged, &who, run("with"), args.steps).await;
            (
                with,
                one_run(&unlogged, &who, run("without"), args.steps).await,
            )
        } else {
            let without = one_run(&unlogged, &who, run("without"), args.steps).await;
            (
                one_run(&logged, &who, run("with"), args.steps).await,
                without,
            )
        };
        pairs.push((with, without));
    }
    pairs
}

async fn measure(name: &str, bench: BenchDb, args: &Args) -> serde_json::Value {
    let db = &bench.db;
    round(db, args, 0).await;
    let mut pairs = Vec::new();
    for r in 1..=args.rounds {
        pairs.extend(round(db, args, r).await);
    }
    let with: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let without: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let shares: Vec<f64> = pairs.iter().map(|(w, wo)| (w - wo) / wo).collect();
    let (w, wo, paired) = (
        Summary::of(&with).expect("runs"),
        Summary::of(&without).expect("runs"),
        Summary::of(&shares).expect("runs"),
    );
    let share = (w.median - wo.median) / wo.median;
    eprintln!(
        "{name}: a step with the run log {:.3} ms, without {:.3} ms; checkpoint share \
         {:.3} (median of {} pairs), {share:.3} (of the medians)",
        w.median * 1e3,
        wo.median * 1e3,
        paired.median,
        pairs.len()
    );
    json!({
        "backend": name,
        "step_with_log_s": w,
        "step_without_log_s": wo,
        "checkpoint_share_of_step": share,
        "checkpoint_share_of_step_paired": paired,
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
