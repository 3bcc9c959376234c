//! Tool definitions: what `#[erp_tool]` produces for each handler, and the types a handler
//! sees (its context, its database handle, its errors, its argument types).

pub(crate) mod args;
pub(crate) mod attachment;
pub(crate) mod cancel;
pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod handler;
pub(crate) mod handles;
pub(crate) mod input;
pub(crate) mod output;
pub(crate) mod progress;
pub(crate) mod task_support;
pub(crate) mod tier;

use serde_json::Value;

use crate::page::PageSpec;
use crate::schema::{Schema, SchemaKind};
use handler::Handler;
pub use task_support::TaskSupport;
pub use tier::{Limit, Tier};

/// Everything the framework knows about one tool. Produced by `#[erp_tool]` as a
/// `'static` value (there is no other way to build one, so a definition always agrees
/// with its handler: the tier is the handler's); collect them into a
/// [`ToolRegistry`](crate::ToolRegistry).
#[derive(Debug)]
pub struct ToolDef {
    name: &'static str,
    fn_name: &'static str,
    module: &'static str,
    scopes: &'static [&'static str],
    title: &'static str,
    description: &'static str,
    example: Option<&'static str>,
    destructive: bool,
    limits: &'static [Limit],
    args_type: &'static str,
    pub(crate) input_schema: fn() -> Schema,
    output_schema: fn() -> Value,
    handler: Handler,
    page: Option<PageSpec>,
    task: TaskSupport,
    rerun: bool,
}

/// The parts of a [`ToolDef`] that `#[erp_tool]` writes; built only by generated code
/// through the hidden module.
#[doc(hidden)]
#[derive(Debug)]
pub struct ToolDefParts {
    pub name: &'static str,
    pub fn_name: &'static str,
    pub module: &'static str,
    pub scopes: &'static [&'static str],
    pub title: &'static str,
    pub description: &'static str,
    pub example: Option<&'static str>,
    pub destructive: bool,
    pub limits: &'static [Limit],
    pub args_type: &'static str,
    pub input_schema: fn() -> Schema,
    pub output_schema: fn() -> Value,
    pub handler: Handler,
    pub page: Option<PageSpec>,
    pub task: TaskSupport,
    pub rerun: bool,
}

impl ToolDef {
    /// Builds a definition; the tier follows from the handler's kind. Generated code
    /// reaches it as `__private_0_1_0::tool_def`.
    pub(crate) const fn from_parts(parts: ToolDefParts) -> ToolDef {
        ToolDef {
            name: parts.name,
            fn_name: parts.fn_name,
            module: parts.module,
            scopes: parts.scopes,
            title: parts.title,
            description: parts.description,
            example: parts.example,
            destructive: parts.destructive,
            limits: parts.limits,
            args_type: parts.args_type,
            input_schema: parts.input_schema,
            output_schema: parts.output_schema,
            handler: parts.handler,
            page: parts.page,
            task: parts.task,
            rerun: parts.rerun,
        }
    }

    /// Tool name, `{module}_{fn name}` unless `name = ".."` was given.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The Rust function's name.
    pub fn fn_name(&self) -> &'static str {
        self.fn_name
    }
    /// Module (namespace) the tool belongs to.
    pub fn module(&self) -> &'static str {
        self.module
    }
    /// Read or draft: decided by the handler's signature (`&ReadDb` or `&mut DraftTx`).
    pub fn tier(&self) -> Tier {
        match self.handler {
            Handler::Read(_) => Tier::Read,
            Handler::Draft(_) | Handler::Remote(_) => Tier::Draft,
        }
    }
    /// Scopes a caller must hold, all of them.
    pub fn scopes(&self) -> &'static [&'static str] {
        self.scopes
    }
    /// Human-readable title.
    pub fn title(&self) -> &'static str {
        self.title
    }
    /// The doc comment: what the tool does, first sentence first.
    pub fn description(&self) -> &'static str {
        self.description
    }
    /// An example call (JSON arguments), checked against the schema when the registry is
    /// built and appended to the description.
    pub fn example(&self) -> Option<&'static str> {
        self.example
    }
    /// Set with `destructive = true`: the tool removes or overwrites data.
    pub fn destructive(&self) -> bool {
        self.destructive
    }
    /// The `readOnlyHint` and `destructiveHint` of the tool: reads are read-only, drafts
    /// destructive only when declared so.
    pub(crate) fn hints(&self) -> (bool, bool) {
        match self.tier() {
            Tier::Read => (true, false),
            Tier::Draft => (false, self.destructive),
        }
    }
    /// The MCP annotations, all four hints set explicitly from the tier (the protocol's
    /// defaults, `destructiveHint: true` and `openWorldHint: true`, are wrong for every
    /// erp-tools tool).
    pub(crate) fn annotations(&self) -> Value {
        let (read_only, destructive) = self.hints();
        serde_json::json!({
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": true,
            "openWorldHint": false,
        })
    }
    /// Hard value limits declared with `limit = ".."`.
    pub fn limits(&self) -> &'static [Limit] {
        self.limits
    }
    /// Name of the argument type, for reports.
    pub fn args_type(&self) -> &'static str {
        self.args_type
    }
    /// The strict argument schema (built once, when the registry is built). A page
    /// tool's ends with its `cursor` and `page_size` (see [`page`](crate::page)).
    pub fn input_schema(&self) -> Schema {
        let mut schema = (self.input_schema)();
        if let (Some(page), SchemaKind::Object(props)) = (self.page, &mut schema.kind) {
            props.extend(page.properties());
        }
        schema
    }
    /// The page bounds of a page tool (one returning [`Page`](crate::page::Page)).
    pub fn page(&self) -> Option<PageSpec> {
        self.page
    }
    /// Whether its calls run as MCP tasks, as declared with `task = ".."` (a registry can
    /// override it with [`ToolRegistryBuilder::task`](crate::ToolRegistryBuilder::task)).
    pub fn task_support(&self) -> TaskSupport {
        self.task
    }
    /// Whether a task of this tool taken over from a stopped replica runs its call again
    /// (`true` unless declared `rerun = false`); otherwise the task is failed, saying why.
    pub fn rerun(&self) -> bool {
        self.rerun
    }
    /// The output schema (built once, when the registry is built).
    pub fn output_schema(&self) -> Value {
        (self.output_schema)()
    }
    #[cfg(feature = "runtime")]
    pub(crate) fn handler(&self) -> Handler {
        self.handler
    }

    /// The description shown to models: the doc comment, for a page tool how to get the
    /// next page, plus the example call if given.
    pub fn full_description(&self) -> String {
        let mut text = self.description.trim_end().to_string();
        if let Some(page) = self.page {
            text.push_str("\n\n");
            text.push_str(&page.description_sentence());
        }
        if let Some(ex) = self.example {
            text.push_str("\n\nExample arguments: ");
            text.push_str(ex.trim());
        }
        text
    }
}

/// Implemented by `#[erp_tool]` on a marker type named after the handler function, so a
/// tool is registered by naming its function:
///
/// ```
/// use erp_tools_core::prelude::*;
/// use erp_tools_core::ToolRegistry;
///
/// #[derive(Deserialize, ToolArgs)]
/// struct GetPoArgs {
///     /// Purchase order number, e.g. PO-2026-0042
///     number: String,
/// }
///
/// #[derive(Serialize, JsonSchema)]
/// struct PoView {
///     number: String,
/// }
///
/// /// Get one purchase order of the caller's branch.
/// #[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
/// async fn get_po(ctx: &ToolContext, args: GetPoArgs) -> Result<PoView, ToolError> {
///     Err(ToolError::not_found("Purchase order", &args.number))
/// }
///
/// let registry = ToolRegistry::builder()
///     .module("purchasing", "Purchase orders and vendors. Cannot approve, send or post.")
///     .tool::<get_po>()
///     .build()?;
/// assert!(registry.get("purchasing_get_po").is_some());
/// # Ok::<(), erp_tools_core::RegistryError>(())
/// ```
pub trait ErpTool {
    /// The tool's definition.
    fn definition() -> &'static ToolDef;
}

/// Collects tool definitions by handler name: `tools![create_po_draft, get_po]` is a
/// `Vec<&'static ToolDef>` for [`ToolRegistryBuilder::tools`](crate::ToolRegistryBuilder::tools).
#[macro_export]
macro_rules! tools {
    ($($tool:path),* $(,)?) => {
        ::std::vec![$(<$tool as $crate::ErpTool>::definition()),*]
    };
}
