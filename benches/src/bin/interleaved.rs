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
use erp_tools_core::{AuditEntry, Backend, Outcome, ReadDb, ToolContext, ToolRuntime};
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
    /// Run only these parts (comma-separated: read, concurrent, interference, draft); all
    /// by default. With a profiler (`valgrind --tool=callgrind`) one part at a time.
    #[arg(long, value_delimiter = ',')]
    only: Vec<Part>,
    /// Only these variants of the read and throughput parts (comma-separated, as results
    /// name them: a_direct, b_pipeline, c_mcp_erp, d_mcp_rmcp, e_body_and_hand_insert;
    /// erp_tools, rmcp, rmcp_hand_insert, rmcp_group_commit_writer); all by default.
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// Only this read body in the read and throughput parts; both by default.
    #[arg(long, value_parser = ["memory", "sqlite"])]
    body: Option<String>,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// The parts of this benchmark, for `--only`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
enum Part {
    Read,
    Concurrent,
    Interference,
    Draft,
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

    /// The median of `name`, NaN if that variant was not run.
    fn median_or_nan(&self, name: &str) -> f64 {
        if self.names.contains(&name) {
            self.median(name)
        } else {
            f64::NAN
        }
    }

    fn median(&self, name: &str) -> f64 {
        let i = self.names.iter().position(|n| *n == name).expect("variant");
        Summary::of(&self.times[i]).map_or(f64::NAN, |s| s.median)
    }
}

fn elapsed_us(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e6
}

/// The variants of the throughput part.
const THROUGHPUT_VARIANTS: [&str; 4] = [
    "erp_tools",
    "rmcp",
    "rmcp_hand_insert",
    "rmcp_group_commit_writer",
];

/// `all`, less those not named in `wanted` (none named: all).
fn selected(all: &[&'static str], wanted: &[String]) -> Vec<&'static str> {
    all.iter()
        .copied()
        .filter(|n| wanted.is_empty() || wanted.iter().any(|w| w == n))
        .collect()
}

/// The read tool's bodies (in memory, SQLite) with its name for each, less the one
/// `only_body` leaves out.
fn read_bodies(only_body: Option<&str>) -> impl Iterator<Item = (&'static str, &'static str)> {
    [
        ("memory", "catalog_describe_item"),
        ("sqlite", "catalog_get_item"),
    ]
    .into_iter()
    .filter(move |(body, _)| only_body.is_none_or(|b| b == *body))
}

/// The read tool's function called directly, without the pipeline: its in-memory body
/// or its SQLite body.
async fn direct_read(ctx: &ToolContext, read: &ReadDb, memory: bool) {
    let a = ItemArgs {
        item_code: "BRG-0042".into(),
    };
    let r = if memory {
        tools::describe_item(ctx, a).await
    } else {
        tools::get_item(ctx, read, a).await
    };
    r.expect("direct call");
}

async fn read_rounds(rounds: usize, variants: &[String], only_body: Option<&str>) -> Value {
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
    for (body, tool) in read_bodies(only_body) {
        let mut all = READ_VARIANTS.to_vec();
        all.push(READ_FLOOR);
        let names = selected(&all, variants);
        if names.is_empty() {
            continue;
        }
        let mut s = Series::new(&names);
        let n = names.len();
        for round in 0..rounds {
            for k in 0..n {
                let v = (round + k) % n;
                let started = Instant::now();
                match names[v] {
                    "a_direct" => {
                        direct_read(&ctx, &read, body == "memory").await;
                    }
                    READ_FLOOR => {
                        direct_read(&ctx, &read, body == "memory").await;
                        let entry = AuditEntry::new(&who, "bench-run", "ok")
                            .tool(tool, "call-1")
                            .arguments(&args);
                        audit_insert(db.db.pool(), &entry, &now_text(), None, None)
                            .await
                            .expect("hand-written audit insert");
                    }
                    "b_pipeline" => {
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
                    name => {
                        let client = if name == "c_mcp_erp" { &erp } else { &plain };
                        let r = mcp_call(client, tool, &obj).await;
                        assert_ne!(r.is_error, Some(true));
                    }
                }
                s.times[v].push(elapsed_us(started));
            }
        }
        let (a, b, c, d, e) = (
            s.median_or_nan("a_direct"),
            s.median_or_nan("b_pipeline"),
            s.median_or_nan("c_mcp_erp"),
            s.median_or_nan("d_mcp_rmcp"),
            s.median_or_nan(READ_FLOOR),
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

/// `normal`: on SQLite, a second database committing with `synchronous = NORMAL`; its
/// `erp_tools_sync_normal` variant runs in the same rotation, so the cost of the default
/// `FULL` is a ratio measured in the same run.
async fn draft_rounds(db: &BenchDb, normal: Option<&BenchDb>, rounds: usize) -> Value {
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let normal_runtime = normal.map(|n| ToolRuntime::new(bench_registry(), n.db.clone()));
    let who = principal(&["orders:draft"]);
    let who_arc = Arc::new(who.clone());
    let run = format!("interleaved-{}", unique_suffix());
    let pg = db.backend() == Backend::Postgres;
    let names: &[&'static str] = if pg {
        &DRAFT_VARIANTS
    } else if normal.is_some() {
        &[
            "floor",
            "floor_pipeline_shape",
            "erp_tools",
            "erp_tools_sync_normal",
        ]
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
                "erp_tools_sync_normal" => {
                    let runtime = normal_runtime.as_ref().expect("the NORMAL database");
                    let draft = "orders_create_order_draft";
                    let r = pipeline_call(runtime, &who_arc, &run, "call-1", draft, args).await;
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
    if normal.is_some() {
        let relaxed = s.median("erp_tools_sync_normal");
        eprintln!(
            "draft/sqlite: synchronous FULL {erp:.0} µs, NORMAL {relaxed:.0} µs; FULL/NORMAL {:.2}",
            erp / relaxed
        );
        out["full_over_normal"] = json!(erp / relaxed);
    }
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
/// send `calls` `tools/call` requests each, to erp-tools, to bare rmcp, to bare rmcp
/// whose tool does one hand-written audit insert per call, and to bare rmcp whose tool
/// hands its finished row to erp-tools' group-commit writer and waits for it to be
/// durable (the writer without the rest of the framework); every round runs them in
/// rotating order. Calls per second, per round.
async fn read_concurrency(
    rounds: usize,
    callers: usize,
    calls: usize,
    variants: &[String],
    only_body: Option<&str>,
) -> Value {
    let db = BenchDb::sqlite().await;
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let who = principal(&["catalog:read"]);
    let read = db.db.read_db();
    let names = selected(&THROUGHPUT_VARIANTS, variants);
    if names.is_empty() {
        return json!({"skipped": "no variant of this part in --variants"});
    }
    let mut clients: Vec<Vec<erp_tools_tests::mcp::Client>> = Vec::new();
    for &v in &names {
        let mut list = Vec::new();
        for _ in 0..callers {
            list.push(match v {
                "erp_tools" => connect_in_process(erp_server(runtime.clone(), who.clone())).await,
                "rmcp" => connect_in_process(PlainServer::new(read.clone(), 1)).await,
                "rmcp_group_commit_writer" => {
                    let server = PlainServer::with_group_commit_audit(
                        read.clone(),
                        db.db.clone(),
                        who.clone(),
                    );
                    connect_in_process(server).await
                }
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
    for (body, tool) in read_bodies(only_body) {
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
        let (e, r, h, w) = (
            s.median_or_nan("erp_tools"),
            s.median_or_nan("rmcp"),
            s.median_or_nan("rmcp_hand_insert"),
            s.median_or_nan("rmcp_group_commit_writer"),
        );
        eprintln!(
            "concurrent reads/{body}: erp-tools {e:.0}/s, rmcp {r:.0}/s, rmcp + hand insert {h:.0}/s, \
             rmcp + the audit writer {w:.0}/s; erp/rmcp {:.2}, erp/hand {:.2}, \
             (rmcp + writer)/rmcp {:.2}, erp/(rmcp + writer) {:.2}",
            e / r,
            e / h,
            w / r,
            e / w
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
                "rmcp_writer_over_rmcp": w / r,
                "erp_over_rmcp_writer": e / w,
            }),
        );
    }
    Value::Object(out)
}

/// What runs beside the reader in one phase of [`read_during_drafts`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Load {
    /// Nothing.
    Alone,
    /// Drafts of `lines` lines, back to back, through the reader's own runtime and
    /// database.
    Drafts,
    /// The same drafts through a second runtime on a second, unrelated database (its own
    /// files, pools and audit writer): the same CPU and disk work, nothing of the
    /// reader's shared.
    OtherDatabase,
    /// One OS thread doing arithmetic, nothing else: one core's worth of CPU, no I/O, no
    /// database, no tokio.
    Cpu,
}

const LOADS: [Load; 4] = [Load::Alone, Load::Drafts, Load::OtherDatabase, Load::Cpu];

impl Load {
    fn key(self) -> &'static str {
        match self {
            Load::Alone => "alone",
            Load::Drafts => "drafts",
            Load::OtherDatabase => "drafts_other_database",
            Load::Cpu => "cpu_thread",
        }
    }
}

/// CPU time used so far by every thread of this process, in ns (the first field of each
/// `/proc/self/task/*/schedstat`). 0 where that is not readable.
fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Starts `load` and returns what stops it (and gives back the drafts' times, in µs).
fn start_load(
    load: Load,
    runtimes: (&ToolRuntime, &ToolRuntime),
    drafter: &Arc<erp_tools_core::Principal>,
    run: &str,
    lines: usize,
) -> (
    Arc<std::sync::atomic::AtomicBool>,
    Option<tokio::task::JoinHandle<Vec<f64>>>,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let handle = match load {
        Load::Alone => None,
        Load::Cpu => {
            let stop = stop.clone();
            let spin = std::thread::spawn(move || {
                let mut x = 0x9e37_79b9_7f4a_7c15u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                    }
                    std::hint::black_box(x);
                }
            });
            Some(tokio::task::spawn_blocking(move || {
                spin.join().expect("cpu thread");
                Vec::new()
            }))
        }
        Load::Drafts | Load::OtherDatabase => {
            let runtime = if load == Load::Drafts {
                runtimes.0.clone()
            } else {
                runtimes.1.clone()
            };
            let drafter = drafter.clone();
            let stop = stop.clone();
            let run = run.to_owned();
            Some(tokio::spawn(async move {
                let mut times = Vec::new();
                while !stop.load(Ordering::Relaxed) {
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
            }))
        }
    };
    (stop, handle)
}

/// p99 latency of read calls (SQLite body, through the pipeline, one reader) with nothing
/// else running, while drafts of `lines` lines run back to back on the same database,
/// while the same drafts run on an unrelated database, and while one thread only burns
/// CPU; each round runs the four phases in rotating order, `reads` calls each. The two
/// controls tell what the tail comes from: if drafts on another database (nothing of
/// the reader's shared) or a CPU-only thread give the same tail as drafts on the reader's
/// own database, the tail is the machine's cores, not the framework's sharing.
async fn read_during_drafts(rounds: usize, reads: usize, lines: usize) -> Value {
    let db = BenchDb::sqlite().await;
    let other = BenchDb::sqlite().await;
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let other_runtime = ToolRuntime::new(bench_registry(), other.db.clone());
    let reader = Arc::new(principal(&["catalog:read"]));
    let drafter = Arc::new(principal(&["orders:draft"]));
    let args = json!({"item_code": "BRG-0042"});
    let run = format!("interference-{}", unique_suffix());
    let mut reads_us: Vec<Vec<f64>> = vec![Vec::new(); LOADS.len()];
    let mut wall_s = [0f64; LOADS.len()];
    let mut cpu_s = [0f64; LOADS.len()];
    let mut draft_us = Vec::new();
    for round in 0..rounds {
        for k in 0..LOADS.len() {
            let v = (round + k) % LOADS.len();
            let load = LOADS[v];
            let (stop, handle) =
                start_load(load, (&runtime, &other_runtime), &drafter, &run, lines);
            if load != Load::Alone {
                // Let the load start.
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            let (cpu0, wall0) = (process_cpu_ns(), Instant::now());
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
                reads_us[v].push(elapsed_us(started));
            }
            wall_s[v] += wall0.elapsed().as_secs_f64();
            cpu_s[v] += process_cpu_ns().saturating_sub(cpu0) as f64 / 1e9;
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            if let Some(h) = handle {
                draft_us.extend(h.await.expect("load"));
            }
        }
    }
    let p = |v: &[f64], q: f64| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        erp_tools_benches::stats::percentile_sorted(&v, q)
    };
    let a99 = p(&reads_us[0], 99.0);
    let mut phases = serde_json::Map::new();
    let mut line = String::new();
    for (i, load) in LOADS.iter().enumerate() {
        let p99 = p(&reads_us[i], 99.0);
        let cores = cpu_s[i] / wall_s[i];
        line.push_str(&format!(
            "{}: p99 {p99:.0} µs ({:.2}×), median {:.0} µs, {cores:.2} cores busy; ",
            load.key(),
            p99 / a99,
            p(&reads_us[i], 50.0),
        ));
        phases.insert(
            load.key().into(),
            json!({
                "us": Summary::of(&reads_us[i]),
                "p99_us": p99,
                "p99_over_alone": p99 / a99,
                "process_cores_busy": cores,
            }),
        );
    }
    eprintln!(
        "reads beside {lines}-line drafts: {line}{} drafts, median {:.0} µs",
        draft_us.len(),
        p(&draft_us, 50.0)
    );
    json!({
        "rounds": rounds,
        "reads_per_phase": reads,
        "lines": lines,
        "phases": phases,
        "p99_alone_us": a99,
        "p99_during_us": p(&reads_us[1], 99.0),
        "p99_ratio": p(&reads_us[1], 99.0) / a99,
        "p99_ratio_other_database": p(&reads_us[2], 99.0) / a99,
        "p99_ratio_cpu_thread": p(&reads_us[3], 99.0) / a99,
        "drafts": draft_us.len(),
        "draft_us": Summary::of(&draft_us),
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    let known: Vec<&str> = READ_VARIANTS
        .iter()
        .chain([READ_FLOOR].iter())
        .chain(THROUGHPUT_VARIANTS.iter())
        .copied()
        .collect();
    if let Some(bad) = args.variants.iter().find(|v| !known.contains(&v.as_str())) {
        eprintln!("error: unknown variant `{bad}` in --variants; known: {known:?}");
        std::process::exit(2);
    }
    let runs = |part: Part| args.only.is_empty() || args.only.contains(&part);
    let skipped = || json!({"skipped": "not in --only"});
    let read = if runs(Part::Read) {
        read_rounds(args.read_rounds, &args.variants, args.body.as_deref()).await
    } else {
        skipped()
    };
    let concurrent = if runs(Part::Concurrent) {
        read_concurrency(
            args.concurrency_rounds,
            args.callers,
            args.calls_per_caller,
            &args.variants,
            args.body.as_deref(),
        )
        .await
    } else {
        skipped()
    };
    let interference = if runs(Part::Interference) {
        read_during_drafts(
            args.interference_rounds,
            args.interference_reads,
            args.interference_lines,
        )
        .await
    } else {
        skipped()
    };
    let (sqlite, postgres) = if runs(Part::Draft) {
        let normal = BenchDb::sqlite_synchronous_normal().await;
        let sqlite = draft_rounds(
            &BenchDb::sqlite().await,
            Some(&normal),
            args.sqlite_draft_rounds,
        )
        .await;
        let postgres = match BenchDb::postgres(None).await {
            Some(db) => draft_rounds(&db, None, args.pg_draft_rounds).await,
            None => json!({"skipped": "ERP_TOOLS_PG_URL not set"}),
        };
        (sqlite, postgres)
    } else {
        (skipped(), skipped())
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
