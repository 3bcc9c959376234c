//! What the MCP handler asks of the apps: the cards served, the capability, the tool list
//! and results as an apps host sees them, and the app tools' calls.

use rmcp::model::{CallToolResult, ExtensionCapabilities, ResourcesCapability, ServerConfig, Tool};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, model::JsonObject};
use serde_json::json;

use super::cards::{CARD_MIME, EXTENSION_ID, is_card};
use super::host::host_supports_apps;
use super::links::McpApps;
use super::tools::{app_tools, decorate_result, tool_with_card};
use crate::DocumentRef;
use crate::registry::ToolRegistry;
use crate::tool::context::Principal;

/// The cards this server serves: those the registry links and, with approvals, the
/// approval card. Empty: the server declares no extension and no resources.
pub(crate) fn served_cards(apps: &McpApps, registry: &ToolRegistry) -> Vec<&'static str> {
    let mut served: Vec<&'static str> = registry.tools().iter().filter_map(|t| t.card()).collect();
    #[cfg(feature = "agent")]
    if apps.serves_approvals() {
        served.push(super::cards::APPROVAL_CARD);
    }
    #[cfg(not(feature = "agent"))]
    let _ = apps;
    served.retain(|uri| is_card(uri));
    served.sort_unstable();
    served.dedup();
    served
}

/// What the server declares with `apps` (built once, cloned for every request): `info`
/// with the resources capability and, when cards are served, the extension.
pub(crate) fn declared(
    info: &ServerConfig,
    apps: &McpApps,
    registry: &ToolRegistry,
) -> std::sync::Arc<ServerConfig> {
    std::sync::Arc::new(declare(info.clone(), &served_cards(apps, registry)))
}

/// `info` declaring resources (the documents calls produced are read with
/// `resources/read`) and, when cards are served, the extension (with the card MIME type).
fn declare(mut info: ServerConfig, served: &[&'static str]) -> ServerConfig {
    info.capabilities
        .resources
        .get_or_insert_with(ResourcesCapability::default);
    if served.is_empty() {
        return info;
    }
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), json!([CARD_MIME]));
    let extensions = info
        .capabilities
        .extensions
        .get_or_insert_with(ExtensionCapabilities::new);
    extensions.insert(EXTENSION_ID.into(), settings);
    info
}

/// The tools `principal` sees: for a host that declared the extension, `tools` with their
/// cards linked plus the app tools; for any other host, `tools` unchanged.
pub(crate) fn listed(
    apps: &McpApps,
    registry: &ToolRegistry,
    tools: Vec<Tool>,
    principal: &Principal,
    context: &RequestContext<RoleServer>,
) -> Vec<Tool> {
    if !host_supports_apps(context) {
        return tools;
    }
    let mut out: Vec<Tool> = tools
        .into_iter()
        .map(|tool| match registry.get(&tool.name) {
            Some(registered) => tool_with_card(registered, tool),
            None => tool,
        })
        .collect();
    out.extend(app_tools(apps, principal));
    out
}

/// The result of an app tool (`None`: `name` is not one, the runtime runs it).
pub(crate) async fn app_call(
    apps: &McpApps,
    name: &str,
    arguments: &serde_json::Value,
    principal: &Principal,
) -> Option<CallToolResult> {
    #[cfg(feature = "agent")]
    {
        apps.call_app_tool(name, arguments, principal).await
    }
    #[cfg(not(feature = "agent"))]
    {
        let _ = (apps, name, arguments, principal);
        None
    }
}

/// `result` of tool `name` (called by `caller` in its agent run, if any, drafting
/// `document`) with the links its card shows, for a host that declared the extension;
/// unchanged otherwise.
pub(crate) fn finish(
    apps: &McpApps,
    registry: &ToolRegistry,
    caller: (&Principal, Option<&str>),
    name: &str,
    document: Option<&DocumentRef>,
    mut result: CallToolResult,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    if let Some(registered) = registry.get(name)
        && host_supports_apps(context)
    {
        let (principal, agent_run_id) = caller;
        let run_id = agent_run_id
            .map(str::to_string)
            .unwrap_or_else(|| crate::principal_run_id(principal));
        decorate_result(apps, registered, &mut result, &run_id, document);
    }
    result
}
