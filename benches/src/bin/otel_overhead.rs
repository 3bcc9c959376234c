//! What exporting traces costs a read call: the same `ToolRuntime::call` of a read tool
//! with the `otel` layer exporting every span to a live OTLP/HTTP receiver (a loopback
//! server in this process that reads each export and answers 200), and without it, in
//! the same run, interleaved (each round calls both, in alternating order, each timed on
//! its own). Both have the same log layer (`info`, written to a sink), as a deployment
//! logs either way; the OTLP meter provider is installed for the whole run, so both
//! record the OTLP metrics and the ratio is the cost of the spans.
//!
//!   cargo run --release -p erp-tools-benches --features otel --bin otel_overhead
//!
//! Prints the medians, the ratio on/off per body, and the receiver's count of exports.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::fixtures::BenchDb;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::{bench_registry, pipeline_call, principal};
use erp_tools_core::{Outcome, ToolRuntime};
use serde_json::json;
use tracing::Dispatch;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;

#[derive(Parser, Debug)]
#[command(about = "Read-call cost with spans exported over OTLP, against without")]
struct Args {
    /// Rounds (each calls both variants once per body).
    #[arg(long, default_value_t = 20000)]
    rounds: usize,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// A live OTLP/HTTP receiver: reads each request whole and answers 200; counts exports
/// and bytes.
fn receiver(exports: Arc<AtomicU64>, bytes: Arc<AtomicU64>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (exports, bytes) = (exports.clone(), bytes.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    exports.fetch_add(1, Ordering::Relaxed);
                    bytes.fetch_add(length as u64, Ordering::Relaxed);
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if reader.get_mut().write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn log_layer() -> impl tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync {
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::sink)
        .with_filter(tracing_subscriber::EnvFilter::new("info,rmcp=warn"))
}

fn main() {
    let args = Args::parse();
    let (exports, bytes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let addr = receiver(exports.clone(), bytes.clone());
    // SAFETY: set before any other thread of this program reads the environment (the
    // receiver's threads do not).
    unsafe {
        std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"));
        std::env::set_var("OTEL_BSP_SCHEDULE_DELAY", "200");
    }
    let (otel, guard) = erp_tools_core::telemetry::otel_layer().expect("the OTLP exporter");
    let off = Dispatch::new(tracing_subscriber::registry().with(log_layer()));
    let on = Dispatch::new(tracing_subscriber::registry().with(log_layer()).with(otel));

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let db = rt.block_on(BenchDb::sqlite());
    let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
    let who = Arc::new(principal(&["catalog:read"]));
    let arguments = json!({ "item_code": "BRG-0042" });
    let call = |dispatch: &Dispatch, tool: &str| {
        tracing::dispatcher::with_default(dispatch, || {
            let started = Instant::now();
            let out = rt.block_on(pipeline_call(
                &runtime,
                &who,
                "bench-run",
                "call-1",
                tool,
                arguments.clone(),
            ));
            let took = started.elapsed().as_secs_f64() * 1e6;
            assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
            took
        })
    };

    let mut result = serde_json::Map::new();
    for (body, tool) in [
        ("memory", "catalog_describe_item"),
        ("sqlite", "catalog_get_item"),
    ] {
        for _ in 0..args.rounds.min(500) {
            call(&off, tool);
            call(&on, tool);
        }
        let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
        for round in 0..args.rounds {
            if round % 2 == 0 {
                t_off.push(call(&off, tool));
                t_on.push(call(&on, tool));
            } else {
                t_on.push(call(&on, tool));
                t_off.push(call(&off, tool));
            }
        }
        let (s_off, s_on) = (
            Summary::of(&t_off).expect("rounds"),
            Summary::of(&t_on).expect("rounds"),
        );
        let ratio = s_on.median / s_off.median;
        eprintln!(
            "{body}: otel off {} µs, otel on {} µs, ratio {ratio:.3}",
            s_off.display(1),
            s_on.display(1)
        );
        result.insert(
            body.into(),
            json!({"otel_off_us": s_off, "otel_on_us": s_on, "ratio_on_off": ratio}),
        );
    }
    drop(on);
    drop(guard); // flushes the spans still queued
    let exports = exports.load(Ordering::Relaxed);
    assert!(exports > 0, "the receiver got the exported spans");
    result.insert("receiver_exports".into(), json!(exports));
    result.insert(
        "receiver_bytes".into(),
        json!(bytes.load(Ordering::Relaxed)),
    );
    result.insert("rounds".into(), json!(args.rounds));
    emit_json(&serde_json::Value::Object(result), args.json.as_deref());
}
