//! Tool definitions: what `#[erp_tool]` produces for each handler.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::Value;

use crate::context::ToolContext;
use crate::db::{DraftTx, ReadDb};
use crate::error::ToolError;
use crate::schema::Schema;

/// What a tool may do. There is no posting tier: posting, approving, sending and
/// cancelling belong to a person in the ERP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Looks things up. Gets a read-only database handle; cannot write.
    Read,
    /// Creates a document in status *draft* for a person to review and submit in the ERP.
    /// Gets the write transaction in which the idempotency key was claimed.
    Draft,
}

impl Tier {
    /// `"read"` or `"draft"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Draft => "draft",
        }
    }

    /// Whether calls of this tier write (and so need an idempotency key).
    pub fn writes(self) -> bool {
        matches!(self, Tier::Draft)
    }
}

/// A hard value limit declared on a tool with `limit = "<path> <= <max>"`.
///
/// `path` names a numeric argument (`amount`), or a numeric field of an array's items
/// (`lines[].qty`), in which case the limit applies to the sum over all items. The agent
/// policy checks limits before approvals, so an approved action over a limit is still
/// denied; the runtime checks them again on every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limit {
    /// Argument path, e.g. `amount` or `lines[].qty`.
    pub path: &'static str,
    /// Largest accepted value (or sum), as a decimal string.
    pub max: &'static str,
}

/// The future a type-erased handler returns.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// A read handler with its arguments still as JSON (already validated against the schema).
pub type ReadHandlerFn = for<'a> fn(&'a ToolContext, &'a ReadDb, Value) -> HandlerFuture<'a>;

/// A draft handler with its arguments still as JSON (already validated against the schema).
pub type DraftHandlerFn = for<'a> fn(&'a ToolContext, &'a mut DraftTx, Value) -> HandlerFuture<'a>;

/// The entry point the runtime calls. The tier decides which database handle the handler
/// gets, so a read tool is never given a write handle.
#[derive(Clone, Copy)]
pub enum Handler {
    /// A read tool's entry point.
    Read(ReadHandlerFn),
    /// A draft tool's entry point.
    Draft(DraftHandlerFn),
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Handler::Read(_) => "Handler::Read",
            Handler::Draft(_) => "Handler::Draft",
        })
    }
}

/// Everything the framework knows about one tool. Produced by `#[erp_tool]` as a
/// `'static` value; collect them into a [`ToolRegistry`](crate::ToolRegistry).
#[derive(Debug)]
pub struct ToolDef {
    /// Tool name, `{module}_{fn name}` unless `name = ".."` was given.
    pub name: &'static str,
    /// The Rust function's name.
    pub fn_name: &'static str,
    /// Module (namespace) the tool belongs to.
    pub module: &'static str,
    /// Read or draft.
    pub tier: Tier,
    /// Scopes a caller must hold, all of them.
    pub scopes: &'static [&'static str],
    /// Human-readable title.
    pub title: &'static str,
    /// The doc comment: what the tool does, first sentence first.
    pub description: &'static str,
    /// An example call (JSON arguments), checked against the schema when the registry is
    /// built and appended to the description.
    pub example: Option<&'static str>,
    /// Set with `destructive = true`: the tool removes or overwrites data.
    pub destructive: bool,
    /// Hard value limits.
    pub limits: &'static [Limit],
    /// Name of the argument type, for reports.
    pub args_type: &'static str,
    /// The strict argument schema (called once, when the registry is built).
    pub input_schema: fn() -> Schema,
    /// The output schema (called once, when the registry is built).
    pub output_schema: fn() -> Value,
    /// The entry point.
    pub handler: Handler,
}

impl ToolDef {
    /// The description shown to models: the doc comment, plus the example call if given.
    pub fn full_description(&self) -> String {
        match self.example {
            Some(ex) => format!(
                "{}\n\nExample arguments: {}",
                self.description.trim_end(),
                ex.trim()
            ),
            None => self.description.trim_end().to_string(),
        }
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
