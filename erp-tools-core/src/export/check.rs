//! [`check_export`]: vets an export (ours or hand-written) against the strict schema rules
//! and the envelope each provider expects.

use std::collections::BTreeSet;

use serde_json::Value;

use super::search::AnthropicToolSearch;
use crate::registry::MAX_TOOLS_PER_MODULE;
use crate::schema::{Target, check_strict, valid_key};

/// Anthropic strict tool use refuses requests with more union-typed parameters than this.
pub const ANTHROPIC_MAX_UNION_PARAMETERS: usize = 16;

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
    let (mut unions, mut searches, mut deferred) = (0, Vec::new(), 0);
    for (i, tool) in items.iter().enumerate() {
        if let Some(search) = tool
            .get("type")
            .and_then(Value::as_str)
            .and_then(AnthropicToolSearch::from_type)
        {
            check_search_tool(tool, search, &format!("[{i}]"), problems);
            searches.push(search);
            continue;
        }
        let name = check_name(tool, &format!("[{i}]"), "tool", Some(names), problems);
        let at = name.map_or_else(|| format!("[{i}]"), |n| format!("tool `{n}`"));
        check_description(tool, &at, problems);
        check_flag(tool, &at, "strict", true, problems);
        match tool.get("defer_loading") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => deferred += 1,
            Some(_) => problems.push(format!("{at}: `defer_loading` must be true or false")),
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
    match searches.len() {
        0 if deferred > 0 => problems.push(format!(
            "{deferred} tools have `defer_loading: true` but no tool-search tool is sent \
             (`{}`): Claude could never load them",
            AnthropicToolSearch::Regex.tool()
        )),
        0 | 1 => {}
        n => problems.push(format!("{n} tool-search tools are sent; send one")),
    }
}

/// A tool-search entry: its `name` is the one its `type` goes with, and it is never
/// deferred itself.
fn check_search_tool(
    tool: &Value,
    search: AnthropicToolSearch,
    at: &str,
    problems: &mut Vec<String>,
) {
    let at = format!("{at} `{}`", search.type_name());
    if tool.get("name").and_then(Value::as_str) != Some(search.tool_name()) {
        problems.push(format!(
            "{at}: its `name` must be \"{}\"",
            search.tool_name()
        ));
    }
    if tool.get("defer_loading") == Some(&Value::Bool(true)) {
        problems.push(format!(
            "{at}: the tool-search tool cannot be deferred; it is what loads the others"
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
    use serde_json::json;

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

    #[test]
    fn flags_deferral_without_a_search_tool_and_a_wrong_search_tool() {
        let tool = json!({"name": "a", "description": "d", "strict": true, "defer_loading": true,
            "input_schema": {"type": "object", "properties": {}, "required": [],
                             "additionalProperties": false}});
        let regex = AnthropicToolSearch::Regex.tool();
        assert_eq!(
            check_export(&json!([regex, tool]), Target::Anthropic),
            Vec::<String>::new()
        );
        let text = check_export(&json!([tool]), Target::Anthropic).join("\n");
        assert!(text.contains("no tool-search tool is sent"), "{text}");
        let wrong = json!({"type": "tool_search_tool_bm25_20251119",
                           "name": "tool_search_tool_regex", "defer_loading": true});
        let text = check_export(&json!([wrong, tool]), Target::Anthropic).join("\n");
        assert!(text.contains("must be \"tool_search_tool_bm25\""), "{text}");
        assert!(text.contains("cannot be deferred"), "{text}");
        let bm25 = AnthropicToolSearch::Bm25.tool();
        let text = check_export(&json!([regex, bm25, tool]), Target::Anthropic).join("\n");
        assert!(text.contains("2 tool-search tools"), "{text}");
    }
}
