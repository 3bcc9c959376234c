//! Shared fixtures of the erp-tools benchmarks (see `BENCHMARKS.md` at the workspace
//! root): the tools measured, the plain `rmcp` baseline server, throw-away databases,
//! the hand-written "floor" transaction, and small statistics helpers.

pub mod batch_audit;
pub mod fixtures;
pub mod plain;
pub mod stats;
pub mod tools;

/// The 500 generated tools (56 modules of at most 9), declared with `#[erp_tool]` and
/// with `rmcp`'s `#[tool]`.
#[allow(missing_docs, clippy::all)]
pub mod gen500 {
    include!(concat!(env!("OUT_DIR"), "/gen500.rs"));
}

use std::sync::Arc;

use erp_tools_core::{ErpMcpServer, Principal, ToolRegistry, ToolRuntime};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

/// An `rmcp` client connected to `server` over an in-process `tokio::io::duplex` pipe,
/// after the `initialize` handshake. The same transport is used for every server measured.
pub async fn connect_in_process<S>(server: S) -> RunningService<RoleClient, ()>
where
    S: rmcp::ServerHandler,
{
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_end).await.expect("client connects")
}

/// The principal every benchmark calls as: user `u-7` of branch `SBY-01` (id 1).
pub fn principal(scopes: &[&str]) -> Principal {
    Principal::builder("u-7", 1, "SBY-01")
        .role("buyer")
        .scopes(scopes.iter().copied())
        .build()
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
