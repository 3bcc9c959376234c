//! What `tools/list` and `initialize` say of a registry: each tool's `rmcp` definition,
//! the server's instructions and its capabilities.

use std::sync::Arc;

use rmcp::model::{
    Implementation, JsonObject, MetaObject, PromptsCapability, ServerCapabilities, ServerConfig,
    TASKS_EXTENSION_ID, Tool, ToolAnnotations, ToolsCapability,
};

use crate::lock::fingerprint::FINGERPRINT_META_KEY;
use crate::registry::{RegisteredTool, ToolRegistry};

/// Name announced in `serverInfo`.
pub(super) const SERVER_NAME: &str = "erp-tools";

/// The `rmcp` definition of a registered tool (see [`crate::export::mcp_tools`] for what it
/// holds; a unit test checks the two agree).
pub(super) fn mcp_tool(tool: &RegisteredTool) -> Tool {
    let def = tool.def;
    let (read_only, destructive) = def.hints();
    // Input schemas are objects by construction (`Schema::object`), output schemas when
    // the output type has one.
    let input = tool
        .input_schema(crate::schema::Target::Mcp)
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut out = Tool::new(tool.name().to_string(), tool.description.clone(), input)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(read_only)
                .destructive(destructive)
                .idempotent(true)
                .open_world(false),
        );
    let title = def.title().trim();
    if !title.is_empty() {
        out = out.with_title(title);
    }
    if let Some(output) = tool.output_schema.as_object() {
        out = out.with_raw_output_schema(Arc::new(output.clone()));
    }
    out
}

/// The instructions sent in `initialize` / `server/discover`: what the server does, each
/// namespace with what it cannot do, and the rules every call follows.
pub fn instructions(registry: &ToolRegistry) -> String {
    let mut text = String::from(
        "ERP tools. Every tool either reads ERP data or creates a document in status DRAFT \
         for a person to review: approving, posting, sending and cancelling are done by \
         people in the ERP, never through these tools. Who you act for, your branch and \
         your permissions come from your access token: never pass branch, user, status or \
         price fields. Draft tools take a `client_ref` you choose: reuse it when retrying \
         the same request (the original result comes back with `replayed: true`) and use a \
         new one for a new document. Errors say what failed, the allowed values and what \
         to do next.\n\nNamespaces:",
    );
    for ns in registry.namespaces() {
        text.push_str(&format!("\n- {}: {}", ns.name, ns.description.trim()));
    }
    text
}

pub(super) fn server_config(registry: &ToolRegistry) -> ServerConfig {
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(false);
    let mut capabilities = ServerCapabilities::default();
    capabilities.tools = Some(tools);
    // No prompts, declared as such: `prompts/list` answers an empty list.
    let mut prompts = PromptsCapability::default();
    prompts.list_changed = Some(false);
    capabilities.prompts = Some(prompts);
    // Tools that run as tasks: the tasks extension (SEP-2663), answered from the database.
    if registry
        .tools()
        .iter()
        .any(|t| t.task_support().allows_task())
    {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION_ID.to_string(), JsonObject::new());
    }
    let mut config = ServerConfig::new(capabilities)
        .with_server_info(
            Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")).with_title("ERP tools"),
        )
        .with_instructions(instructions(registry));
    // Served in `initialize` and `server/discover` (rmcp builds it from this config).
    config.meta = Some(surface_meta(registry));
    config
}

/// The `_meta` naming the tool surface: [`FINGERPRINT_META_KEY`] with the registry's
/// fingerprint, in `tools/list`, `initialize` and `server/discover` results. The same
/// for every caller (it names the whole surface, not the caller's share of it), so an
/// agent host or a gateway can pin it.
pub(super) fn surface_meta(registry: &ToolRegistry) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.insert(
        FINGERPRINT_META_KEY.to_string(),
        registry.fingerprint().as_str().into(),
    );
    meta
}
