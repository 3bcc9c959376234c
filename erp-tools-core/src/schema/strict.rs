//! The strict subset every provider accepts, as a checker over rendered JSON schemas
//! (SPEC S).

use serde_json::{Value, json};

use super::model::{MAX_DEPTH, MAX_ENUM_VALUES, Target};

/// The keywords the strict subset allows.
const ALLOWED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "description",
    "format",
    "pattern",
];

/// The `format` values the strict subset allows.
const ALLOWED_FORMATS: &[&str] = &["date", "date-time", "time", "email", "uuid"];

/// One violation of the strict schema rules (SPEC S), with the JSON path where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictViolation {
    /// Where in the schema, e.g. `properties.lines.items.properties.uom`.
    pub path: String,
    /// What rule was broken.
    pub message: String,
}

impl std::fmt::Display for StrictViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.message)
    }
}

/// Checks a rendered input schema against the strict rules for `target`; returns every
/// violation found (an empty list means the schema is accepted).
///
/// This checks JSON from any source, so it can vet a schema written by hand or produced by
/// another generator as well as this crate's own renderings.
pub fn check_strict(schema: &Value, target: Target) -> Vec<StrictViolation> {
    let mut out = Vec::new();
    match schema.as_object() {
        Some(root) => {
            if root.get("type") != Some(&json!("object")) {
                out.push(violation("", "the root must be `\"type\": \"object\"`"));
            }
            for k in ["$ref", "anyOf", "oneOf", "allOf"] {
                if root.contains_key(k) {
                    out.push(violation("", format!("the root must not use `{k}`")));
                }
            }
        }
        None => out.push(violation("", "the root must be a JSON object")),
    }
    check_node(schema, target, "", 1, &mut out);
    if target == Target::Mcp {
        out.extend(header_violations(schema));
    }
    out
}

/// The SEP-2243 rules for `x-mcp-header` in an MCP input schema: only on a property
/// reached from the root through `properties` alone, a valid header name, unique
/// case-insensitively, on a required text, integer or boolean value. Clients drop a tool
/// that breaks one, so the registry refuses it.
pub(crate) fn header_violations(schema: &Value) -> Vec<StrictViolation> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashMap::new();
    walk_headers(schema, "", false, true, &mut seen, &mut out);
    out
}

fn walk_headers(
    node: &Value,
    path: &str,
    here: bool,
    chain: bool,
    seen: &mut std::collections::HashMap<String, String>,
    out: &mut Vec<StrictViolation>,
) {
    let Some(obj) = node.as_object() else { return };
    if let Some(header) = obj.get("x-mcp-header") {
        let problem = match (here, header.as_str()) {
            (false, _) => Some(
                "`x-mcp-header` must be on a property reached from the root through `properties` alone (not the root, a list item or a union branch)"
                    .to_string(),
            ),
            (true, None) => Some("`x-mcp-header` must be a string".to_string()),
            (true, Some(name)) => erp_tools_internals::names::header_name_problem(name)
                .or_else(|| match obj.get("type") {
                    Some(Value::String(t)) if ["string", "integer", "boolean"].contains(&t.as_str()) => None,
                    _ => Some(format!(
                        "`x-mcp-header` `{name}` must be on a required text, integer or boolean value (clients refuse it on optional, list, object or fractional values)"
                    )),
                })
                .or_else(|| {
                    seen.insert(name.to_ascii_lowercase(), path.to_string())
                        .map(|first| {
                            format!(
                                "`x-mcp-header` `{name}` is also given at `{first}` (header names are case-insensitive)"
                            )
                        })
                }),
        };
        if let Some(message) = problem {
            out.push(violation(path, message));
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            let sub_path = join(path, &format!("properties.{name}"));
            walk_headers(sub, &sub_path, chain, chain, seen, out);
        }
    }
    if let Some(items) = obj.get("items") {
        walk_headers(items, &join(path, "items"), false, false, seen, out);
    }
    if let Some(branches) = obj.get("anyOf").and_then(Value::as_array) {
        for (i, b) in branches.iter().enumerate() {
            walk_headers(
                b,
                &join(path, &format!("anyOf.{i}")),
                false,
                false,
                seen,
                out,
            );
        }
    }
}

fn violation(path: &str, message: impl Into<String>) -> StrictViolation {
    StrictViolation {
        path: if path.is_empty() {
            "<root>".into()
        } else {
            path.to_string()
        },
        message: message.into(),
    }
}

fn join(path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}

fn check_node(
    node: &Value,
    target: Target,
    path: &str,
    depth: usize,
    out: &mut Vec<StrictViolation>,
) {
    let Some(obj) = node.as_object() else {
        out.push(violation(path, "every schema must be a JSON object"));
        return;
    };
    if depth > MAX_DEPTH {
        out.push(violation(
            path,
            format!("nesting deeper than {MAX_DEPTH} levels"),
        ));
        return;
    }
    for key in obj.keys() {
        // MCP's `x-mcp-header` (SEP-2243) is checked by `header_violations`.
        if target == Target::Mcp && key == "x-mcp-header" {
            continue;
        }
        if !ALLOWED_KEYWORDS.contains(&key.as_str()) {
            out.push(violation(
                path,
                format!("keyword `{key}` is outside the strict subset"),
            ));
        }
    }
    if let Some(p) = obj.get("pattern") {
        if target == Target::Anthropic {
            out.push(violation(
                path,
                "Anthropic strict: `pattern` is left to the description and the server's validation",
            ));
        } else if !p.is_string() {
            out.push(violation(path, "`pattern` must be a string"));
        }
    }
    if let Some(f) = obj.get("format") {
        match f.as_str() {
            Some(f) if ALLOWED_FORMATS.contains(&f) => {}
            _ => out.push(violation(path, format!("format {f} is not allowed"))),
        }
    }
    if let Some(values) = obj.get("enum") {
        match values.as_array() {
            Some(v) if v.len() > MAX_ENUM_VALUES => out.push(violation(
                path,
                format!("enum has {} values, more than {MAX_ENUM_VALUES}", v.len()),
            )),
            Some(_) => {}
            None => out.push(violation(path, "`enum` must be an array")),
        }
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"number") {
        out.push(violation(
            path,
            "JSON numbers with fractions are not allowed: use a decimal string or integer minor units",
        ));
    }
    if target == Target::Anthropic && types.contains(&"null") {
        out.push(violation(
            path,
            "Anthropic strict: optional fields are left out of `required`, without a null branch",
        ));
    }
    if types.contains(&"object") {
        let props = obj.get("properties").and_then(Value::as_object);
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(violation(
                path,
                "object without `additionalProperties: false`",
            ));
        }
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            None => out.push(violation(path, "object without `properties`")),
            Some(props) => {
                for (name, sub) in props {
                    if !valid_key(name) {
                        out.push(violation(
                            path,
                            format!("property key `{name}` does not match ^[a-zA-Z0-9_-]{{1,64}}$"),
                        ));
                    }
                    let sub_path = join(path, &format!("properties.{name}"));
                    let listed = required.contains(&name.as_str());
                    if target != Target::Anthropic && !listed {
                        out.push(violation(
                            &sub_path,
                            "every property must be listed in `required` (optional ones as nullable)",
                        ));
                    }
                    if target == Target::Anthropic && listed && is_nullable(sub) {
                        out.push(violation(
                            &sub_path,
                            "a required property must not be nullable",
                        ));
                    }
                    check_node(sub, target, &sub_path, depth + 1, out);
                }
                for r in &required {
                    if !props.contains_key(*r) {
                        out.push(violation(
                            path,
                            format!("`{r}` is required but not a property"),
                        ));
                    }
                }
            }
        }
    }
    if let Some(items) = obj.get("items") {
        check_node(items, target, &join(path, "items"), depth + 1, out);
    }
    if let Some(any_of) = obj.get("anyOf") {
        match any_of.as_array() {
            Some(branches) => {
                for (i, b) in branches.iter().enumerate() {
                    if target == Target::Anthropic && b.get("type") == Some(&json!("null")) {
                        out.push(violation(
                            path,
                            "Anthropic strict: optional fields are left out of `required`, without a null branch",
                        ));
                        continue;
                    }
                    check_node(b, target, &join(path, &format!("anyOf.{i}")), depth, out);
                }
            }
            None => out.push(violation(path, "`anyOf` must be an array")),
        }
    }
}

fn is_nullable(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::Array(ts)) if ts.contains(&json!("null")) => return true,
        Some(Value::String(t)) if t == "null" => return true,
        _ => {}
    }
    node.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|bs| bs.iter().any(|b| b.get("type") == Some(&json!("null"))))
}

/// Whether a tool name or property key is safe on every provider: `^[a-zA-Z0-9_-]{1,64}$`.
/// The same rule `#[erp_tool]` and `#[derive(ToolArgs)]` apply at compile time.
pub(crate) fn valid_key(name: &str) -> bool {
    erp_tools_internals::names::valid_key(name)
}
