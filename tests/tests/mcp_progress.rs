//! A handler's progress reports (`ToolContext::progress`) reach an MCP client that asked
//! for them (`_meta.progressToken`) as `notifications/progress`, before the result; a
//! call outside MCP reports to no one and answers as usual. The order on the wire is
//! checked by the conformance suite's `tools-call-with-progress`
//! (`scripts/conformance_fixture_check.sh`); rmcp's client hands notifications to its
//! handler concurrently.

use std::sync::{Arc, Mutex};

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::prelude::*;
use erp_tools_core::{Principal, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;

#[tool_args]
struct CountArgs {
    /// How many shelves to count, 1 to 5
    #[erp(min = 1, max = 5)]
    shelves: u32,
}

#[tool_output]
struct Counted {
    /// Branches counted
    counted: u32,
}

/// Count stock on a number of shelves, reporting each step.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn count_stock(
    ctx: &ToolContext,
    _db: &ReadDb,
    args: CountArgs,
) -> Result<Counted, ToolError> {
    for n in 0..args.shelves {
        ctx.progress(
            f64::from(n),
            Some(f64::from(args.shelves)),
            &format!("shelf {}", n + 1),
        );
        tokio::task::yield_now().await;
    }
    Ok(Counted {
        counted: args.shelves,
    })
}

/// A client recording every progress notification.
#[derive(Clone, Default)]
struct Watcher {
    seen: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Watcher {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().push(params);
    }
}

async fn runtime() -> (TestDb, ToolRuntime) {
    let t = TestDb::sqlite().await;
    let registry = ToolRegistry::builder()
        .module("inventory", "Stock levels. Cannot change stock.")
        .tools(tools![count_stock])
        .build()
        .unwrap();
    let rt = ToolRuntime::new(Arc::new(registry), t.db.clone());
    (t, rt)
}

fn clerk() -> Principal {
    Principal::builder("u-3", 1, "SBY-01")
        .scopes(["inventory:read"])
        .build()
}

async fn pair(server: ErpMcpServer, watcher: Watcher) -> RunningService<RoleClient, Watcher> {
    let (version, capabilities) = (ProtocolVersion::V_2025_11_25, ClientCapabilities::default());
    erp_tools_tests::mcp::pair_directly(server, watcher, version, capabilities).await
}

fn count(shelves: u32, token: &str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("inventory_count_stock")
        .with_arguments(json!({"shelves": shelves}).as_object().unwrap().clone());
    params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        rmcp::model::NumberOrString::String(token.to_string().into()),
    )));
    params
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_a_client_that_asked_in_order_and_before_the_result() {
    let (_t, rt) = runtime().await;
    let watcher = Watcher::default();
    let client = pair(ErpMcpServer::with_principal(rt, clerk()), watcher.clone()).await;

    let done = client.call_tool(count(4, "p-1")).await.unwrap();
    assert_eq!(done.is_error, Some(false));
    // Seen by the time the result arrived: the reports are sent before it.
    // The server sends them in order from one task; rmcp's client hands each
    // notification to the handler on a task of its own, so they are compared sorted.
    let mut seen = watcher.seen.lock().unwrap().clone();
    seen.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    let progress: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert_eq!(progress, [0.0, 1.0, 2.0, 3.0], "{seen:?}");
    assert!(seen.iter().all(|p| p.total == Some(4.0)));
    // One token, the request's (rmcp's client sets its own on every request).
    assert!(
        seen.iter()
            .all(|p| p.progress_token == seen[0].progress_token)
    );
    assert_eq!(seen[2].message.as_deref(), Some("shelf 3"));
}

#[tokio::test]
async fn a_call_outside_mcp_reports_to_no_one_and_still_answers() {
    let (_t, rt) = runtime().await;
    let out = rt
        .call(
            &Arc::new(clerk()),
            ToolCall {
                agent_run_id: String::new(),
                tool_call_id: "c-1".into(),
                name: "inventory_count_stock".into(),
                arguments: json!({"shelves": 2}),
            },
        )
        .await
        .unwrap();
    assert!(!out.is_error(), "{}", out.text);
    assert_eq!(out.structured["counted"], 2);
}
