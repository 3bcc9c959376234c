//! The MCP server driven by a real `rmcp` client in-process (`tokio::io::duplex`, the same
//! async read/write transport stdio uses), logged in as two roles.

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Outcome, Principal, principal_run_id};
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::seed::VENDOR_JAKARTA;
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, FOR_BUYER, GET_STOCK};
use erp_tools_tests::app::{App, Table};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{
    Client, assert_error_text, assert_list_matches, assert_valid, call, call_ok, call_tool,
    connect_in_process, text_of,
};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, Role, WAREHOUSE};
use rmcp::model::{CallToolRequestParams, ErrorCode};
use serde_json::{Value, json};

/// A client connected to an MCP server for `principal` over `app`.
async fn connect(app: &App, principal: Principal) -> Client {
    connect_in_process(ErpMcpServer::with_principal(app.runtime.clone(), principal)).await
}

/// The fixture application on `t`, and a client connected to it as `principal`.
async fn connect_as(t: &TestDb, principal: Principal) -> (Client, App) {
    let app = App::new(&t.db).await;
    (connect(&app, principal).await, app)
}

/// The fixture application on `t`, and a client connected to it as `role` bound to a new
/// run: `(client, app, run)`.
async fn connect_in_new_run(t: &TestDb, role: Role) -> (Client, App, String) {
    let run = new_run();
    let (client, app) = connect_as(t, role.in_run(&run)).await;
    (client, app, run)
}

/// The JSON-RPC error of a refused `tools/call`.
fn json_rpc_error(err: rmcp::ServiceError) -> rmcp::ErrorData {
    let rmcp::ServiceError::McpError(data) = err else {
        panic!("expected a JSON-RPC error, got {err:?}");
    };
    data
}

async fn each_role_sees_its_own_stable_list(t: &TestDb) {
    let (as_buyer, app) = connect_as(t, BUYER.principal()).await;
    let registry = app.runtime.registry().clone();

    let first = as_buyer.list_tools(None).await.unwrap();
    assert_list_matches(&first, &registry, &FOR_BUYER);
    let second = as_buyer.list_tools(None).await.unwrap();
    assert_eq!(
        first.tools, second.tools,
        "same caller, same list, every time"
    );

    let as_clerk = connect(&app, WAREHOUSE.principal()).await;
    let list = as_clerk.list_tools(None).await.unwrap();
    assert_list_matches(&list, &registry, &[GET_STOCK]);
    assert_eq!(
        as_clerk.list_tools(None).await.unwrap().tools,
        list.tools,
        "stable for the restricted role too"
    );

    as_buyer.cancel().await.unwrap();
    as_clerk.cancel().await.unwrap();
}
on_both_backends!(each_role_sees_its_own_stable_list);

async fn server_info_describes_namespaces_and_limits(t: &TestDb) {
    let (client, _app) = connect_as(t, BUYER.principal()).await;
    let info = client.peer_info().expect("initialized");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("erp-tools")
    );
    let tools = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools.list_changed, Some(false));
    let text = info.instructions.clone().unwrap_or_default();
    for expected in [
        "- purchasing: Vendors and purchase orders",
        "- inventory: Stock on hand",
        "DRAFT",
        "client_ref",
    ] {
        assert!(text.contains(expected), "{text}");
    }
    client.cancel().await.unwrap();
}
on_both_backends!(server_info_describes_namespaces_and_limits);

async fn restricted_role_is_refused_with_the_missing_scope_and_audited(t: &TestDb) {
    let (client, app, run) = connect_in_new_run(t, WAREHOUSE).await;

    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-1");
    let result = call_tool(&client, CREATE_PO_DRAFT, arguments).await;
    // Names the missing scope, and says what did not happen.
    assert_error_text(&result, "`purchasing:draft`");
    let text = text_of(&result);
    assert!(
        text.ends_with("No draft was created."),
        "says what did not happen: {text}"
    );
    // No structuredContent on errors (it would be checked against the outputSchema);
    // the structured error travels in `_meta`.
    assert_eq!(result.structured_content, None);
    let meta = result.meta.clone().expect("structured error in _meta");
    let structured = meta.0[erp_tools_core::mcp::ERROR_META_KEY].clone();
    assert_eq!(
        structured["details"]["missing_scopes"],
        json!(["purchasing:draft"])
    );

    let log = app.audit(&run).await;
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(log[0].outcome, Outcome::Denied.as_str());
    assert_eq!(log[0].tool_name.as_deref(), Some(CREATE_PO_DRAFT));
    assert_eq!(log[0].user_id, WAREHOUSE.user_id);
    assert_eq!(app.count(Table::PurchaseOrders).await, 0);

    // A name nobody registered is a protocol error (-32602), and nothing runs; the
    // attempt is audited as denied.
    let err = client
        .call_tool(CallToolRequestParams::new("purchasing_post_po"))
        .await
        .expect_err("unknown tool");
    let data = json_rpc_error(err);
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert!(data.message.contains("unknown tool"), "{}", data.message);
    let log = app.audit(&run).await;
    assert_eq!(log.len(), 2, "{log:#?}");
    assert_eq!(log[1].outcome, Outcome::Denied.as_str());
    assert_eq!(log[1].tool_name.as_deref(), Some("purchasing_post_po"));
    assert_eq!(app.count(Table::PurchaseOrders).await, 0);
    client.cancel().await.unwrap();
}
on_both_backends!(restricted_role_is_refused_with_the_missing_scope_and_audited);

async fn buyer_draft_is_created_once_and_replayed(t: &TestDb) {
    let (client, app, run) = connect_in_new_run(t, BUYER).await;
    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-1");

    let first = call_tool(&client, CREATE_PO_DRAFT, arguments.clone()).await;
    assert_eq!(first.is_error, Some(false), "{}", text_of(&first));
    let created = first.structured_content.clone().unwrap();
    assert_eq!(created["replayed"], json!(false));
    assert_eq!(created["status"], json!("draft"));
    let number = created["number"].as_str().unwrap().to_string();
    assert!(text_of(&first).contains(&number), "{}", text_of(&first));

    let replayed = call_ok(&client, CREATE_PO_DRAFT, arguments).await;
    assert_eq!(replayed["replayed"], json!(true));
    assert_eq!(replayed["number"], json!(number));
    assert_eq!(app.count(Table::PurchaseOrders).await, 1);

    let log = app.audit(&run).await;
    let outcomes: Vec<&str> = log.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["ok", "replayed"]);
    // The tool call id is the JSON-RPC request id: one per request.
    let ids: Vec<Option<&str>> = log.iter().map(|r| r.tool_call_id.as_deref()).collect();
    assert!(
        ids.iter().all(Option::is_some) && ids[0] != ids[1],
        "{ids:?}"
    );
    client.cancel().await.unwrap();
}
on_both_backends!(buyer_draft_is_created_once_and_replayed);

async fn structured_content_matches_the_output_schema_of_every_tool(t: &TestDb) {
    let (client, _app, _run) = connect_in_new_run(t, BUYER).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    // Create first, so that purchasing_get_po finds PO-2026-0001.
    let mut order: Vec<_> = tools.iter().collect();
    order.sort_by_key(|t| t.name != CREATE_PO_DRAFT);
    for tool in order {
        let arguments = valid_arguments(&tool.name, "r-schema");
        let structured = call_ok(&client, &tool.name, arguments).await;
        let schema = Value::Object(
            tool.output_schema
                .as_deref()
                .cloned()
                .expect("outputSchema"),
        );
        assert_valid(&schema, &structured, &tool.name);
    }
    client.cancel().await.unwrap();
}
on_both_backends!(structured_content_matches_the_output_schema_of_every_tool);

async fn tool_errors_are_results_with_actionable_text(t: &TestDb) {
    let (client, app, _run) = connect_in_new_run(t, BUYER).await;

    let mut bad = valid_arguments(CREATE_PO_DRAFT, "r-bad");
    bad["lines"][0]["uom"] = json!("LTR");
    let result = call_tool(&client, CREATE_PO_DRAFT, bad).await;
    assert_eq!(
        result.structured_content, None,
        "an error result must not be checked against the success outputSchema"
    );
    for expected in ["lines[0].uom", "PCS", "No draft was created"] {
        assert_error_text(&result, expected);
    }

    // Another branch's vendor looks exactly like a vendor that does not exist.
    let mut other_branch = valid_arguments(CREATE_PO_DRAFT, "r-jkt");
    other_branch["vendor_code"] = json!(VENDOR_JAKARTA);
    let result = call_tool(&client, CREATE_PO_DRAFT, other_branch).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text_of(&result),
        "Vendor V-90001 was not found in your branch. Call purchasing_search_vendors and use a \
         code from the results. No draft was created."
    );
    assert_eq!(app.count(Table::PurchaseOrders).await, 0);
    client.cancel().await.unwrap();
}
on_both_backends!(tool_errors_are_results_with_actionable_text);

async fn without_an_identity_nothing_is_listed_or_run(t: &TestDb) {
    let app = App::new(&t.db).await;
    // `new` reads the caller from the HTTP request; in-process there is none.
    let client = connect_in_process(ErpMcpServer::new(app.runtime.clone())).await;
    assert!(client.list_tools(None).await.unwrap().tools.is_empty());
    let err = client
        .call_tool(call(GET_STOCK, valid_arguments(GET_STOCK, "")))
        .await
        .expect_err("refused");
    let data = json_rpc_error(err);
    assert!(
        data.message.contains("not authenticated"),
        "{}",
        data.message
    );
    assert!(app.whole_audit_log().await.is_empty());
    client.cancel().await.unwrap();
}
on_both_backends!(without_an_identity_nothing_is_listed_or_run);

async fn a_connection_without_a_run_uses_the_callers_scope(t: &TestDb) {
    let (client, app) = connect_as(t, BUYER.principal()).await;
    let scope = principal_run_id(&BUYER.principal());
    call_ok(&client, GET_STOCK, valid_arguments(GET_STOCK, "")).await;
    let log = app.whole_audit_log().await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].agent_run_id, scope);
    assert!(scope.starts_with("user-"), "{scope}");
    client.cancel().await.unwrap();
}
on_both_backends!(a_connection_without_a_run_uses_the_callers_scope);
