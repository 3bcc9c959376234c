//! The same tools, exported for direct use with the providers' APIs (SPEC M5, S).
//!
//! - [`openai_tools`]: one `namespace` per module holding strict `function` tools with
//!   `defer_loading: true`, plus `{"type":"tool_search"}` so the model loads a namespace
//!   only when it needs it.
//! - [`anthropic_tools`]: `{"name","description","input_schema","strict":true}` per tool.
//! - [`mcp_tools`]: the `tools/list` entries the MCP server serves.
//!
//! The `*_for` variants keep only the tools a principal may use. [`check_export`] vets
//! any export (ours or hand-written) against the strict schema rules and the envelope
//! each provider expects.
//!
//! The guide's chapter: *Declaring tools: what the compiler refuses* (`guide/src/declaring.md` in the repository).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::registry::{MAX_TOOLS_PER_MODULE, RegisteredTool, ToolRegistry};
use crate::schema::{Target, check_strict, valid_key};
use crate::tool::context::Principal;

/// Anthropic strict tool use refuses requests with more union-typed parameters than this.
pub const ANTHROPIC_MAX_UNION_PARAMETERS: usize = 16;

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
    let tools = registry.tools();
    let mut out = Vec::new();
    for ns in registry.namespaces() {
        let functions: Vec<Value> = ns
            .tools
            .iter()
            .map(|&i| &tools[i])
            .filter(|t| keep(t))
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
        if functions.is_empty() {
            continue;
        }
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

/// Every tool as Anthropic Messages API tools with strict input schemas.
pub fn anthropic_tools(registry: &ToolRegistry) -> Value {
    anthropic_export(registry, |_| true)
}

/// Like [`anthropic_tools`], keeping only the tools `principal` may use.
pub fn anthropic_tools_for(registry: &ToolRegistry, principal: &Principal) -> Value {
    anthropic_export(registry, |t| t.allowed_for(principal))
}

fn anthropic_export(registry: &ToolRegistry, keep: impl Fn(&RegisteredTool) -> bool) -> Value {
    each_tool(registry, keep, |t| {
        json!({
            "name": t.name(),
            "description": t.description,
            "input_schema": t.input_schema(Target::Anthropic).as_ref(),
            "strict": true,
        })
    })
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

/// Checks an exported tool list for `target` and returns every problem found (an empty
/// list means the export is accepted):
///
/// - every input schema passes [`check_strict`] for the target;
/// - names match `^[a-zA-Z0-9_-]{1,64}$` and are unique; descriptions are non-empty;
/// - OpenAI: tools sit in `namespace` entries (fewer than 10 tools each) with an explicit
///   `"strict": true` and `"defer_loading": true`, and `{"type":"tool_search"}` is present;
/// - Anthropic: each tool has `input_schema` and an explicit `"strict": true`, and the
///   request holds at most [`ANTHROPIC_MAX_UNION_PARAMETERS`] union-typed parameters;
/// - MCP: `tools/list` entries (or a `{"tools": [..]}` result) with `inputSchema` and all
///   four annotation hints set explicitly.
pub fn check_export(export: &Value, target: Target) -> Vec<String> {
    let mut problems = Vec::new();
    let items = match export {
        Value::Array(items) => items.as_slice(),
        Value::Object(o) if target == Target::Mcp => match o.get("tools") {
            Some(Value::Array(items)) => items.as_slice(),
            _ => {
                problems.push(
                    "an MCP export is an array of tools or an object with a `tools` array".into(),
                );
                return problems;
            }
        },
        _ => {
            problems.push("an export must be a JSON array of tools".into());
            return problems;
        }
    };
    let mut names = BTreeSet::new();
    match target {
        Target::OpenAi => check_openai(items, &mut names, &mut problems),
        Target::Anthropic => check_anthropic(items, &mut names, &mut problems),
        Target::Mcp => {
            for (i, tool) in items.iter().enumerate() {
                check_mcp_tool(tool, &format!("tools[{i}]"), &mut names, &mut problems);
            }
        }
    }
    problems
}

fn check_openai(items: &[Value], names: &mut BTreeSet<String>, problems: &mut Vec<String>) {
    let mut tool_search = 0;
    let mut namespaces = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("[{i}]");
        match item.get("type").and_then(Value::as_str) {
            Some("tool_search") => tool_search += 1,
            Some("namespace") => {
                let ns = check_name(item, &at, "namespace", Some(&mut namespaces), problems);
                let at = format!("namespace `{}`", ns.unwrap_or_else(|| at.clone()));
                check_description(item, &at, problems);
                match item.get("tools").and_then(Value::as_array) {
                    None => problems.push(format!("{at}: `tools` must be an array")),
                    Some(tools) if tools.is_empty() => {
                        problems.push(format!("{at}: holds no tools; leave it out"))
                    }
                    Some(tools) => {
                        if tools.len() >= MAX_TOOLS_PER_MODULE {
                            problems.push(format!(
                                "{at}: holds {} tools; a namespace must hold fewer than \
                                 {MAX_TOOLS_PER_MODULE}",
                                tools.len()
                            ));
                        }
                        for (j, tool) in tools.iter().enumerate() {
                            check_openai_function(
                                tool,
                                &format!("{at} tools[{j}]"),
                                names,
                                problems,
                            );
                        }
                    }
                }
            }
            Some("function") => {
                problems.push(format!(
                    "{at}: a function outside any namespace; put each tool in its module's \
                     namespace with defer_loading"
                ));
                check_openai_function(item, &at, names, problems);
            }
            other => problems.push(format!(
                "{at}: unexpected entry type {}; expected `namespace` or `tool_search`",
                other.map_or("<missing>".to_string(), |t| format!("`{t}`"))
            )),
        }
    }
    match tool_search {
        0 => problems.push(
            "`{\"type\":\"tool_search\"}` is missing: deferred namespaces need it to be found"
                .into(),
        ),
        1 => {}
        n => problems.push(format!("`tool_search` appears {n} times; send it once")),
    }
}

fn check_openai_function(
    tool: &Value,
    at: &str,
    names: &mut BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    if tool.get("type").and_then(Value::as_str) != Some("function") {
        problems.push(format!("{at}: `type` must be \"function\""));
    }
    let name = check_name(tool, at, "tool", Some(names), problems);
    let at = name.map_or_else(|| at.to_string(), |n| format!("tool `{n}`"));
    check_description(tool, &at, problems);
    check_flag(tool, &at, "strict", true, problems);
    check_flag(tool, &at, "defer_loading", true, problems);
    check_schema(
        tool.get("parameters"),
        &at,
        "parameters",
        Target::OpenAi,
        problems,
    );
}

fn check_anthropic(items: &[Value], names: &mut BTreeSet<String>, problems: &mut Vec<String>) {
    let mut unions = 0;
    for (i, tool) in items.iter().enumerate() {
        let name = check_name(tool, &format!("[{i}]"), "tool", Some(names), problems);
        let at = name.map_or_else(|| format!("[{i}]"), |n| format!("tool `{n}`"));
        check_description(tool, &at, problems);
        check_flag(tool, &at, "strict", true, problems);
        if let Some(d) = tool.get("defer_loading")
            && !d.is_boolean()
        {
            problems.push(format!("{at}: `defer_loading` must be true or false"));
        }
        for key in ["parameters", "inputSchema", "type"] {
            if tool.get(key).is_some() {
                problems.push(format!("{at}: `{key}` is not an Anthropic tool field"));
            }
        }
        let schema = tool.get("input_schema");
        check_schema(schema, &at, "input_schema", Target::Anthropic, problems);
        if let Some(schema) = schema {
            unions += count_unions(schema);
        }
    }
    if unions > ANTHROPIC_MAX_UNION_PARAMETERS {
        problems.push(format!(
            "the request holds {unions} union-typed parameters; Anthropic strict tool use \
             accepts at most {ANTHROPIC_MAX_UNION_PARAMETERS}: send fewer tools at once"
        ));
    }
}

fn check_mcp_tool(
    tool: &Value,
    at: &str,
    names: &mut BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    let name = check_name(tool, at, "tool", Some(names), problems);
    let at = name.map_or_else(|| at.to_string(), |n| format!("tool `{n}`"));
    check_description(tool, &at, problems);
    check_schema(
        tool.get("inputSchema"),
        &at,
        "inputSchema",
        Target::Mcp,
        problems,
    );
    if let Some(out) = tool.get("outputSchema") {
        let text = out.to_string();
        if !out.is_object() || text.contains("\"$ref\"") || text.contains("\"$defs\"") {
            problems.push(format!(
                "{at}: `outputSchema` must be a self-contained object schema (no $ref/$defs)"
            ));
        }
    }
    match tool.get("annotations") {
        None => problems.push(format!(
            "{at}: `annotations` missing; the protocol defaults (destructive, open world) \
             would apply"
        )),
        Some(a) => {
            for hint in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                if !a.get(hint).is_some_and(Value::is_boolean) {
                    problems.push(format!("{at}: annotation `{hint}` must be set explicitly"));
                }
            }
            if a.get("readOnlyHint") == Some(&Value::Bool(true))
                && a.get("destructiveHint") == Some(&Value::Bool(true))
            {
                problems.push(format!("{at}: a read-only tool cannot be destructive"));
            }
        }
    }
}

fn check_name(
    item: &Value,
    at: &str,
    what: &str,
    seen: Option<&mut BTreeSet<String>>,
    problems: &mut Vec<String>,
) -> Option<String> {
    let Some(name) = item.get("name").and_then(Value::as_str) else {
        problems.push(format!("{at}: the {what} has no `name`"));
        return None;
    };
    if !valid_key(name) {
        problems.push(format!(
            "{at}: {what} name `{name}` must match ^[a-zA-Z0-9_-]{{1,64}}$"
        ));
    }
    if let Some(seen) = seen
        && !seen.insert(name.to_string())
    {
        problems.push(format!("{at}: {what} name `{name}` appears more than once"));
    }
    Some(name.to_string())
}

fn check_description(item: &Value, at: &str, problems: &mut Vec<String>) {
    let text = item.get("description").and_then(Value::as_str);
    if text.is_none_or(|d| d.trim().is_empty()) {
        problems.push(format!("{at}: `description` must be a non-empty string"));
    }
}

fn check_flag(item: &Value, at: &str, key: &str, expected: bool, problems: &mut Vec<String>) {
    match item.get(key) {
        Some(Value::Bool(b)) if *b == expected => {}
        None => problems.push(format!(
            "{at}: `{key}` must be sent explicitly as {expected}"
        )),
        Some(other) => problems.push(format!("{at}: `{key}` is {other}; it must be {expected}")),
    }
}

fn check_schema(
    schema: Option<&Value>,
    at: &str,
    key: &str,
    target: Target,
    problems: &mut Vec<String>,
) {
    match schema {
        None => problems.push(format!("{at}: `{key}` is missing")),
        Some(schema) => {
            for v in check_strict(schema, target) {
                problems.push(format!("{at}: {key} {v}"));
            }
        }
    }
}

/// Union-typed nodes: `anyOf`, or a list of types.
fn count_unions(schema: &Value) -> usize {
    match schema {
        Value::Object(o) => {
            let own =
                usize::from(o.contains_key("anyOf") || o.get("type").is_some_and(Value::is_array));
            own + o.values().map(count_unions).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_unions).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_envelope_problems() {
        let bad = json!([
            {"type": "namespace", "name": "purchasing", "description": "", "tools": [
                {"type": "function", "name": "purchasing.get", "description": "x",
                 "parameters": {"type": "object", "properties": {}, "required": [],
                                "additionalProperties": false}}
            ]}
        ]);
        let p = check_export(&bad, Target::OpenAi);
        let text = p.join("\n");
        assert!(text.contains("tool_search"), "{text}");
        assert!(text.contains("`strict` must be sent explicitly"), "{text}");
        assert!(
            text.contains("`defer_loading` must be sent explicitly"),
            "{text}"
        );
        assert!(text.contains("purchasing.get"), "{text}");
        assert!(
            text.contains("`description` must be a non-empty string"),
            "{text}"
        );

        let anthropic = json!([
            {"name": "a", "description": "d", "strict": true,
             "input_schema": {"type": "object", "properties": {"x": {"type": ["string", "null"]}},
                              "required": ["x"], "additionalProperties": false}},
            {"name": "a", "description": "d", "input_schema": {"type": "object"}}
        ]);
        let text = check_export(&anthropic, Target::Anthropic).join("\n");
        assert!(text.contains("appears more than once"), "{text}");
        assert!(text.contains("null branch"), "{text}");
        assert!(text.contains("additionalProperties"), "{text}");
        assert!(text.contains("`strict` must be sent explicitly"), "{text}");

        let mcp = json!({"tools": [{"name": "t", "description": "d",
            "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
            "annotations": {"readOnlyHint": true}}]});
        let text = check_export(&mcp, Target::Mcp).join("\n");
        assert!(text.contains("destructiveHint"), "{text}");
        assert!(text.contains("openWorldHint"), "{text}");
    }

    #[test]
    fn counts_unions() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "string", "enum": ["X"]}, {"type": "null"}]},
            "c": {"type": "string"}}});
        assert_eq!(count_unions(&s), 2);
    }
}
