//! Shared fixtures of the erp-tools benchmarks (see `BENCHMARKS.md` at the workspace
//! root): the tools measured, the plain `rmcp` baseline server, their tables on the
//! fixture crate's throw-away databases (`erp_tools_tests::db`), the hand-written
//! "floor" transaction, and small statistics helpers.

pub mod audit_columns;
pub mod batch_audit;
pub mod fixtures;
pub mod plain;
pub mod stages;
pub mod stats;
pub mod stock;
pub mod tools;
pub mod wrk;

/// The distributor example's tool modules, as the test suites compile them: the pages
/// benchmark serves its tools, the bare `rmcp` stock server calls its stock tool. They
/// find each other at the crate root.
#[path = "../../tests/tests/example/mod.rs"]
pub mod example;
pub use example::{app, buying, data, inventory, printing, purchasing, scale};

/// The 500 generated tools (56 modules of at most 9), declared with `#[erp_tool]` and
/// with `rmcp`'s `#[tool]`.
#[allow(missing_docs, clippy::all)]
pub mod gen500 {
    include!(concat!(env!("OUT_DIR"), "/gen500.rs"));
}

use std::sync::Arc;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{CallOutcome, Principal, ToolCall, ToolRegistry, ToolRuntime};
use erp_tools_tests::mcp::Client;
use erp_tools_tests::principals::BUYER;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use serde_json::Value;

/// The variants of a read call (benchmark 1), as results name them.
pub const READ_VARIANTS: [&str; 4] = ["a_direct", "b_pipeline", "c_mcp_erp", "d_mcp_rmcp"];

/// The floor of a read call in the interleaved rerun: the same body, then one
/// hand-written audit insert committed on its own (the same guarantee by hand).
pub const READ_FLOOR: &str = "e_body_and_hand_insert";

/// The variants of a draft call (benchmark 2) the interleaved rerun times on PostgreSQL,
/// as results name them; on SQLite it times the first two and the last.
pub const DRAFT_VARIANTS: [&str; 6] = [
    "floor",
    "floor_pipeline_shape",
    "floor_pipeline_shape_async_attempt",
    "floor_pipeline_shape_merged_updates",
    "floor_overlapped_attempt_merged_updates",
    "erp_tools",
];

/// An `rmcp` client connected to a server over an in-process `tokio::io::duplex` pipe,
/// after the `initialize` handshake. The same transport is used for every server measured.
pub use erp_tools_tests::mcp::connect_in_process;

/// The principal every benchmark calls as: the fixture's buyer (branch `SBY-01`, id 1)
/// holding `scopes`.
pub fn principal(scopes: &[&str]) -> Principal {
    BUYER.holding(scopes)
}

/// The registry of the read and draft tools measured by benchmarks 1, 2, 4.
pub fn bench_registry() -> Arc<ToolRegistry> {
    Arc::new(
        ToolRegistry::builder()
            .module("catalog", tools::CATALOG_DESCRIPTION)
            .module("orders", tools::ORDERS_DESCRIPTION)
            .tools(erp_tools_core::tools![
                tools::get_item,
                tools::describe_item,
                tools::create_order_draft,
            ])
            .build()
            .expect("the benchmark registry is valid"),
    )
}

/// An erp-tools MCP server for `principal` over `runtime`.
pub fn erp_server(runtime: ToolRuntime, principal: Principal) -> ErpMcpServer {
    ErpMcpServer::with_principal(runtime, principal)
}

/// One call through the erp-tools pipeline (`ToolRuntime::call`): `tool` with
/// `arguments` as `who`, in the agent run `run`, with the tool call id `call_id`. What the
/// pipeline variants of benchmarks 1 and 2 time.
pub async fn pipeline_call(
    runtime: &ToolRuntime,
    who: &Arc<Principal>,
    run: &str,
    call_id: &str,
    tool: &str,
    arguments: Value,
) -> CallOutcome {
    let call = ToolCall {
        agent_run_id: run.into(),
        tool_call_id: call_id.into(),
        name: tool.into(),
        arguments,
    };
    runtime.call(who, call).await.expect("pipeline call")
}

/// One MCP `tools/call` of `tool` with `arguments` (cloned) on `client`. What the MCP
/// variants of benchmark 1 time.
pub async fn mcp_call(
    client: &Client,
    tool: &'static str,
    arguments: &JsonObject,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments.clone()))
        .await
        .expect("MCP call")
}
