//! The Run page links the documents the run's tasks produced (a report's CSV) and those its
//! plain calls attached, kept an hour (a printed order's PDF), and serves each to a
//! reviewer of the call's branch as a download; a reviewer of another branch gets a 404.
//! Both backends.

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::prelude::*;
use erp_tools_core::{Principal, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{JAKARTA_REVIEWER, REVIEWER, Role};
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

/// A browser signed in to `console` as `role`.
async fn signed_in(console: &ReviewServer, role: &Role) -> Browser {
    let mut browser = Browser::new(console);
    browser.sign_in(&console.token(&role.principal())).await;
    browser
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

    let mut browser = signed_in(&console, &REVIEWER).await;
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
    // Kept for resources/read too, but listed once, as the task's.
    assert_eq!(html.matches("SBY-01.csv</a>").count(), 1, "{html}");
    assert!(!html.contains("/kept/"), "{html}");
    let download = browser.get(&format!("/runs/{run}/documents/{id}/0")).await;
    assert_eq!(download.status, 200);
    assert_eq!(download.html, CSV);
    let missing = browser.get(&format!("/runs/{run}/documents/{id}/1")).await;
    assert_eq!(missing.status, 404);

    // Another branch's reviewer: no such document.
    let mut other = signed_in(&console, &JAKARTA_REVIEWER).await;
    let refused = other.get(&format!("/runs/{run}/documents/{id}/0")).await;
    assert_eq!(refused.status, 404);
    assert!(!refused.html.contains("SBY-WH1"));
}
on_both_backends!(the_run_page_links_the_documents_its_tasks_produced);

/// The printed order: a PDF's bytes, not all of them UTF-8.
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\n%%EOF\n";
/// Where it is attached.
const PDF_URI: &str = "erp://purchasing/po/SBY-PO-7.pdf";

#[derive(Serialize, JsonSchema)]
struct Printed {
    /// Pages printed
    pages: i64,
}

/// Print a purchase order of the caller's branch as a PDF.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn print_order(ctx: &ToolContext) -> Result<Printed, ToolError> {
    ctx.attach(Attachment::bytes(PDF_URI, "application/pdf", PDF.to_vec()))?;
    Ok(Printed { pages: 1 })
}

/// Count the purchase orders of the caller's branch (attaches nothing).
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn count_orders(_ctx: &ToolContext) -> Result<Printed, ToolError> {
    Ok(Printed { pages: 0 })
}

/// `tool`'s call by a clerk of `branch` in `run`: its result.
async fn call_in_run(
    runtime: &ToolRuntime,
    (run, branch): (&str, &erp_tools_tests::principals::Branch),
    tool: &str,
) -> rmcp::model::CallToolResult {
    let clerk = Principal::builder("u-clerk", branch.id, branch.code)
        .scopes(["purchasing:read"])
        .agent_run_id(run.to_string())
        .build();
    let server = ErpMcpServer::with_principal(runtime.clone(), clerk);
    let client = erp_tools_tests::mcp::connect_in_process(server).await;
    erp_tools_tests::mcp::call_tool(&client, tool, serde_json::json!({})).await
}

async fn the_run_page_links_the_documents_its_plain_calls_kept(t: &TestDb) {
    let console = ReviewServer::on(t, 20).await;
    let registry = ToolRegistry::builder()
        .module("purchasing", "Purchase orders. Read only here.")
        .tools(tools![print_order, count_orders])
        .build()
        .unwrap();
    let runtime = ToolRuntime::new(Arc::new(registry), t.db.clone());
    let run = format!("run-kept-{:?}", t.backend()).to_lowercase();
    let printed = call_in_run(&runtime, (&run, &REVIEWER.branch), "purchasing_print_order").await;
    assert_eq!(printed.is_error, Some(false));
    // A clerk of Jakarta naming the same run is refused (the run is Surabaya's), and the
    // refusal is audited in Jakarta: the Jakarta reviewer sees that run page.
    let counted = call_in_run(
        &runtime,
        (&run, &JAKARTA_REVIEWER.branch),
        "purchasing_count_orders",
    )
    .await;
    assert_eq!(counted.is_error, Some(true));

    let mut browser = signed_in(&console, &REVIEWER).await;
    let page = browser.get(&format!("/runs/{run}")).await;
    assert_eq!(page.status, 200, "{}", page.html);
    let html = page.html.replace("&#x2f;", "/");
    assert!(html.contains("Documents this run produced"), "{html}");
    let href = format!("/runs/{run}/kept/erp%3A%2F%2Fpurchasing%2Fpo%2FSBY-PO-7.pdf");
    let link = format!(
        "<a href=\"/review{href}\" download>{PDF_URI}</a> · application/pdf, {} bytes",
        PDF.len()
    );
    assert!(html.contains(&link), "{html}");
    assert!(html.contains("kept for an hour"), "{html}");
    let download = browser.get(&href).await;
    assert_eq!(download.status, 200);
    assert_eq!(download.bytes, PDF);
    let other_uri = format!("/runs/{run}/kept/erp%3A%2F%2Fpurchasing%2Fpo%2FSBY-PO-8.pdf");
    assert_eq!(browser.get(&other_uri).await.status, 404);
    // Not under another run's id.
    let elsewhere = browser
        .get("/runs/run-other/kept/erp%3A%2F%2Fpurchasing%2Fpo%2FSBY-PO-7.pdf")
        .await;
    assert_eq!(elsewhere.status, 404);

    // Another branch's reviewer: no link, and no such document.
    let mut other = signed_in(&console, &JAKARTA_REVIEWER).await;
    let their_page = other.get(&format!("/runs/{run}")).await;
    assert_eq!(their_page.status, 200, "{}", their_page.html);
    assert!(!their_page.html.contains("/kept/"), "{}", their_page.html);
    assert!(!their_page.html.contains("SBY-PO-7"), "{}", their_page.html);
    let refused = other.get(&href).await;
    assert_eq!(refused.status, 404);
    assert_ne!(refused.bytes, PDF);
    assert!(!refused.html.contains("%PDF"));
}
on_both_backends!(the_run_page_links_the_documents_its_plain_calls_kept);
