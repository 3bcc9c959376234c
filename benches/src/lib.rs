//! Shared fixtures of the erp-tools benchmarks (see `BENCHMARKS.md` at the workspace
//! root): the tools measured, the plain `rmcp` baseline server, their tables on the
//! fixture crate's throw-away databases (`erp_tools_tests::db`), the hand-written
//! "floor" transaction, and small statistics helpers.

pub mod batch_audit;
pub mod fixtures;
pub mod plain;
pub mod stages;
pub mod stats;
pub mod tools;

/// The 500 generated tools (56 modules of at most 9), declared with `#[erp_tool]` and
/// with `rmcp`'s `#[tool]`.
#[allow(missing_docs, clippy::all)]
pub mod gen500 {
    include!(concat!(env!("OUT_DIR"), "/gen500.rs"));
}

use std::sync::Arc;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Principal, ToolRegistry, ToolRuntime};
use erp_tools_tests::principals::BUYER;

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
