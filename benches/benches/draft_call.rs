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

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use erp_tools_benches::fixtures::{BenchDb, FloorShape, floor_draft};
use erp_tools_benches::tools::order_arguments;
use erp_tools_benches::{bench_registry, principal};
use erp_tools_core::{Outcome, ToolCall, ToolRuntime};

/// Lines per order.
const LINES: usize = 3;

fn draft_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
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
            let out = runtime
                .call(
                    &who_arc,
                    ToolCall {
                        agent_run_id: run.clone(),
                        tool_call_id: "check".into(),
                        name: "orders_create_order_draft".into(),
                        arguments: order_arguments(&next_ref(), LINES),
                    },
                )
                .await
                .expect("pipeline call");
            assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
            for shape in [
                FloorShape::OneCommit,
                FloorShape::PipelineShape,
                FloorShape::PipelineShapeAsyncAttempt,
            ] {
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
        group.bench_function("floor", |b| {
            b.to_async(&rt).iter(|| async move {
                let args = order_arguments(&next_ref(), LINES);
                black_box(
                    floor_draft(&db.db, FloorShape::OneCommit, who, run, "call-1", &args)
                        .await
                        .expect("floor"),
                )
            })
        });
        group.bench_function("floor_pipeline_shape", |b| {
            b.to_async(&rt).iter(|| async move {
                let args = order_arguments(&next_ref(), LINES);
                black_box(
                    floor_draft(&db.db, FloorShape::PipelineShape, who, run, "call-1", &args)
                        .await
                        .expect("floor"),
                )
            })
        });
        if name == "postgres" {
            group.bench_function("floor_pipeline_shape_async_attempt", |b| {
                b.to_async(&rt).iter(|| async move {
                    let args = order_arguments(&next_ref(), LINES);
                    black_box(
                        floor_draft(
                            &db.db,
                            FloorShape::PipelineShapeAsyncAttempt,
                            who,
                            run,
                            "call-1",
                            &args,
                        )
                        .await
                        .expect("floor"),
                    )
                })
            });
        }
        group.bench_function("erp_tools", |b| {
            b.to_async(&rt).iter(|| async move {
                let out = runtime
                    .call(
                        who_arc,
                        ToolCall {
                            agent_run_id: run.clone(),
                            tool_call_id: "call-1".into(),
                            name: "orders_create_order_draft".into(),
                            arguments: order_arguments(&next_ref(), LINES),
                        },
                    )
                    .await
                    .expect("pipeline call");
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
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    targets = draft_call
}
criterion_main!(benches);
