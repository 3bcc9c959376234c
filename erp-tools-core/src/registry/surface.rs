//! The registry's tool surface as lock entries (see [`crate::lock`]): every module's
//! description, and every tool's fields in the order the lock writes them. The registry
//! hashes them when it is built ([`ToolRegistry::fingerprint`](super::ToolRegistry::fingerprint)).

use serde_json::Value;

use super::tool::{Namespace, RegisteredTool};
use crate::lock::entry::Entry;
use crate::lock::fingerprint::Fingerprint;
use crate::lock::text;
use crate::schema::Target;

/// The entries of the surface of `tools` in `namespaces`: modules, then tools.
pub(crate) fn entries(tools: &[RegisteredTool], namespaces: &[Namespace]) -> Vec<Entry> {
    let mut entries = Vec::new();
    for ns in namespaces {
        entries.push(Entry::new("module", ns.name).field("description", &ns.description));
    }
    for tool in tools {
        entries.push(tool_entry(tool));
    }
    entries
}

/// The fingerprint of the surface of `tools` in `namespaces`.
pub(crate) fn fingerprint(tools: &[RegisteredTool], namespaces: &[Namespace]) -> Fingerprint {
    Fingerprint::of(&text::body(&entries(tools, namespaces)))
}

/// A tool's entry: the fields in the order the lock writes them.
fn tool_entry(tool: &RegisteredTool) -> Entry {
    let def = tool.def();
    let mut entry = Entry::new("tool", tool.name())
        .field("module", def.module())
        .field("tier", def.tier().as_str())
        .field("scopes", def.scopes().join(" "))
        .field("title", def.title().trim())
        .field("annotations", compact(&def.annotations()))
        .field("card", tool.card().unwrap_or(""))
        .field("task", task(tool))
        .field("opt_ins", opt_ins(tool));
    let kinds = kinds(tool);
    if !kinds.is_empty() {
        entry = entry.field("kinds", kinds);
    }
    entry = entry.field("description", tool.description());
    for target in Target::ALL {
        entry = entry.field(
            &format!("schema {}", target_key(target)),
            pretty(tool.input_schema(target)),
        );
    }
    entry.field("output_schema", pretty(tool.output_schema()))
}

/// The fields the tool takes although a rule refuses them, each allowed by the team's
/// declaration (`#[erp(allow = "..", reason = "..")]`): one line each, `path category:
/// reason`; empty when there is none.
fn opt_ins(tool: &RegisteredTool) -> String {
    let mut props = Vec::new();
    crate::schema::paths::fields(tool.schema(), "", &mut props);
    let mut lines: Vec<String> = props
        .iter()
        .filter_map(|(path, p)| {
            p.opt_in
                .as_ref()
                .map(|o| format!("{path} {}: {}", o.category, o.reason))
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

/// The kinds the team declared for fields whose names do not say them
/// (`#[erp(kind = "..", of = "..")]`): one line each, `path kind` or `path reference of
/// vendor`; empty when there is none.
fn kinds(tool: &RegisteredTool) -> String {
    let mut props = Vec::new();
    crate::schema::paths::fields(tool.schema(), "", &mut props);
    let mut lines: Vec<String> = props
        .iter()
        .filter_map(|(path, p)| {
            p.kind.as_ref().map(|k| match &k.of {
                Some(of) => format!("{path} {} of {of}", k.kind),
                None => format!("{path} {}", k.kind),
            })
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

/// How the tool's calls run as MCP tasks: empty for none, `optional` or `required`, and
/// whether a task taken over runs again.
fn task(tool: &RegisteredTool) -> String {
    let support = tool.task_support();
    match (support.allows_task(), tool.task_rerun()) {
        (false, _) => String::new(),
        (true, true) => support.as_str().to_string(),
        (true, false) => format!(
            "{}, failed (not run again) when taken over",
            support.as_str()
        ),
    }
}

fn target_key(target: Target) -> &'static str {
    match target {
        Target::OpenAi => "openai",
        Target::Anthropic => "anthropic",
        Target::Mcp => "mcp",
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
