//! The key ratios of benchmarks 1 and 2 again, measured interleaved: each round calls
//! every variant once, in a rotating order, and times each call on its own. On a machine
//! shared with other work, load changes over seconds; criterion measures one variant
//! after the other, so a ratio of two criterion medians can carry that drift. Here every
//! variant sees the same load, and each ratio is a ratio of medians over the same rounds.
//!
//! Read variants (memory and SQLite bodies): direct, pipeline, MCP erp-tools, MCP rmcp.
//! Draft variants (SQLite, and PostgreSQL with `ERP_TOOLS_PG_URL`): floor (one commit),
//! the pipeline's statements by hand, the same with the attempt row committed
//! asynchronously or with the two final updates merged into one statement (PostgreSQL
//! only: two candidate fixes), and erp-tools.

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::fixtures::{BenchDb, FloorShape, floor_draft, unique_suffix};
use erp_tools_benches::plain::PlainServer;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::tools::{self, ItemArgs, order_arguments};
use erp_tools_benches::{
    DRAFT_VARIANTS, READ_VARIANTS, bench_registry, connect_in_process, erp_server, mcp_call,
    pipeline_call, principal,
};
use erp_tools_core::{Backend, Outcome, ToolContext, ToolRuntime};
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "Key ratios of benchmarks 1 and 2, measured interleaved")]
struct Args {
    /// Rounds of the read variants.
    #[arg(long, default_value_t = 10000)]
    read_rounds: usize,
    /// Rounds of the SQLite draft variants.
    #[arg(long, default_value_t = 4000)]
    sqlite_draft_rounds: usize,
    /// Rounds of the PostgreSQL draft variants.
    #[arg(long, default_value_t = 2000)]
    pg_draft_rounds: usize,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// Times of each variant, in µs, one per round.
struct Series {
    names: Vec<&'static str>,
    times: Vec<Vec<f64>>,
}

impl Series {
    fn new(names: &[&'static str]) -> Series {
        Series {
            names: names.to_vec(),
            times: vec![Vec::new(); names.len()],
        }
    }

    fn summary(&self) -> Value {
        let mut out = serde_json::Map::new();
        for (name, t) in self.names.iter().zip(&self.times) {
            out.insert((*name).into(), json!(Summary::of(t)));
        }
        Value::Object(out)
    }

    fn median(&self, name: &str) -> f64 {
        let i = self.names.iter().position(|n| *n == name).expect("variant");
        Summary::of(&self.times[i]).map_or(f64::NAN, |s| s.median)
    }
}

fn elapsed_us(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e6
}

async fn read_rounds(rounds: usize) -> Value {
    let db = BenchDb::sqlite().await;
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let who = principal(&["catalog:read"]);
    let who_arc = Arc::new(who.clone());
    let ctx = ToolContext::new(who_arc.clone(), "bench-run", "call-1", "catalog_get_item");
    let read = db.db.read_db();
    let erp = connect_in_process(erp_server(runtime.clone(), who.clone())).await;
    let plain = connect_in_process(PlainServer::new(read.clone(), 1)).await;
    let args = json!({"item_code": "BRG-0042"});
    let obj = args.as_object().cloned().expect("object");
    let mut out = serde_json::Map::new();
    for (body, tool) in [
        ("memory", "catalog_describe_item"),
        ("sqlite", "catalog_get_item"),
    ] {
        let mut s = Series::new(&READ_VARIANTS);
        for round in 0..rounds {
            for k in 0..4 {
                let v = (round + k) % 4;
                let started = Instant::now();
                match v {
                    0 => {
                        let a = ItemArgs {
                            item_code: "BRG-0042".into(),
                        };
                        let r = if body == "memory" {
                            tools::describe_item(&ctx, a).await
                        } else {
                            tools::get_item(&ctx, &read, a).await
                        };
                        r.expect("direct call");
                    }
                    1 => {
                        let r = pipeline_call(
                            &runtime,
                            &who_arc,
                            "bench-run",
                            "call-1",
                            tool,
                            args.clone(),
                        )
                        .await;
                        assert_eq!(r.outcome, Outcome::Ok);
                    }
                    _ => {
                        let client = if v == 2 { &erp } else { &plain };
                        let r = mcp_call(client, tool, &obj).await;
                        assert_ne!(r.is_error, Some(true));
                    }
                }
                s.times[v].push(elapsed_us(started));
            }
        }
        let (a, b, c, d) = (
            s.median("a_direct"),
            s.median("b_pipeline"),
            s.median("c_mcp_erp"),
            s.median("d_mcp_rmcp"),
        );
        eprintln!(
            "read/{body}: a {a:.2} µs, b {b:.1} µs, c {c:.1} µs, d {d:.1} µs; b-a {:.1} µs, c/d {:.2}",
            b - a,
            c / d
        );
        out.insert(
            body.into(),
            json!({
                "rounds": rounds,
                "us": s.summary(),
                "b_minus_a_us": b - a,
                "b_over_a": b / a,
                "c_over_d": c / d,
            }),
        );
    }
    Value::Object(out)
}

async fn draft_rounds(db: &BenchDb, rounds: usize) -> Value {
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let who = principal(&["orders:draft"]);
    let who_arc = Arc::new(who.clone());
    let run = format!("interleaved-{}", unique_suffix());
    let pg = db.backend() == Backend::Postgres;
    let names: &[&'static str] = if pg {
        &DRAFT_VARIANTS
    } else {
        &["floor", "floor_pipeline_shape", "erp_tools"]
    };
    let mut s = Series::new(names);
    let mut n = 0u64;
    for round in 0..rounds {
        for k in 0..names.len() {
            let v = (round + k) % names.len();
            n += 1;
            let args = order_arguments(&format!("R-{n}"), 3);
            let started = Instant::now();
            match names[v] {
                "erp_tools" => {
                    let draft = "orders_create_order_draft";
                    let r = pipeline_call(&runtime, &who_arc, &run, "call-1", draft, args).await;
                    assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
                }
                other => {
                    let shape = match other {
                        "floor" => FloorShape::OneCommit,
                        "floor_pipeline_shape" => FloorShape::PipelineShape,
                        "floor_pipeline_shape_merged_updates" => {
                            FloorShape::PipelineShapeMergedUpdates
                        }
                        "floor_overlapped_attempt_merged_updates" => FloorShape::Overlapped,
                        _ => FloorShape::PipelineShapeAsyncAttempt,
                    };
                    floor_draft(&db.db, shape, &who, &run, "call-1", &args)
                        .await
                        .expect("floor transaction");
                }
            }
            s.times[v].push(elapsed_us(started));
        }
    }
    let (orders, distinct, keys) = db.counts().await;
    assert_eq!((orders, distinct), (keys, keys), "one document per key");
    let floor = s.median("floor");
    let shape = s.median("floor_pipeline_shape");
    let erp = s.median("erp_tools");
    eprintln!(
        "draft/{}: floor {floor:.0} µs, shape {shape:.0} µs, erp-tools {erp:.0} µs; erp/floor {:.2}",
        if pg { "postgres" } else { "sqlite" },
        erp / floor
    );
    let mut out = json!({
        "rounds": rounds,
        "us": s.summary(),
        "erp_over_floor": erp / floor,
        "shape_over_floor": shape / floor,
        "erp_over_shape": erp / shape,
    });
    if pg {
        out["async_attempt_over_floor"] =
            json!(s.median("floor_pipeline_shape_async_attempt") / floor);
        out["merged_updates_over_floor"] =
            json!(s.median("floor_pipeline_shape_merged_updates") / floor);
        out["overlapped_over_floor"] =
            json!(s.median("floor_overlapped_attempt_merged_updates") / floor);
    }
    out
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    let read = read_rounds(args.read_rounds).await;
    let sqlite = draft_rounds(&BenchDb::sqlite().await, args.sqlite_draft_rounds).await;
    let postgres = match BenchDb::postgres(None).await {
        Some(db) => draft_rounds(&db, args.pg_draft_rounds).await,
        None => json!({"skipped": "ERP_TOOLS_PG_URL not set"}),
    };
    let out = json!({
        "benchmark": "interleaved",
        "read": read,
        "draft": { "sqlite": sqlite, "postgres": postgres },
    });
    emit_json(&out, args.json.as_deref());
}
