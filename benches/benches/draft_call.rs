//! Benchmark 2: a draft-tool call (an order with 3 lines) on SQLite and on PostgreSQL.
//!
//! - `floor`: a hand-written transaction doing the same inserts (document + lines +
//!   idempotency key row + audit row) with one commit;
//! - `floor_pipeline_shape`: the statements the pipeline runs, written by hand (audit
//!   `attempt` row committed on its own first; key claimed first, completed after the
//!   handler; audit row updated in the transaction), to separate the cost of that shape
//!   from the framework's own CPU work;
//! - `floor_pipeline_shape_async_attempt` (PostgreSQL only): the same, with the `attempt`
//!   row committed without waiting for the WAL flush, to measure that possible fix;
//! - `erp_tools`: `ToolRuntime::call` (scopes, strict validation, canonical hash,
//!   claim, handler, audit, commit).
//!
//! Every iteration writes a new draft (a fresh `client_ref`). PostgreSQL runs only when
//! `ERP_TOOLS_PG_URL` is set, in a schema of its own that is dropped afterwards.

mod harness;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use erp_tools_benches::fixtures::{BenchDb, FloorShape, floor_draft};
use erp_tools_benches::tools::order_arguments;
use erp_tools_benches::{bench_registry, pipeline_call, principal};
use erp_tools_core::{Outcome, ToolRuntime};

/// Lines per order.
const LINES: usize = 3;

/// The draft tool measured.
const DRAFT: &str = "orders_create_order_draft";

/// The hand-written transactions timed, by benchmark name.
const FLOORS: [(&str, FloorShape); 3] = [
    ("floor", FloorShape::OneCommit),
    ("floor_pipeline_shape", FloorShape::PipelineShape),
    (
        "floor_pipeline_shape_async_attempt",
        FloorShape::PipelineShapeAsyncAttempt,
    ),
];

fn draft_call(c: &mut Criterion) {
    let rt = harness::runtime();
    let mut backends = vec![("sqlite", Some(rt.block_on(BenchDb::sqlite())))];
    backends.push(("postgres", rt.block_on(BenchDb::postgres(None))));
    let who = principal(&["orders:draft"]);
    let who_arc = Arc::new(who.clone());
    let seq = AtomicU64::new(0);

    for (name, db) in backends {
        let Some(db) = db else {
            continue;
        };
        let runtime = ToolRuntime::new(bench_registry(), db.db.clone());
        let run = format!("bench-{}", erp_tools_benches::fixtures::unique_suffix());
        let next_ref = || format!("R-{}", seq.fetch_add(1, Ordering::Relaxed));

        // Each path writes a draft before it is timed.
        rt.block_on(async {
            let args = order_arguments(&next_ref(), LINES);
            let out = pipeline_call(&runtime, &who_arc, &run, "check", DRAFT, args).await;
            assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
            for (_, shape) in FLOORS {
                floor_draft(
                    &db.db,
                    shape,
                    &who,
                    &run,
                    "check",
                    &order_arguments(&next_ref(), LINES),
                )
                .await
                .expect("floor transaction");
            }
            let (orders, _, keys) = db.counts().await;
            assert_eq!((orders, keys), (4, 4));
        });

        let (runtime, who, who_arc, run, db, next_ref) =
            (&runtime, &who, &who_arc, &run, &db, &next_ref);
        let mut group = c.benchmark_group(format!("draft_call/{name}"));
        if name == "postgres" {
            group
                .sample_size(30)
                .measurement_time(Duration::from_secs(10));
        }
        for (floor, shape) in FLOORS {
            // On SQLite the asynchronous attempt commit is the pipeline shape itself.
            if shape == FloorShape::PipelineShapeAsyncAttempt && name != "postgres" {
                continue;
            }
            group.bench_function(floor, |b| {
                b.to_async(&rt).iter(|| async move {
                    let args = order_arguments(&next_ref(), LINES);
                    black_box(
                        floor_draft(&db.db, shape, who, run, "call-1", &args)
                            .await
                            .expect("floor"),
                    )
                })
            });
        }
        group.bench_function("erp_tools", |b| {
            b.to_async(&rt).iter(|| async move {
                let args = order_arguments(&next_ref(), LINES);
                let out = pipeline_call(runtime, who_arc, run, "call-1", DRAFT, args).await;
                assert_eq!(out.outcome, Outcome::Ok);
                black_box(out)
            })
        });
        group.finish();
        let (orders, distinct, keys) = rt.block_on(db.counts());
        assert_eq!(orders, keys, "every draft has exactly one key row");
        assert_eq!(orders, distinct, "no order was written twice");
    }
}

criterion_group! {
    name = benches;
    config = harness::config(50, 6);
    targets = draft_call
}
criterion_main!(benches);
