//! A registry's tools as each provider is shown them, checked by the export checker.

use erp_tools_core::export::{
    anthropic_tools, anthropic_tools_for, check_export, mcp_tools, mcp_tools_for, openai_tools,
    openai_tools_for,
};
use erp_tools_core::{Principal, Target, ToolRegistry};
use serde_json::Value;

/// `registry`'s tools exported for `target` (only those `who` may use, when given), after
/// asserting that the export checker finds no problem in them.
pub fn checked_export(registry: &ToolRegistry, target: Target, who: Option<&Principal>) -> Value {
    let export = match (target, who) {
        (Target::OpenAi, None) => openai_tools(registry),
        (Target::OpenAi, Some(who)) => openai_tools_for(registry, who),
        (Target::Anthropic, None) => anthropic_tools(registry),
        (Target::Anthropic, Some(who)) => anthropic_tools_for(registry, who),
        (Target::Mcp, None) => mcp_tools(registry),
        (Target::Mcp, Some(who)) => mcp_tools_for(registry, who),
    };
    let problems = check_export(&export, target);
    assert_eq!(problems, Vec::<String>::new(), "{target:?}");
    export
}
