//! Benchmark 3: `tools/list` for a registry of 500 generated tools.
//!
//! The registry: 500 read tools in 56 modules of at most 9 (the framework refuses a
//! namespace of 10 or more, so the "50 modules" of 10 cannot be built), one scope
//! per module. The caller holds 10 scopes, so it sees 10 modules: 90 tools.
//!
//! - `erp_tools_filtered`: what the erp-tools server's `list_tools` does for that caller
//!   (filter by scopes, clone the prebuilt `rmcp::model::Tool` values, wrap the result);
//! - `rmcp_router_all`: `rmcp`'s `ToolRouter::list_all()` (all 500 tools, sorted) wrapped
//!   the same way;
//! - `registry_filter_only`: the scope filter over the registry, no cloning;
//! - `mcp_erp` / `mcp_rmcp`: a full `tools/list` round trip over the in-process pipe.
//!
//! Before timing, the setup checks that two lists share the same schema allocations
//! (`Arc::ptr_eq`): schemas are built once, at registry build, never per list.

mod harness;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use erp_tools_benches::fixtures::BenchDb;
use erp_tools_benches::gen500::{self, Plain500};
use erp_tools_benches::{connect_in_process, principal};
use erp_tools_core::ToolRuntime;
use erp_tools_core::mcp::ErpMcpServer;
use rmcp::model::{CacheScope, ListToolsResult};

/// Scopes the caller holds: 10 of the 56 modules.
const SCOPES: [&str; 10] = [
    "m00:read", "m05:read", "m11:read", "m17:read", "m23:read", "m29:read", "m35:read", "m41:read",
    "m47:read", "m50:read",
];

fn tools_list(c: &mut Criterion) {
    let rt = harness::runtime();
    let registry = Arc::new(gen500::erp_registry().build().expect("500-tool registry"));
    assert_eq!(registry.tools().len(), gen500::TOOL_COUNT);
    assert_eq!(registry.namespaces().len(), gen500::MODULE_COUNT);
    assert!(registry.namespaces().iter().all(|n| n.tools.len() < 10));
    let db = rt.block_on(BenchDb::sqlite());
    let who = principal(&SCOPES);
    let server = ErpMcpServer::new(ToolRuntime::new(registry.clone(), db.db.clone()));
    let plain = Plain500::default();

    // Schemas are built once: two lists share every schema allocation.
    let first = server.tools_for(&who);
    let second = server.tools_for(&who);
    assert_eq!(first.len(), 90, "10 scopes of 9-tool modules");
    for (a, b) in first.iter().zip(&second) {
        assert!(Arc::ptr_eq(&a.input_schema, &b.input_schema));
    }
    let all = plain.tool_router.list_all();
    assert_eq!(all.len(), gen500::TOOL_COUNT);
    let expected_names: Vec<String> = first.iter().map(|t| t.name.to_string()).collect();

    let (erp_client, plain_client) = rt.block_on(async {
        (
            connect_in_process(ErpMcpServer::with_principal(
                ToolRuntime::new(registry.clone(), db.db.clone()),
                who.clone(),
            ))
            .await,
            connect_in_process(plain.clone()).await,
        )
    });
    rt.block_on(async {
        let listed = erp_client.list_tools(None).await.expect("tools/list");
        let names: Vec<String> = listed.tools.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, expected_names);
        let listed = plain_client.list_tools(None).await.expect("tools/list");
        assert_eq!(listed.tools.len(), gen500::TOOL_COUNT);
    });

    let mut group = c.benchmark_group("tools_list");
    group.bench_function("erp_tools_filtered", |b| {
        b.iter(|| {
            let tools = server.tools_for(black_box(&who));
            black_box(ListToolsResult::with_all_items(tools).with_cache_scope(CacheScope::Private))
        })
    });
    group.bench_function("rmcp_router_all", |b| {
        b.iter(|| {
            let tools = plain.tool_router.list_all();
            black_box(ListToolsResult::with_all_items(tools))
        })
    });
    group.bench_function("registry_filter_only", |b| {
        b.iter(|| black_box(registry.list_for(black_box(&who)).count()))
    });
    let (erp_client, plain_client) = (&erp_client, &plain_client);
    group.bench_function("mcp_erp", |b| {
        b.to_async(&rt).iter(|| async move {
            black_box(erp_client.list_tools(None).await.expect("tools/list"))
        })
    });
    group.bench_function("mcp_rmcp", |b| {
        b.to_async(&rt).iter(|| async move {
            black_box(plain_client.list_tools(None).await.expect("tools/list"))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = harness::config(60, 5);
    targets = tools_list
}
criterion_main!(benches);
