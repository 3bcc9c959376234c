//! The Run page links the documents the run's tasks produced (a report's CSV), and serves
//! each to a reviewer of the task's branch as a download; a reviewer of another branch
//! gets a 404. Both backends.

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::prelude::*;
use erp_tools_core::{Principal, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{JAKARTA_REVIEWER, REVIEWER};
use erp_tools_tests::review::{Browser, ReviewServer};
use rmcp::model::{CallToolResponse, ClientCapabilities, GetTaskParams, TaskStatus};

/// The CSV the report attaches.
const CSV: &str = "warehouse,value\nSBY-WH1,1200.50\n";

#[derive(Serialize, JsonSchema)]
struct Summary {
    /// Warehouses valued
    warehouses: i64,
}

/// Value the stock of the caller's branch, with the lines as a CSV.
#[erp_tool(
    module = "reports",
    tier = "read",
    scopes = ["reports:read"],
    task = "required"
)]
async fn value_stock(ctx: &ToolContext) -> Result<Summary, ToolError> {
    ctx.attach(Attachment::text(
        "erp://reports/stock-valuation/SBY-01.csv",
        "text/csv",
        CSV,
    ))?;
    Ok(Summary { warehouses: 1 })
}

async fn the_run_page_links_the_documents_its_tasks_produced(t: &TestDb) {
    let console = ReviewServer::on(t, 20).await;
    let registry = ToolRegistry::builder()
        .module("reports", "Stock reports. Read only: cannot change stock.")
        .tools(tools![value_stock])
        .build()
        .unwrap();
    let runtime = ToolRuntime::new(Arc::new(registry), t.db.clone());
    let run = format!("run-docs-{:?}", t.backend()).to_lowercase();
    let clerk = Principal::builder("u-clerk", REVIEWER.branch.id, REVIEWER.branch.code)
        .scopes(["reports:read"])
        .agent_run_id(run.clone())
        .build();
    let client = erp_tools_tests::mcp::client_2026(
        ErpMcpServer::with_principal(runtime, clerk),
        ClientCapabilities::builder().enable_tasks().build(),
    )
    .await;
    let CallToolResponse::Task(created) = client
        .call_tool_once(erp_tools_tests::mcp::call(
            "reports_value_stock",
            serde_json::json!({}),
        ))
        .await
        .unwrap()
    else {
        panic!("expected a task");
    };
    let id = created.task.task_id;
    for _ in 0..200 {
        let got = client.get_task(GetTaskParams::new(&id)).await.unwrap();
        if got.task.status() == TaskStatus::Completed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut browser = Browser::new(&console);
    browser.sign_in(&console.token(&REVIEWER.principal())).await;
    let page = browser.get(&format!("/runs/{run}")).await;
    assert_eq!(page.status, 200, "{}", page.html);
    let html = page.html.replace("&#x2f;", "/");
    assert!(html.contains("Documents this run produced"), "{html}");
    let link = format!(
        "<a href=\"/review/runs/{run}/documents/{id}/0\" download>\
         erp://reports/stock-valuation/SBY-01.csv</a> · text/csv, {} bytes",
        CSV.len()
    );
    assert!(html.contains(&link), "{html}");
    let download = browser.get(&format!("/runs/{run}/documents/{id}/0")).await;
    assert_eq!(download.status, 200);
    assert_eq!(download.html, CSV);
    let missing = browser.get(&format!("/runs/{run}/documents/{id}/1")).await;
    assert_eq!(missing.status, 404);

    // Another branch's reviewer: no such document.
    let mut other = Browser::new(&console);
    other
        .sign_in(&console.token(&JAKARTA_REVIEWER.principal()))
        .await;
    let refused = other.get(&format!("/runs/{run}/documents/{id}/0")).await;
    assert_eq!(refused.status, 404);
    assert!(!refused.html.contains("SBY-WH1"));
}
on_both_backends!(the_run_page_links_the_documents_its_tasks_produced);
