//! The MCP server driven by a real `rmcp` client in-process (`tokio::io::duplex`, the same
//! async read/write transport stdio uses), logged in as two roles.

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Outcome, Principal};
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::seed::VENDOR_JAKARTA;
use erp_tools_tests::app::{App, Table, count};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{assert_list_matches, assert_valid, call, connect_in_process, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use rmcp::model::{CallToolRequestParams, ErrorCode};
use serde_json::{Value, json};

const BUYER_TOOLS: [&str; 5] = [
    "inventory_get_stock",
    "purchasing_create_po_draft",
    "purchasing_get_po",
    "purchasing_get_vendor_summary",
    "purchasing_search_vendors",
];

async fn server_for(t: &TestDb, principal: Principal) -> ErpMcpServer {
    ErpMcpServer::with_principal(App::new(&t.db).await.runtime, principal)
}

async fn each_role_sees_its_own_stable_list(t: &TestDb) {
    let runtime = App::new(&t.db).await.runtime;
    let registry = runtime.registry().clone();

    let as_buyer = connect_in_process(ErpMcpServer::with_principal(
        runtime.clone(),
        BUYER.principal(),
    ))
    .await;
    let first = as_buyer.list_tools(None).await.unwrap();
    assert_list_matches(&first, &registry, &BUYER_TOOLS);
    let second = as_buyer.list_tools(None).await.unwrap();
    assert_eq!(
        first.tools, second.tools,
        "same caller, same list, every time"
    );

    let as_clerk =
        connect_in_process(ErpMcpServer::with_principal(runtime, WAREHOUSE.principal())).await;
    let list = as_clerk.list_tools(None).await.unwrap();
    assert_list_matches(&list, &registry, &["inventory_get_stock"]);
    assert_eq!(
        as_clerk.list_tools(None).await.unwrap().tools,
        list.tools,
        "stable for the restricted role too"
    );

    as_buyer.cancel().await.unwrap();
    as_clerk.cancel().await.unwrap();
}
on_both_backends!(
    each_role_sees_its_own_stable_list,
    crate::each_role_sees_its_own_stable_list
);

async fn server_info_describes_namespaces_and_limits(t: &TestDb) {
    let server = server_for(t, BUYER.principal()).await;
    let client = connect_in_process(server).await;
    let info = client.peer_info().expect("initialized");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("erp-tools")
    );
    let tools = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools.list_changed, Some(false));
    let text = info.instructions.clone().unwrap_or_default();
    assert!(
        text.contains("- purchasing: Vendors and purchase orders"),
        "{text}"
    );
    assert!(text.contains("- inventory: Stock on hand"), "{text}");
    assert!(
        text.contains("DRAFT") && text.contains("client_ref"),
        "{text}"
    );
    client.cancel().await.unwrap();
}
on_both_backends!(
    server_info_describes_namespaces_and_limits,
    crate::server_info_describes_namespaces_and_limits
);

async fn restricted_role_is_refused_with_the_missing_scope_and_audited(t: &TestDb) {
    let run = new_run();
    let server = server_for(t, WAREHOUSE.in_run(&run)).await;
    let runtime = server.runtime().clone();
    let client = connect_in_process(server).await;

    let result = client
        .call_tool(call(
            "purchasing_create_po_draft",
            valid_arguments("purchasing_create_po_draft", "r-1"),
        ))
        .await
        .expect("a denial is a tool result, not a protocol error");
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(
        text.contains("`purchasing:draft`"),
        "names the missing scope: {text}"
    );
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

    let log = runtime.database().audit_log(Some(&run)).await.unwrap();
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(log[0].outcome, Outcome::Denied.as_str());
    assert_eq!(
        log[0].tool_name.as_deref(),
        Some("purchasing_create_po_draft")
    );
    assert_eq!(log[0].user_id, WAREHOUSE.user_id);
    assert_eq!(count(runtime.database(), Table::PurchaseOrders).await, 0);

    // A name nobody registered is a protocol error (-32602), and nothing runs; the
    // attempt is audited as denied.
    let err = client
        .call_tool(CallToolRequestParams::new("purchasing_post_po"))
        .await
        .expect_err("unknown tool");
    let rmcp::ServiceError::McpError(data) = err else {
        panic!("expected a JSON-RPC error, got {err:?}");
    };
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert!(data.message.contains("unknown tool"), "{}", data.message);
    let log = runtime.database().audit_log(Some(&run)).await.unwrap();
    assert_eq!(log.len(), 2, "{log:#?}");
    assert_eq!(log[1].outcome, Outcome::Denied.as_str());
    assert_eq!(log[1].tool_name.as_deref(), Some("purchasing_post_po"));
    assert_eq!(count(runtime.database(), Table::PurchaseOrders).await, 0);
    client.cancel().await.unwrap();
}
on_both_backends!(
    restricted_role_is_refused_with_the_missing_scope_and_audited,
    crate::restricted_role_is_refused_with_the_missing_scope_and_audited
);

async fn buyer_draft_is_created_once_and_replayed(t: &TestDb) {
    let run = new_run();
    let server = server_for(t, BUYER.in_run(&run)).await;
    let runtime = server.runtime().clone();
    let client = connect_in_process(server).await;
    let arguments = valid_arguments("purchasing_create_po_draft", "r-1");

    let first = client
        .call_tool(call("purchasing_create_po_draft", arguments.clone()))
        .await
        .unwrap();
    assert_eq!(first.is_error, Some(false), "{}", text_of(&first));
    let created = first.structured_content.clone().unwrap();
    assert_eq!(created["replayed"], json!(false));
    assert_eq!(created["status"], json!("draft"));
    let number = created["number"].as_str().unwrap().to_string();
    assert!(text_of(&first).contains(&number), "{}", text_of(&first));

    let again = client
        .call_tool(call("purchasing_create_po_draft", arguments))
        .await
        .unwrap();
    assert_eq!(again.is_error, Some(false), "{}", text_of(&again));
    let replayed = again.structured_content.clone().unwrap();
    assert_eq!(replayed["replayed"], json!(true));
    assert_eq!(replayed["number"], json!(number));
    assert_eq!(count(runtime.database(), Table::PurchaseOrders).await, 1);

    let log = runtime.database().audit_log(Some(&run)).await.unwrap();
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
on_both_backends!(
    buyer_draft_is_created_once_and_replayed,
    crate::buyer_draft_is_created_once_and_replayed
);

async fn structured_content_matches_the_output_schema_of_every_tool(t: &TestDb) {
    let run = new_run();
    let server = server_for(t, BUYER.in_run(&run)).await;
    let client = connect_in_process(server).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    // Create first, so that purchasing_get_po finds PO-2026-0001.
    let mut order: Vec<_> = tools.iter().collect();
    order.sort_by_key(|t| t.name != "purchasing_create_po_draft");
    for tool in order {
        let result = client
            .call_tool(call(
                tool.name.to_string(),
                valid_arguments(&tool.name, "r-schema"),
            ))
            .await
            .unwrap();
        assert_eq!(
            result.is_error,
            Some(false),
            "{}: {}",
            tool.name,
            text_of(&result)
        );
        let schema = Value::Object(
            tool.output_schema
                .as_deref()
                .cloned()
                .expect("outputSchema"),
        );
        let structured = result
            .structured_content
            .clone()
            .expect("structuredContent");
        assert_valid(&schema, &structured, &tool.name);
    }
    client.cancel().await.unwrap();
}
on_both_backends!(
    structured_content_matches_the_output_schema_of_every_tool,
    crate::structured_content_matches_the_output_schema_of_every_tool
);

async fn tool_errors_are_results_with_actionable_text(t: &TestDb) {
    let server = server_for(t, BUYER.in_run(&new_run())).await;
    let runtime = server.runtime().clone();
    let client = connect_in_process(server).await;

    let mut bad = valid_arguments("purchasing_create_po_draft", "r-bad");
    bad["lines"][0]["uom"] = json!("LTR");
    let result = client
        .call_tool(call("purchasing_create_po_draft", bad))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        result.structured_content, None,
        "an error result must not be checked against the success outputSchema"
    );
    let text = text_of(&result);
    assert!(
        text.contains("lines[0].uom") && text.contains("PCS"),
        "{text}"
    );
    assert!(text.contains("No draft was created"), "{text}");

    // Another branch's vendor looks exactly like a vendor that does not exist.
    let mut other_branch = valid_arguments("purchasing_create_po_draft", "r-jkt");
    other_branch["vendor_code"] = json!(VENDOR_JAKARTA);
    let result = client
        .call_tool(call("purchasing_create_po_draft", other_branch))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text_of(&result),
        "Vendor V-90001 was not found in your branch. Call purchasing_search_vendors and use a \
         code from the results. No draft was created."
    );
    assert_eq!(count(runtime.database(), Table::PurchaseOrders).await, 0);
    client.cancel().await.unwrap();
}
on_both_backends!(
    tool_errors_are_results_with_actionable_text,
    crate::tool_errors_are_results_with_actionable_text
);

async fn without_an_identity_nothing_is_listed_or_run(t: &TestDb) {
    let runtime = App::new(&t.db).await.runtime;
    // `new` reads the caller from the HTTP request; in-process there is none.
    let client = connect_in_process(ErpMcpServer::new(runtime.clone())).await;
    assert!(client.list_tools(None).await.unwrap().tools.is_empty());
    let err = client
        .call_tool(call(
            "inventory_get_stock",
            valid_arguments("inventory_get_stock", ""),
        ))
        .await
        .expect_err("refused");
    let rmcp::ServiceError::McpError(data) = err else {
        panic!("expected a JSON-RPC error, got {err:?}");
    };
    assert!(
        data.message.contains("not authenticated"),
        "{}",
        data.message
    );
    assert!(runtime.database().audit_log(None).await.unwrap().is_empty());
    client.cancel().await.unwrap();
}
on_both_backends!(
    without_an_identity_nothing_is_listed_or_run,
    crate::without_an_identity_nothing_is_listed_or_run
);

async fn a_connection_without_a_run_uses_the_callers_scope(t: &TestDb) {
    let server = server_for(t, BUYER.principal()).await;
    let runtime = server.runtime().clone();
    let scope = erp_tools_core::principal_run_id(&BUYER.principal());
    let client = connect_in_process(server).await;
    let result = client
        .call_tool(call(
            "inventory_get_stock",
            valid_arguments("inventory_get_stock", ""),
        ))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let log = runtime.database().audit_log(None).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].agent_run_id, scope);
    assert!(scope.starts_with("user-"), "{scope}");
    client.cancel().await.unwrap();
}
on_both_backends!(
    a_connection_without_a_run_uses_the_callers_scope,
    crate::a_connection_without_a_run_uses_the_callers_scope
);
