//! MCP clients for tests and benchmarks, and the checks every transport must pass.

use erp_tools_core::export::check_export;
use erp_tools_core::{Target, Tier, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, JsonObject, ListToolsResult, Tool,
};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::app::tools::CREATE_PO_DRAFT;

/// An `rmcp` client, connected and initialized.
pub type Client = RunningService<RoleClient, ()>;

/// A host that declares the MCP Apps extension (SEP-1865): it is served the cards and
/// the links on a draft's result.
#[derive(Clone, Debug)]
pub struct AppsHost;

impl ClientHandler for AppsHost {
    fn get_info(&self) -> ClientConfig {
        use erp_tools_core::mcp::apps::{CARD_MIME, EXTENSION_ID};
        let mut info = ClientConfig::default();
        let mut settings = JsonObject::new();
        settings.insert("mimeTypes".into(), json!([CARD_MIME]));
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION_ID.into(), settings);
        info
    }
}

/// An [`AppsHost`] connected to `server` over an in-process pipe.
pub async fn apps_host(
    server: erp_tools_core::mcp::ErpMcpServer,
) -> RunningService<RoleClient, AppsHost> {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("server starts");
        let _ = running.waiting().await;
    });
    AppsHost.serve(client_end).await.expect("host connects")
}

/// An `rmcp` client connected to `server` over an in-process `tokio::io::duplex` pipe
/// (the async read/write transport stdio uses), after the `initialize` handshake.
pub async fn connect_in_process<S>(server: S) -> Client
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

/// A client (its handler `client`) and `server` over an in-process pipe, without the
/// `initialize` handshake: the server believes the client speaks `version` with
/// `capabilities`, the client that the server speaks `version` with tools.
pub async fn pair_directly<S, C>(
    server: S,
    client: C,
    version: rmcp::model::ProtocolVersion,
    capabilities: rmcp::model::ClientCapabilities,
) -> RunningService<RoleClient, C>
where
    S: rmcp::ServerHandler,
    C: rmcp::ClientHandler,
{
    use rmcp::model::{
        Implementation, InitializeRequestParams, InitializeResult, ServerCapabilities,
    };
    use rmcp::service::serve_directly;
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let client_info =
        InitializeRequestParams::new(capabilities, Implementation::new("test-client", "0"))
            .with_protocol_version(version.clone());
    let mut server_info =
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
    server_info.protocol_version = version;
    tokio::spawn(async move {
        let running =
            serve_directly::<rmcp::RoleServer, _, _, _, _>(server, server_io, Some(client_info));
        let _ = running.waiting().await;
    });
    serve_directly::<RoleClient, _, _, _, _>(client, client_io, Some(server_info.into()))
}

/// A client declaring `capabilities` at initialize and on every request's `_meta` (as a
/// 2026-07-28 client does), e.g. the tasks extension.
#[derive(Clone)]
pub struct Declaring {
    /// What the client declares.
    pub capabilities: rmcp::model::ClientCapabilities,
}

impl rmcp::ClientHandler for Declaring {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.capabilities = self.capabilities.clone();
        info
    }
}

/// A 2026-07-28 client of `server` over an in-process pipe, declaring `capabilities`.
pub async fn client_2026<S>(
    server: S,
    capabilities: rmcp::model::ClientCapabilities,
) -> RunningService<RoleClient, Declaring>
where
    S: rmcp::ServerHandler,
{
    let client = Declaring {
        capabilities: capabilities.clone(),
    };
    pair_directly(
        server,
        client,
        rmcp::model::ProtocolVersion::V_2026_07_28,
        capabilities,
    )
    .await
}

/// The names in a tool list, in the order served.
pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// `tools/call` parameters.
pub fn call(name: impl Into<String>, arguments: Value) -> CallToolRequestParams {
    let arguments: JsonObject = arguments
        .as_object()
        .expect("arguments are an object")
        .clone();
    CallToolRequestParams::new(name.into()).with_arguments(arguments)
}

/// `tools/call` of `tool` with `arguments` on `client`: the result, which may be a tool
/// error (a protocol error panics).
pub async fn call_tool(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(call(tool, arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool}: a tool result, not {e}"))
}

/// [`call_tool`], asserting that the call succeeded: its `structuredContent`.
pub async fn call_ok(client: &Client, tool: &str, arguments: Value) -> Value {
    let result = call_tool(client, tool, arguments).await;
    assert_eq!(result.is_error, Some(false), "{tool}: {}", text_of(&result));
    result.structured_content.expect("structuredContent")
}

/// A draft result's `(number, replayed)`, after asserting that the call succeeded.
pub fn drafted(result: &CallToolResult) -> (String, bool) {
    assert_eq!(result.is_error, Some(false), "{}", text_of(result));
    let s = result
        .structured_content
        .as_ref()
        .expect("structuredContent");
    (
        s["number"].as_str().expect("number").to_string(),
        s["replayed"].as_bool().expect("replayed"),
    )
}

/// Sends the purchase order draft `arguments` on `client`: the draft's `(number,
/// replayed)`, after asserting that the call succeeded.
pub async fn draft_po(client: &Client, arguments: &Value) -> (String, bool) {
    drafted(&call_tool(client, CREATE_PO_DRAFT, arguments.clone()).await)
}

/// Asserts that `result` is an error result whose text contains `expected`.
pub fn assert_error_text(result: &CallToolResult, expected: &str) {
    let text = text_of(result);
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(text.contains(expected), "expected {expected:?} in {text:?}");
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

/// The four annotation hints expected for `tier` (no fixture tool is destructive).
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
            reg.output_schema().as_ref(),
            "{}: output schema",
            tool.name
        );
        assert_eq!(
            wire["annotations"],
            expected_annotations(reg.def().tier()),
            "{}: annotations from the tier",
            tool.name
        );
        assert_eq!(
            wire["title"],
            json!(reg.def().title()),
            "{}: title",
            tool.name
        );
        assert_eq!(
            wire["description"],
            json!(reg.description()),
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
