//! Benchmark 4: a concurrency storm on PostgreSQL.
//!
//! `--agents` concurrent agents (default 64), each its own agent run, each sending
//! `--calls` draft calls (default 200) through `ToolRuntime::call`, of which `--retry-pct`
//! percent (default 10) are exact retries: half of them sent while the original is still
//! in flight (a client that timed out and retried at once), half resent later. Reports
//! throughput and p50/p99 latency per repetition, and proves exactly-once: the number of
//! documents equals the number of distinct keys sent, equals the number of key rows, and
//! every retry came back `replayed`.
//!
//! Needs `ERP_TOOLS_PG_URL`; without it prints a skip note and exits 0. Each repetition
//! runs in a fresh schema that is dropped afterwards.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use erp_tools_benches::fixtures::{BenchDb, unique_suffix};
use erp_tools_benches::stats::{Summary, emit_json, percentile_sorted};
use erp_tools_benches::tools::order_arguments;
use erp_tools_benches::{bench_registry, principal};
use erp_tools_core::{Outcome, Principal, ToolCall, ToolRuntime};
use serde::Serialize;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "Concurrency storm of draft calls on PostgreSQL")]
struct Args {
    /// Concurrent agents.
    #[arg(long, default_value_t = 64)]
    agents: usize,
    /// Draft calls per agent (retries included).
    #[arg(long, default_value_t = 200)]
    calls: usize,
    /// Percentage of the calls that are exact retries.
    #[arg(long, default_value_t = 10)]
    retry_pct: usize,
    /// Lines per order.
    #[arg(long, default_value_t = 3)]
    lines: usize,
    /// Repetitions (each in a fresh schema).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Write pool size; the framework's default (10) when not given.
    #[arg(long)]
    pool: Option<u32>,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// What one agent does, in order.
#[derive(Clone, Debug)]
enum Step {
    /// A new draft.
    New(usize),
    /// A new draft and, at the same time, an exact retry of it (two calls).
    NewWithInFlightRetry(usize),
    /// An exact retry of an earlier draft, sent after it completed.
    LateRetry(usize),
}

/// A small deterministic generator (xorshift64*), so every run sends the same plan.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The plan of one agent: `calls` calls, `retries` of them retries (half in flight, half
/// late). Returns the steps and the number of distinct drafts.
fn plan(agent: usize, calls: usize, retries: usize) -> (Vec<Step>, usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (agent as u64 + 1));
    let new = calls - retries;
    let in_flight = retries / 2;
    let late = retries - in_flight;
    let mut in_flight_at = std::collections::BTreeSet::new();
    while in_flight_at.len() < in_flight.min(new) {
        in_flight_at.insert(rng.below(new));
    }
    let mut steps: Vec<Step> = (0..new)
        .map(|i| {
            if in_flight_at.contains(&i) {
                Step::NewWithInFlightRetry(i)
            } else {
                Step::New(i)
            }
        })
        .collect();
    for _ in 0..late {
        // After at least one new draft; retry one that was sent before that point.
        let at = 1 + rng.below(steps.len());
        let sent_before: Vec<usize> = steps[..at]
            .iter()
            .filter_map(|s| match s {
                Step::New(i) | Step::NewWithInFlightRetry(i) => Some(*i),
                Step::LateRetry(_) => None,
            })
            .collect();
        let target = sent_before[rng.below(sent_before.len())];
        steps.insert(at, Step::LateRetry(target));
    }
    (steps, new)
}

#[derive(Default)]
struct AgentResult {
    latencies_us: Vec<f64>,
    ok: usize,
    replayed: usize,
    other: Vec<String>,
}

async fn call(
    runtime: &ToolRuntime,
    who: &Arc<Principal>,
    run: &str,
    client_ref: &str,
    lines: usize,
    result: &mut AgentResult,
) {
    let started = Instant::now();
    let out = runtime
        .call(
            who,
            ToolCall {
                agent_run_id: run.to_string(),
                tool_call_id: format!("call-{client_ref}"),
                name: "orders_create_order_draft".into(),
                arguments: order_arguments(client_ref, lines),
            },
        )
        .await;
    result
        .latencies_us
        .push(started.elapsed().as_secs_f64() * 1e6);
    match out {
        Ok(o) if o.outcome == Outcome::Ok => result.ok += 1,
        Ok(o) if o.outcome == Outcome::Replayed => result.replayed += 1,
        Ok(o) => result.other.push(o.text),
        Err(e) => result.other.push(e.to_string()),
    }
}

async fn agent(
    runtime: ToolRuntime,
    who: Arc<Principal>,
    run: String,
    steps: Vec<Step>,
    lines: usize,
) -> AgentResult {
    let mut result = AgentResult::default();
    for step in steps {
        match step {
            Step::New(i) | Step::LateRetry(i) => {
                let r = format!("R-{i}");
                call(&runtime, &who, &run, &r, lines, &mut result).await;
            }
            Step::NewWithInFlightRetry(i) => {
                let r = format!("R-{i}");
                let mut second = AgentResult::default();
                tokio::join!(
                    call(&runtime, &who, &run, &r, lines, &mut result),
                    call(&runtime, &who, &run, &r, lines, &mut second),
                );
                result.latencies_us.extend(second.latencies_us);
                result.ok += second.ok;
                result.replayed += second.replayed;
                result.other.extend(second.other);
            }
        }
    }
    result
}

#[derive(Serialize)]
struct Rep {
    calls: usize,
    distinct_keys_sent: usize,
    seconds: f64,
    throughput_calls_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    ok: usize,
    replayed: usize,
    errors: usize,
    documents: i64,
    distinct_document_numbers: i64,
    key_rows: i64,
    exactly_once: bool,
}

async fn storm(args: &Args) -> Option<Rep> {
    let db = BenchDb::postgres(args.pool).await?;
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    // Open the pool's connections before the clock starts.
    let pool_size = args.pool.unwrap_or(10) as usize;
    let warm = futures::future::join_all((0..pool_size).map(|_| db.db.pool().acquire())).await;
    drop(warm);

    let retries = args.calls * args.retry_pct / 100;
    let who = Arc::new(principal(&["orders:draft"]));
    let prefix = unique_suffix();
    let mut distinct = 0;
    let mut tasks = Vec::new();
    let started = Instant::now();
    for a in 0..args.agents {
        let (steps, new) = plan(a, args.calls, retries);
        distinct += new;
        tasks.push(tokio::spawn(agent(
            runtime.clone(),
            who.clone(),
            format!("storm-{prefix}-a{a}"),
            steps,
            args.lines,
        )));
    }
    let mut all = AgentResult::default();
    for t in tasks {
        let r = t.await.expect("agent task");
        all.latencies_us.extend(r.latencies_us);
        all.ok += r.ok;
        all.replayed += r.replayed;
        all.other.extend(r.other);
    }
    let seconds = started.elapsed().as_secs_f64();
    let (documents, distinct_numbers, key_rows) = db.counts().await;
    for e in all.other.iter().take(3) {
        eprintln!("unexpected outcome: {e}");
    }
    let mut lat = all.latencies_us.clone();
    lat.sort_by(f64::total_cmp);
    let calls = lat.len();
    let exactly_once = documents as usize == distinct
        && distinct_numbers as usize == distinct
        && key_rows as usize == distinct
        && all.ok == distinct
        && all.replayed == calls - distinct
        && all.other.is_empty();
    db.db.close().await;
    Some(Rep {
        calls,
        distinct_keys_sent: distinct,
        seconds,
        throughput_calls_per_s: calls as f64 / seconds,
        p50_ms: percentile_sorted(&lat, 50.0) / 1000.0,
        p99_ms: percentile_sorted(&lat, 99.0) / 1000.0,
        max_ms: lat.last().copied().unwrap_or(0.0) / 1000.0,
        ok: all.ok,
        replayed: all.replayed,
        errors: all.other.len(),
        documents,
        distinct_document_numbers: distinct_numbers,
        key_rows,
        exactly_once,
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.calls == 0 || args.agents == 0 || args.retry_pct > 50 {
        eprintln!("error: --agents and --calls must be positive and --retry-pct at most 50");
        return std::process::ExitCode::FAILURE;
    }
    let mut reps = Vec::new();
    for i in 0..args.reps {
        let Some(rep) = storm(&args).await else {
            let skipped =
                json!({"benchmark": "concurrency", "skipped": "ERP_TOOLS_PG_URL not set"});
            emit_json(&skipped, args.json.as_deref());
            return std::process::ExitCode::SUCCESS;
        };
        eprintln!(
            "rep {}: {} calls in {:.2} s = {:.0} calls/s, p50 {:.2} ms, p99 {:.2} ms, exactly once: {}",
            i + 1,
            rep.calls,
            rep.seconds,
            rep.throughput_calls_per_s,
            rep.p50_ms,
            rep.p99_ms,
            rep.exactly_once
        );
        reps.push(rep);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let pick = |f: fn(&Rep) -> f64| Summary::of(&reps.iter().map(f).collect::<Vec<_>>());
    let all_once = reps.iter().all(|r| r.exactly_once);
    let out = json!({
        "benchmark": "concurrency",
        "agents": args.agents,
        "calls_per_agent": args.calls,
        "retry_pct": args.retry_pct,
        "lines": args.lines,
        "pool": args.pool.unwrap_or(10),
        "reps": reps,
        "throughput_calls_per_s": pick(|r| r.throughput_calls_per_s),
        "p50_ms": pick(|r| r.p50_ms),
        "p99_ms": pick(|r| r.p99_ms),
        "exactly_once_every_rep": all_once,
    });
    emit_json(&out, args.json.as_deref());
    if all_once {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!("error: a document was written twice or a retry was not replayed");
        std::process::ExitCode::FAILURE
    }
}
