//! Benchmark 1: read-tool call overhead.
//!
//! The same handler body, called
//! (a) `direct`: the `#[erp_tool]` function called as a plain async fn;
//! (b) `pipeline`: through `ToolRuntime::call` (scopes, strict validation, audit);
//! (c) `mcp_erp`: as an MCP `tools/call` to the erp-tools server over an in-process pipe;
//! (d) `mcp_rmcp`: as an MCP `tools/call` to a plain `rmcp` `#[tool]` server, same pipe.
//!
//! Two bodies: `memory` (a static-table lookup, so the framework is all that is measured)
//! and `sqlite` (one indexed `SELECT` on the read pool). The group `read_stages` times
//! the pipeline's stages one by one, to show where the added time goes.

mod harness;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use erp_tools_benches::batch_audit::AuditBatcher;
use erp_tools_benches::fixtures::{ATTEMPT, BenchDb};
use erp_tools_benches::plain::PlainServer;
use erp_tools_benches::stages::{record_attempt, record_outcome_ok};
use erp_tools_benches::tools::{self, ItemArgs};
use erp_tools_benches::{
    bench_registry, connect_in_process, erp_server, mcp_call, pipeline_call, principal,
};
use erp_tools_core::{AuditEntry, Outcome, Principal, Target, ToolContext, ToolRuntime};
use rmcp::model::JsonObject;
use serde_json::{Value, json};

fn arguments() -> Value {
    json!({ "item_code": "BRG-0042" })
}

fn read_call(c: &mut Criterion) {
    let rt = harness::runtime();
    let db = rt.block_on(BenchDb::sqlite());
    let registry = bench_registry();
    let runtime = ToolRuntime::new(registry.clone(), db.db.clone());
    let who = principal(&["catalog:read"]);
    let who_arc = Arc::new(who.clone());
    let ctx = ToolContext::new(who_arc.clone(), "bench-run", "call-1", "catalog_get_item");
    let read = db.db.read_db();
    let (erp_client, plain_client) = rt.block_on(async {
        (
            connect_in_process(erp_server(runtime.clone(), who.clone())).await,
            connect_in_process(PlainServer::new(read.clone(), 1)).await,
        )
    });
    let args_obj: JsonObject = arguments().as_object().cloned().expect("object");

    for (body, tool) in [
        ("memory", "catalog_describe_item"),
        ("sqlite", "catalog_get_item"),
    ] {
        // Every path must return the same item before it is timed.
        rt.block_on(async {
            let out =
                pipeline_call(&runtime, &who_arc, "bench-run", "check", tool, arguments()).await;
            assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
            assert_eq!(out.structured["name"], "Plastic container 500 ml");
            for client in [&erp_client, &plain_client] {
                let r = mcp_call(client, tool, &args_obj).await;
                assert_ne!(r.is_error, Some(true), "{r:?}");
                let structured = r.structured_content.expect("structured content");
                assert_eq!(structured["name"], "Plastic container 500 ml");
            }
        });

        let (runtime, who_arc, ctx, read, args_obj) = (&runtime, &who_arc, &ctx, &read, &args_obj);
        let (erp_client, plain_client) = (&erp_client, &plain_client);
        let mut group = c.benchmark_group(format!("read_call/{body}"));
        group.bench_function("a_direct", |b| {
            b.to_async(&rt).iter(|| async move {
                let args = ItemArgs {
                    item_code: "BRG-0042".into(),
                };
                let out = match body {
                    "memory" => tools::describe_item(ctx, args).await,
                    _ => tools::get_item(ctx, read, args).await,
                };
                black_box(out.expect("direct call"))
            })
        });
        group.bench_function("b_pipeline", |b| {
            b.to_async(&rt).iter(|| async move {
                let out = pipeline_call(runtime, who_arc, "bench-run", "call-1", tool, arguments());
                black_box(out.await)
            })
        });
        for (name, client) in [("c_mcp_erp", erp_client), ("d_mcp_rmcp", plain_client)] {
            group.bench_function(name, |b| {
                b.to_async(&rt)
                    .iter(|| async move { black_box(mcp_call(client, tool, args_obj).await) })
            });
        }
        group.finish();
    }

    // The pipeline's stages, one by one (memory body: no handler I/O).
    let tool = registry.get("catalog_describe_item").expect("registered");
    // The audit row of a `catalog_describe_item` call, as the pipeline builds it.
    let row = |who: &Principal, outcome: &'static str| {
        AuditEntry::new(who, "bench-run", outcome)
            .tool("catalog_describe_item", "call-1")
            .arguments(&arguments())
    };
    let entry = row(&who, ATTEMPT);
    let audit_id = rt
        .block_on(record_attempt(&db.db, &entry))
        .expect("attempt row");
    let view = rt
        .block_on(tools::memory_body("BRG-0042"))
        .expect("memory body");
    let (db, entry, who) = (&db, &entry, &who);
    let mut group = c.benchmark_group("read_stages");
    group.bench_function("validate_arguments", |b| {
        let args = arguments();
        b.iter(|| black_box(tool.validate(&args)))
    });
    group.bench_function("audit_entry_build", |b| {
        b.iter(|| black_box(row(who, ATTEMPT)))
    });
    group.bench_function("audit_attempt_insert", |b| {
        b.to_async(&rt)
            .iter(|| async move { black_box(record_attempt(&db.db, entry).await.expect("insert")) })
    });
    group.bench_function("audit_outcome_update", |b| {
        b.to_async(&rt)
            .iter(|| async move { record_outcome_ok(&db.db, audit_id).await.expect("update") })
    });
    // The audit pair by hand around the same body: what the pipeline adds, minus its
    // own CPU work.
    group.bench_function("attempt_body_outcome_by_hand", |b| {
        b.to_async(&rt).iter(|| async move {
            let id = record_attempt(&db.db, entry).await.expect("insert");
            let out = tools::memory_body("BRG-0042").await.expect("body");
            record_outcome_ok(&db.db, id).await.expect("update");
            black_box(out)
        })
    });
    // A possible fix: the row handed to a background writer that commits in batches.
    let (batcher_handle, writer) = rt.block_on(async { AuditBatcher::start(db.db.clone()) });
    let batcher = &batcher_handle;
    group.bench_function("body_with_batched_audit_row", |b| {
        b.to_async(&rt).iter(|| async move {
            let out = tools::memory_body("BRG-0042").await.expect("body");
            batcher.record(row(who, "ok")).await;
            black_box(out)
        })
    });
    // The call-path part of that fix alone: build the row and hand it over (the
    // receiving task drops it), i.e. the cost while the writer keeps up.
    let (queue, mut drain) = tokio::sync::mpsc::channel::<AuditEntry>(4096);
    rt.spawn(async move { while drain.recv().await.is_some() {} });
    let queue = &queue;
    group.bench_function("body_with_audit_row_enqueued", |b| {
        b.to_async(&rt).iter(|| async move {
            let out = tools::memory_body("BRG-0042").await.expect("body");
            queue.send(row(who, "ok")).await.expect("queue open");
            black_box(out)
        })
    });
    group.bench_function("result_to_json_and_text", |b| {
        b.iter(|| {
            let structured = serde_json::to_value(&view).expect("json");
            let text = serde_json::to_string_pretty(&structured).expect("text");
            black_box((structured, text))
        })
    });
    group.bench_function("schema_lookup", |b| {
        b.iter(|| {
            black_box(
                registry
                    .get("catalog_describe_item")
                    .map(|t| t.input_schema(Target::Mcp).clone()),
            )
        })
    });
    group.finish();
    drop(batcher_handle);
    let written = rt.block_on(writer).expect("audit writer");
    assert!(written > 0, "the batched audit rows were written");
}

criterion_group! {
    name = benches;
    config = harness::config(60, 5);
    targets = read_call
}
criterion_main!(benches);
