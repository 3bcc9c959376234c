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
use erp_tools_benches::fixtures::{
    BenchDb, FloorShape, audit_insert, floor_draft, now_text, unique_suffix,
};
use erp_tools_benches::plain::PlainServer;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::tools::{self, ItemArgs, order_arguments};
use erp_tools_benches::{
    DRAFT_VARIANTS, READ_FLOOR, READ_VARIANTS, bench_registry, connect_in_process, erp_server,
    mcp_call, pipeline_call, principal,
};
use erp_tools_core::{AuditEntry, Backend, Outcome, ToolContext, ToolRuntime};
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
    /// Rounds of the concurrent read throughput (each round runs every variant once).
    #[arg(long, default_value_t = 12)]
    concurrency_rounds: usize,
    /// MCP callers at once in the throughput measurement.
    #[arg(long, default_value_t = 64)]
    callers: usize,
    /// Calls per caller per round in the throughput measurement.
    #[arg(long, default_value_t = 40)]
    calls_per_caller: usize,
    /// Rounds of the read-latency-during-drafts measurement (each: reads alone, then reads
    /// while drafts run).
    #[arg(long, default_value_t = 10)]
    interference_rounds: usize,
    /// Read calls per phase of a round of the read-latency-during-drafts measurement.
    #[arg(long, default_value_t = 300)]
    interference_reads: usize,
    /// Lines per draft in the read-latency-during-drafts measurement.
    #[arg(long, default_value_t = 500)]
    interference_lines: usize,
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
        let mut names = READ_VARIANTS.to_vec();
        names.push(READ_FLOOR);
        let mut s = Series::new(&names);
        let n = names.len();
        for round in 0..rounds {
            for k in 0..n {
                let v = (round + k) % n;
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
                    4 => {
                        let a = ItemArgs {
                            item_code: "BRG-0042".into(),
                        };
                        let r = if body == "memory" {
                            tools::describe_item(&ctx, a).await
                        } else {
                            tools::get_item(&ctx, &read, a).await
                        };
                        r.expect("direct call");
                        let entry = AuditEntry::new(&who, "bench-run", "ok")
                            .tool(tool, "call-1")
                            .arguments(&args);
                        audit_insert(db.db.pool(), &entry, &now_text(), None, None)
                            .await
                            .expect("hand-written audit insert");
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
        let (a, b, c, d, e) = (
            s.median("a_direct"),
            s.median("b_pipeline"),
            s.median("c_mcp_erp"),
            s.median("d_mcp_rmcp"),
            s.median(READ_FLOOR),
        );
        eprintln!(
            "read/{body}: a {a:.2} µs, b {b:.1} µs, c {c:.1} µs, d {d:.1} µs, hand insert {e:.1} µs; \
             b-a {:.1} µs, c/d {:.2}, b/hand {:.2}",
            b - a,
            c / d,
            b / e
        );
        out.insert(
            body.into(),
            json!({
                "rounds": rounds,
                "us": s.summary(),
                "b_minus_a_us": b - a,
                "b_over_a": b / a,
                "c_over_d": c / d,
                "b_over_hand_insert": b / e,
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

/// Concurrent read throughput: `callers` MCP clients (one in-process connection each)
/// send `calls` `tools/call` requests each, to erp-tools, to bare rmcp, and to bare rmcp
/// whose tool does one hand-written audit insert per call; every round runs the three in
/// rotating order. Calls per second, per round.
async fn read_concurrency(rounds: usize, callers: usize, calls: usize) -> Value {
    let db = BenchDb::sqlite().await;
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let who = principal(&["catalog:read"]);
    let read = db.db.read_db();
    let names = ["erp_tools", "rmcp", "rmcp_hand_insert"];
    let mut clients: Vec<Vec<erp_tools_tests::mcp::Client>> = Vec::new();
    for v in names {
        let mut list = Vec::new();
        for _ in 0..callers {
            list.push(match v {
                "erp_tools" => connect_in_process(erp_server(runtime.clone(), who.clone())).await,
                "rmcp" => connect_in_process(PlainServer::new(read.clone(), 1)).await,
                _ => {
                    let server =
                        PlainServer::with_hand_audit(read.clone(), db.db.clone(), who.clone());
                    connect_in_process(server).await
                }
            });
        }
        clients.push(list);
    }
    let clients: Vec<Arc<Vec<erp_tools_tests::mcp::Client>>> =
        clients.into_iter().map(Arc::new).collect();
    let obj = json!({"item_code": "BRG-0042"})
        .as_object()
        .cloned()
        .expect("object");
    let mut out = serde_json::Map::new();
    for (body, tool) in [
        ("memory", "catalog_describe_item"),
        ("sqlite", "catalog_get_item"),
    ] {
        let mut s = Series::new(&names);
        for round in 0..rounds {
            for k in 0..names.len() {
                let v = (round + k) % names.len();
                let started = Instant::now();
                let mut tasks = Vec::new();
                for c in 0..callers {
                    let list = clients[v].clone();
                    let obj = obj.clone();
                    tasks.push(tokio::spawn(async move {
                        for _ in 0..calls {
                            let r = mcp_call(&list[c], tool, &obj).await;
                            assert_ne!(r.is_error, Some(true));
                        }
                    }));
                }
                for t in tasks {
                    t.await.expect("caller");
                }
                let secs = started.elapsed().as_secs_f64();
                s.times[v].push((callers * calls) as f64 / secs);
            }
        }
        let (e, r, h) = (
            s.median("erp_tools"),
            s.median("rmcp"),
            s.median("rmcp_hand_insert"),
        );
        eprintln!(
            "concurrent reads/{body}: erp-tools {e:.0}/s, rmcp {r:.0}/s, rmcp + hand insert {h:.0}/s; \
             erp/rmcp {:.2}, erp/hand {:.2}",
            e / r,
            e / h
        );
        out.insert(
            body.into(),
            json!({
                "rounds": rounds,
                "callers": callers,
                "calls_per_caller": calls,
                "calls_per_s": s.summary(),
                "erp_over_rmcp": e / r,
                "erp_over_hand_insert": e / h,
            }),
        );
    }
    Value::Object(out)
}

/// p99 latency of read calls (SQLite body, through the pipeline, one reader) with no draft
/// running, and while a writer sends drafts of `lines` lines back to back; each round
/// measures both phases, `reads` calls each.
async fn read_during_drafts(rounds: usize, reads: usize, lines: usize) -> Value {
    let db = BenchDb::sqlite().await;
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let reader = Arc::new(principal(&["catalog:read"]));
    let drafter = Arc::new(principal(&["orders:draft"]));
    let args = json!({"item_code": "BRG-0042"});
    let run = format!("interference-{}", unique_suffix());
    let mut alone = Vec::new();
    let mut during = Vec::new();
    let mut drafts = 0u64;
    let mut draft_us = Vec::new();
    for round in 0..rounds {
        for phase in [round % 2, (round + 1) % 2] {
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let writer = (phase == 1).then(|| {
                let runtime = runtime.clone();
                let drafter = drafter.clone();
                let stop = stop.clone();
                let run = run.clone();
                tokio::spawn(async move {
                    let mut times = Vec::new();
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let client_ref = format!("L-{}", unique_suffix());
                        let started = Instant::now();
                        let r = pipeline_call(
                            &runtime,
                            &drafter,
                            &run,
                            "call-d",
                            "orders_create_order_draft",
                            order_arguments(&client_ref, lines),
                        )
                        .await;
                        assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
                        times.push(elapsed_us(started));
                    }
                    times
                })
            });
            if writer.is_some() {
                // Let the first draft start.
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            let times = if phase == 1 { &mut during } else { &mut alone };
            for _ in 0..reads {
                let started = Instant::now();
                let r = pipeline_call(
                    &runtime,
                    &reader,
                    "bench-run",
                    "call-r",
                    "catalog_get_item",
                    args.clone(),
                )
                .await;
                assert_eq!(r.outcome, Outcome::Ok);
                times.push(elapsed_us(started));
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            if let Some(w) = writer {
                let t = w.await.expect("draft writer");
                drafts += t.len() as u64;
                draft_us.extend(t);
            }
        }
    }
    let p = |v: &[f64], q: f64| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        erp_tools_benches::stats::percentile_sorted(&v, q)
    };
    let (a99, d99) = (p(&alone, 99.0), p(&during, 99.0));
    eprintln!(
        "reads during {lines}-line drafts: p99 alone {a99:.0} µs, during {d99:.0} µs, ratio {:.2}; \
         {drafts} drafts, median {:.0} µs",
        d99 / a99,
        p(&draft_us, 50.0)
    );
    json!({
        "rounds": rounds,
        "reads_per_phase": reads,
        "lines": lines,
        "alone_us": Summary::of(&alone),
        "during_us": Summary::of(&during),
        "p99_alone_us": a99,
        "p99_during_us": d99,
        "p99_ratio": d99 / a99,
        "drafts": drafts,
        "draft_us": Summary::of(&draft_us),
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    let read = read_rounds(args.read_rounds).await;
    let concurrent =
        read_concurrency(args.concurrency_rounds, args.callers, args.calls_per_caller).await;
    let interference = read_during_drafts(
        args.interference_rounds,
        args.interference_reads,
        args.interference_lines,
    )
    .await;
    let sqlite = draft_rounds(&BenchDb::sqlite().await, args.sqlite_draft_rounds).await;
    let postgres = match BenchDb::postgres(None).await {
        Some(db) => draft_rounds(&db, args.pg_draft_rounds).await,
        None => json!({"skipped": "ERP_TOOLS_PG_URL not set"}),
    };
    let out = json!({
        "benchmark": "interleaved",
        "read": read,
        "concurrent_read": concurrent,
        "read_during_drafts": interference,
        "draft": { "sqlite": sqlite, "postgres": postgres },
    });
    emit_json(&out, args.json.as_deref());
}
