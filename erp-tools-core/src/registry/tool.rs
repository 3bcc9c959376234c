//! A registered tool ([`RegisteredTool`]: its definition with every schema rendered
//! once) and a module's namespace ([`Namespace`]).

use std::sync::Arc;

use serde_json::Value;

use crate::schema::{Schema, Target};
use crate::tool::context::Principal;
use crate::tool::{TaskSupport, ToolDef};
use crate::validate::ArgumentErrors;

/// One module's namespace: its description (which also says what the module cannot do)
/// and its tools in a stable order.
#[derive(Debug)]
pub struct Namespace {
    /// Module name, the tools' name prefix.
    pub name: &'static str,
    /// What the module does and what it cannot do.
    pub description: String,
    /// Indexes into [`ToolRegistry::tools`](super::ToolRegistry::tools), sorted by tool name.
    pub tools: Vec<usize>,
}

/// A registered tool with its schemas built and rendered once.
#[derive(Debug)]
pub struct RegisteredTool {
    /// The definition produced by `#[erp_tool]`.
    pub(crate) def: &'static ToolDef,
    /// The argument schema model (used for server-side validation).
    pub(crate) schema: Schema,
    /// The argument schema rendered per target, in [`Target::ALL`] order.
    pub(super) rendered: [Arc<Value>; 3],
    /// The output schema.
    pub(crate) output_schema: Arc<Value>,
    /// The description shown to models (doc comment plus example).
    pub(crate) description: String,
    /// The MCP App card its results open (`ui://..`), from [`ToolRegistryBuilder::card`](super::ToolRegistryBuilder::card).
    pub(super) card: Option<&'static str>,
    /// Whether its calls run as MCP tasks, from [`ToolRegistryBuilder::task`](super::ToolRegistryBuilder::task).
    pub(super) task: TaskSupport,
    /// Whether a task taken over runs again (the tool's `rerun`, unless the registry
    /// declared [`no_rerun`](super::ToolRegistryBuilder::no_rerun)).
    pub(super) rerun: bool,
}

impl RegisteredTool {
    /// The definition produced by `#[erp_tool]`.
    pub fn def(&self) -> &'static ToolDef {
        self.def
    }

    /// The argument schema model (what server-side validation checks).
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The output schema (with `replayed` for draft tools), as MCP's `outputSchema`.
    pub fn output_schema(&self) -> &Arc<Value> {
        &self.output_schema
    }

    /// The description shown to models: the doc comment, plus the example if declared.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The argument schema rendered for `target` (built once, shared).
    pub fn input_schema(&self, target: Target) -> &Arc<Value> {
        let i = Target::ALL.iter().position(|t| *t == target).unwrap_or(0);
        &self.rendered[i]
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        self.def.name()
    }

    /// The `ui://` resource of the MCP App card that shows this tool's results, if one
    /// was linked with [`ToolRegistryBuilder::card`](super::ToolRegistryBuilder::card).
    pub fn card(&self) -> Option<&'static str> {
        self.card
    }

    /// Whether its calls run as MCP tasks ([`ToolRegistryBuilder::task`](super::ToolRegistryBuilder::task)).
    pub fn task_support(&self) -> TaskSupport {
        self.task
    }

    /// Whether a task of this tool taken over from a replica that stopped runs its call
    /// again; otherwise it is failed, saying why ([`ToolRegistryBuilder::no_rerun`](super::ToolRegistryBuilder::no_rerun)).
    pub fn task_rerun(&self) -> bool {
        self.rerun
    }

    /// Validates and normalises `arguments` against the tool's strict schema, as the
    /// server does before every call: absent optional fields become `null`, decimals take
    /// one canonical form. Every problem is reported.
    pub fn validate(&self, arguments: &Value) -> Result<Value, ArgumentErrors> {
        crate::validate::validate(&self.schema, arguments)
    }

    /// Whether `principal` holds every scope the tool needs.
    pub fn allowed_for(&self, principal: &Principal) -> bool {
        self.def.scopes().iter().all(|s| principal.has_scope(s))
    }

    /// The scopes the tool needs that `principal` lacks.
    pub fn missing_scopes(&self, principal: &Principal) -> Vec<&'static str> {
        self.def
            .scopes()
            .iter()
            .copied()
            .filter(|s| !principal.has_scope(s))
            .collect()
    }
}
