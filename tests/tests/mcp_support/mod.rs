//! Helpers shared by the MCP tests: throw-away databases, real `rmcp` clients, and the
//! checks every transport must pass.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Target, Tier, ToolRegistry, check_export};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, ListToolsResult, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A fresh SQLite file in a temporary directory (kept alive by the returned guard).
pub fn temp_sqlite() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("erp.db").display());
    (dir, url)
}

/// A fresh agent run id.
pub fn new_run(tag: &str) -> String {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    format!(
        "run-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// An `rmcp` client connected in-process (over `tokio::io::duplex`) to `server`, using the
/// `initialize` handshake.
pub async fn connect_in_process(server: ErpMcpServer) -> RunningService<RoleClient, ()> {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_end).await.expect("client connects")
}

/// The names in a tool list, in the order served.
pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// Arguments as an MCP arguments object.
pub fn args(value: Value) -> JsonObject {
    value.as_object().expect("arguments are an object").clone()
}

/// `tools/call` parameters.
pub fn call(name: impl Into<String>, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.into()).with_arguments(args(arguments))
}

/// The text of the first content block.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// Valid arguments for every fixture tool the buyer may call.
pub fn valid_arguments(tool: &str, client_ref: &str) -> Value {
    match tool {
        "purchasing_search_vendors" => json!({"query": "sinar"}),
        "purchasing_get_po" => json!({"number": "PO-2026-0001"}),
        "purchasing_create_po_draft" => json!({
            "vendor_code": "V-00231",
            "needed_by": "2026-12-01",
            "client_ref": client_ref,
            "note": "restock before the holidays",
            "lines": [
                {"item_code": "BRG-0042", "qty": "24", "uom": "BOX"},
                {"item_code": "BRG-0077", "qty": "2.5", "uom": "KG"}
            ]
        }),
        "inventory_get_stock" => json!({"item_code": "BRG-0042"}),
        other => panic!("no arguments for {other}"),
    }
}

/// The four annotation hints expected for `tier` (`destructive` false for the fixture).
pub fn expected_annotations(tier: Tier) -> Value {
    match tier {
        Tier::Read => json!({"readOnlyHint": true, "destructiveHint": false,
                             "idempotentHint": true, "openWorldHint": false}),
        Tier::Draft => json!({"readOnlyHint": false, "destructiveHint": false,
                              "idempotentHint": true, "openWorldHint": false}),
    }
}

/// Checks a served list against the registry: the tools and order expected, the strict
/// MCP input schema exactly as rendered by the registry, the output schema, the title and
/// annotations from the tier, a private cache scope, and [`check_export`] for MCP.
pub fn assert_list_matches(list: &ListToolsResult, registry: &ToolRegistry, expected: &[&str]) {
    assert_eq!(names(&list.tools), expected, "tools served, in order");
    assert_eq!(
        list.cache_scope,
        Some(rmcp::model::CacheScope::Private),
        "the list depends on the caller, so it must not be cached publicly"
    );
    for tool in &list.tools {
        let reg = registry.get(&tool.name).expect("served tool is registered");
        let wire = serde_json::to_value(tool).unwrap();
        assert_eq!(
            &wire["inputSchema"],
            reg.input_schema(Target::Mcp).as_ref(),
            "{}: input schema as rendered once by the registry",
            tool.name
        );
        assert_eq!(
            &wire["outputSchema"],
            reg.output_schema.as_ref(),
            "{}: output schema",
            tool.name
        );
        assert_eq!(
            wire["annotations"],
            expected_annotations(reg.def.tier),
            "{}: annotations from the tier",
            tool.name
        );
        assert_eq!(wire["title"], json!(reg.def.title), "{}: title", tool.name);
        assert_eq!(
            wire["description"],
            json!(reg.description),
            "{}: description",
            tool.name
        );
    }
    let problems = check_export(&serde_json::to_value(&list.tools).unwrap(), Target::Mcp);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Asserts that `instance` is valid against the JSON schema `schema`.
pub fn assert_valid(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("{what}: the output schema does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: structuredContent does not match outputSchema: {errors:#?}\n{instance:#}"
    );
}
