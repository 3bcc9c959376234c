//! The reports example (`examples/reports`): the stock valuation runs as an MCP task,
//! reports its progress while it runs, and ends with its CSV attached (which its caller
//! reads again with `resources/read`); a client without
//! the tasks extension gets the same result in the request. On SQLite and PostgreSQL.

#[path = "../../examples/reports/report.rs"]
mod report;

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Principal, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, GetTaskParams,
    ReadResourceRequestParams, ResourceContents, TaskPayload, TaskStatus,
};
use rust_decimal::Decimal;
use serde_json::{Value, json};

const ITEMS: i64 = 1_200;

fn server(t: &TestDb) -> ErpMcpServer {
    let registry = report::registry().unwrap();
    let runtime = ToolRuntime::new(Arc::new(registry), t.db.clone());
    let clerk = Principal::builder("u-1", 1, "SBY-01")
        .scopes(["reports:read"])
        .build();
    ErpMcpServer::with_principal(runtime, clerk)
}

fn valuation() -> CallToolRequestParams {
    CallToolRequestParams::new("reports_stock_valuation")
        .with_arguments(json!({"warehouse_code": null}).as_object().unwrap().clone())
}

/// The value of branch 1's stock, computed here from the rows.
async fn expected_total(t: &TestDb) -> Decimal {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT s.qty, i.unit_cost FROM rpt_stock s JOIN rpt_items i ON i.id = s.item_id \
         JOIN rpt_warehouses w ON w.id = s.warehouse_id WHERE w.branch_id = 1",
    )
    .fetch_all(t.db.pool())
    .await
    .unwrap();
    rows.iter()
        .map(|(q, c)| (q.parse::<Decimal>().unwrap() * c.parse::<Decimal>().unwrap()).round_dp(2))
        .sum()
}

/// The CSV attached to `result` and its URI.
fn csv_of(result: &Value) -> (String, String) {
    let content = result["content"].as_array().unwrap();
    assert!(
        content[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Stock valuation of branch SBY-01")
    );
    let resource = &content[1]["resource"];
    assert_eq!(content[1]["type"], "resource", "{content:?}");
    assert_eq!(resource["mimeType"], "text/csv");
    (
        resource["uri"].as_str().unwrap().to_string(),
        resource["text"].as_str().unwrap().to_string(),
    )
}

async fn the_valuation_runs_as_a_task_with_progress_and_a_csv(t: &TestDb) {
    report::prepare(&t.db, ITEMS).await.unwrap();
    let tasks = ClientCapabilities::builder().enable_tasks().build();
    let client = erp_tools_tests::mcp::client_2026(server(t), tasks).await;
    let CallToolResponse::Task(created) = client.call_tool_once(valuation()).await.unwrap() else {
        panic!("expected a task");
    };
    let id = created.task.task_id;
    let (mut messages, mut done) = (Vec::new(), None);
    for _ in 0..600 {
        let got = client.get_task(GetTaskParams::new(&id)).await.unwrap();
        if let Some(m) = got.task.task.status_message.clone() {
            messages.push(m);
        }
        if got.task.status() != TaskStatus::Working {
            done = Some(got);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = done.expect("the valuation ends within 12 s");
    let TaskPayload::Completed { result } = &done.task.payload else {
        panic!("expected a completed task, got {done:?}");
    };
    let result = Value::Object(result.clone());
    let total = expected_total(t).await;
    assert_eq!(
        result["structuredContent"]["total_value"],
        json!(total.to_string()),
        "{result}"
    );
    let (uri, csv) = csv_of(&result);
    assert_eq!(uri, "erp://reports/stock-valuation/SBY-01.csv");
    // A header and one line per item in each of the branch's three warehouses.
    assert_eq!(csv.lines().count() as i64, 1 + 3 * ITEMS);
    let summed: Decimal = csv
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse::<Decimal>().unwrap())
        .sum();
    assert_eq!(summed, total);
    // The task's CSV, read again by its owner with resources/read.
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents {
        text, mime_type, ..
    } = &read.contents[0]
    else {
        panic!("a text document: {:?}", read.contents);
    };
    assert_eq!((text, mime_type.as_deref()), (&csv, Some("text/csv")));
    // What a host showed while it ran: how far, in which warehouse (when a poll fell
    // inside the run; a fast machine may finish before the first write of progress).
    for m in &messages {
        assert!(
            m.starts_with("valuing SBY-WH") || m.starts_with("writing the CSV"),
            "{m}"
        );
        assert!(m.ends_with(&format!("/{})", 3 * ITEMS)), "{m}");
    }
}
on_both_backends!(the_valuation_runs_as_a_task_with_progress_and_a_csv);

async fn without_the_extension_the_valuation_answers_in_the_request(t: &TestDb) {
    report::prepare(&t.db, 50).await.unwrap();
    let client = erp_tools_tests::mcp::client_2026(server(t), ClientCapabilities::default()).await;
    let CallToolResponse::Complete(result) = client.call_tool_once(valuation()).await.unwrap()
    else {
        panic!("expected a result in the request");
    };
    let result = serde_json::to_value(&result).unwrap();
    let (_, csv) = csv_of(&result);
    assert_eq!(csv.lines().count(), 1 + 3 * 50);
    assert_eq!(
        result["structuredContent"]["total_value"],
        json!(expected_total(t).await.to_string())
    );
}
on_both_backends!(without_the_extension_the_valuation_answers_in_the_request);
