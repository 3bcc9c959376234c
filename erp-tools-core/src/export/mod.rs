//! The same tools, exported for direct use with the providers' APIs (SPEC M5, S).
//!
//! - [`openai_tools`]: one `namespace` per module holding strict `function` tools with
//!   `defer_loading: true`, plus `{"type":"tool_search"}` so the model loads a namespace
//!   only when it needs it.
//! - [`anthropic_tools`]: `{"name","description","input_schema","strict":true}` per tool.
//! - [`anthropic_tools_deferred`]: the same tools grouped by module, each with
//!   `defer_loading: true`, after a tool-search tool ([`AnthropicToolSearch`]) so Claude
//!   loads only the tools it searched for.
//! - [`mcp_tools`]: the `tools/list` entries the MCP server serves.
//!
//! The `*_for` variants keep only the tools a principal may use. [`check_export`] vets
//! any export (ours or hand-written) against the strict schema rules and the envelope
//! each provider expects.
//!
//! The guide's chapter: *Declaring tools: what the compiler refuses* (`guide/src/declaring.md` in the repository).

use serde_json::{Value, json};

use crate::registry::{RegisteredTool, ToolRegistry};
use crate::schema::Target;
use crate::tool::context::Principal;

mod check;
mod search;

pub use check::{ANTHROPIC_MAX_UNION_PARAMETERS, check_export};
pub use search::AnthropicToolSearch;

/// Every tool as OpenAI Responses API tools: one namespace per module, each function
/// strict and deferred, plus `tool_search`.
pub fn openai_tools(registry: &ToolRegistry) -> Value {
    openai_export(registry, |_| true)
}

/// Like [`openai_tools`], keeping only the tools `principal` may use (and the namespaces
/// that still hold one).
pub fn openai_tools_for(registry: &ToolRegistry, principal: &Principal) -> Value {
    openai_export(registry, |t| t.allowed_for(principal))
}

fn openai_export(registry: &ToolRegistry, keep: impl Fn(&RegisteredTool) -> bool) -> Value {
    let mut out = Vec::new();
    for (ns, tools) in per_module(registry, &keep) {
        let functions: Vec<Value> = tools
            .into_iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name(),
                    "description": t.description,
                    "defer_loading": true,
                    "strict": true,
                    "parameters": t.input_schema(Target::OpenAi).as_ref(),
                })
            })
            .collect();
        out.push(json!({
            "type": "namespace",
            "name": ns.name,
            "description": ns.description,
            "tools": functions,
        }));
    }
    out.push(json!({ "type": "tool_search" }));
    Value::Array(out)
}

/// The modules in the registry's order, each with the tools `keep` accepts; modules left
/// with none are left out.
fn per_module<'r>(
    registry: &'r ToolRegistry,
    keep: &impl Fn(&RegisteredTool) -> bool,
) -> Vec<(&'r crate::registry::Namespace, Vec<&'r RegisteredTool>)> {
    let tools = registry.tools();
    registry
        .namespaces()
        .iter()
        .map(|ns| {
            let kept = ns.tools.iter().map(|&i| &tools[i]).filter(|t| keep(t));
            (ns, kept.collect::<Vec<_>>())
        })
        .filter(|(_, tools)| !tools.is_empty())
        .collect()
}

/// Every tool as Anthropic Messages API tools with strict input schemas.
pub fn anthropic_tools(registry: &ToolRegistry) -> Value {
    anthropic_export(registry, |_| true)
}

/// Like [`anthropic_tools`], keeping only the tools `principal` may use.
pub fn anthropic_tools_for(registry: &ToolRegistry, principal: &Principal) -> Value {
    anthropic_export(registry, |t| t.allowed_for(principal))
}

fn anthropic_export(registry: &ToolRegistry, keep: impl Fn(&RegisteredTool) -> bool) -> Value {
    each_tool(registry, keep, anthropic_tool)
}

fn anthropic_tool(t: &RegisteredTool) -> Value {
    json!({
        "name": t.name(),
        "description": t.description,
        "input_schema": t.input_schema(Target::Anthropic).as_ref(),
        "strict": true,
    })
}

/// Every tool as Anthropic Messages API tools with deferred loading: `search` first (the
/// only tool Claude sees up front), then each module's tools in turn, strict and with
/// `"defer_loading": true`. Send it with `anthropic-beta:`
/// [`AnthropicToolSearch::BETA`]; Claude loads the tools its searches return.
///
/// ```
/// use erp_tools_core::export::{AnthropicToolSearch, anthropic_tools_deferred};
/// # let registry = erp_tools_core::ToolRegistry::builder().build().unwrap();
/// let tools = anthropic_tools_deferred(&registry, AnthropicToolSearch::Bm25);
/// assert_eq!(
///     tools[0],
///     serde_json::json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
/// );
/// ```
pub fn anthropic_tools_deferred(registry: &ToolRegistry, search: AnthropicToolSearch) -> Value {
    anthropic_deferred(registry, search, |_| true)
}

/// Like [`anthropic_tools_deferred`], keeping only the tools `principal` may use.
pub fn anthropic_tools_deferred_for(
    registry: &ToolRegistry,
    principal: &Principal,
    search: AnthropicToolSearch,
) -> Value {
    anthropic_deferred(registry, search, |t| t.allowed_for(principal))
}

fn anthropic_deferred(
    registry: &ToolRegistry,
    search: AnthropicToolSearch,
    keep: impl Fn(&RegisteredTool) -> bool,
) -> Value {
    let mut out = vec![search.tool()];
    for (_, tools) in per_module(registry, &keep) {
        for t in tools {
            let mut tool = anthropic_tool(t);
            tool["defer_loading"] = Value::Bool(true);
            out.push(tool);
        }
    }
    Value::Array(out)
}

/// The tools `keep` accepts, each rendered by `render`, as a JSON array.
fn each_tool(
    registry: &ToolRegistry,
    keep: impl Fn(&RegisteredTool) -> bool,
    render: impl Fn(&RegisteredTool) -> Value,
) -> Value {
    Value::Array(
        registry
            .tools()
            .iter()
            .filter(|t| keep(t))
            .map(render)
            .collect(),
    )
}

/// Every tool as MCP `tools/list` entries (what [`ErpMcpServer`](crate::mcp::ErpMcpServer)
/// serves to a caller holding every scope).
pub fn mcp_tools(registry: &ToolRegistry) -> Value {
    mcp_export(registry, |_| true)
}

/// Like [`mcp_tools`], keeping only the tools `principal` may use.
pub fn mcp_tools_for(registry: &ToolRegistry, principal: &Principal) -> Value {
    mcp_export(registry, |t| t.allowed_for(principal))
}

fn mcp_export(registry: &ToolRegistry, keep: impl Fn(&RegisteredTool) -> bool) -> Value {
    each_tool(registry, keep, mcp_tool)
}

/// The MCP `tools/list` entry of a registered tool: name, title, description, the strict
/// MCP input schema (rendered once by the registry), the output schema (for draft tools it
/// declares the `replayed` flag) and the annotations, all four hints set explicitly from
/// the tier (the protocol's defaults, `destructiveHint: true` and `openWorldHint: true`,
/// are wrong for every erp-tools tool):
///
/// | tier | readOnly | destructive | idempotent | openWorld |
/// |---|---|---|---|---|
/// | read | true | false | true | false |
/// | draft | false | `destructive = ..` (default false) | true (idempotency keys) | false |
pub(crate) fn mcp_tool(tool: &RegisteredTool) -> Value {
    let def = tool.def;
    let mut out = serde_json::Map::new();
    out.insert("name".into(), Value::from(tool.name()));
    let title = def.title().trim();
    if !title.is_empty() {
        out.insert("title".into(), Value::from(title));
    }
    out.insert("description".into(), Value::from(tool.description.clone()));
    out.insert(
        "inputSchema".into(),
        tool.input_schema(Target::Mcp).as_ref().clone(),
    );
    if tool.output_schema.is_object() {
        out.insert("outputSchema".into(), tool.output_schema.as_ref().clone());
    }
    out.insert("annotations".into(), def.annotations());
    Value::Object(out)
}
