//! # erp-tools
//!
//! A safe tool surface for AI agents over an ERP. Write ordinary typed async handlers,
//! put `#[erp_tool]` on each, and the framework:
//!
//! - generates one strict JSON schema per tool, rendered for OpenAI, Anthropic and MCP;
//! - refuses to compile unsafe tool shapes (a `post` tier, a `branch_id` or `unit_price`
//!   argument, free-form JSON, a draft without `client_ref`, ...);
//! - injects the caller's identity from the authenticated token ([`ToolContext`]);
//! - claims an idempotency key in the same transaction as the write;
//! - audits every call, including denied ones;
//! - serves the tools over MCP with a per-caller tool list.
//!
//! ```
//! use erp_tools_core::prelude::*;
//!
//! #[derive(Deserialize, ToolArgs)]
//! struct PoDraftArgs {
//!     /// Vendor code from purchasing_search_vendors, e.g. V-00231
//!     vendor_code: String,
//!     /// Your own id for this order within the run. Reuse it when retrying.
//!     client_ref: String,
//!     /// Why this order is needed. Shown to the reviewer.
//!     note: Option<String>,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct PoDraft {
//!     number: String,
//! }
//!
//! /// Create a DRAFT purchase order for the caller's branch.
//! #[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
//! async fn create_po_draft(
//!     ctx: &ToolContext,
//!     tx: &mut DraftTx,
//!     args: PoDraftArgs,
//! ) -> Result<PoDraft, ToolError> {
//!     // The branch and the user come from the token, never from the arguments.
//!     let number = format!("PO-{}-{}", ctx.branch_code(), args.vendor_code);
//!     // ... insert the draft through tx.conn(), then record it with the idempotency key:
//!     tx.record_document(DocumentRef { doc_type: "purchase_order".into(), id: 1, number: number.clone() });
//!     Ok(PoDraft { number })
//! }
//!
//! let registry = ToolRegistry::builder()
//!     .module("purchasing", "Purchase orders. Cannot approve, send or post orders.")
//!     .tool::<create_po_draft>()
//!     .build()?;
//! let schema = registry.get("purchasing_create_po_draft").unwrap().input_schema(Target::OpenAi);
//! assert_eq!(schema["required"], serde_json::json!(["vendor_code", "client_ref", "note"]));
//! assert_eq!(schema["properties"]["note"]["type"], serde_json::json!(["string", "null"]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Cargo features
//!
//! Declaring tools, the registry, schemas, provider exports and the surface report need
//! no feature. The rest is opt-in:
//!
//! | feature | what it adds |
//! |---|---|
//! | `sqlite` (default) | the call pipeline on embedded SQLite |
//! | `postgres` | the call pipeline on PostgreSQL |
//! | `runtime` | [`ToolRuntime`] and [`Database`] without a backend (implied by both above) |
//! | `mcp-http` (default) | [`mcp::router`]: MCP over streamable HTTP behind bearer tokens (axum) |
//! | `mcp-stdio` (default) | [`mcp::serve_stdio`]: MCP over stdio |
//! | `auth` | [`auth`]: JWT verification and development tokens (implied by `mcp-http`) |
//! | `agent` (default) | [`agent`]: the agent loop, its policy, brakes and approvals |
//!
//! ## Where things are
//!
//! One path per item: everyday types at the crate root, and one module per optional
//! surface ([`agent`], [`mcp`], [`auth`]). A call's path through the code is described
//! in the README's ARCHITECTURE section.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate self as erp_tools_core;

mod registry;
mod schema;
mod text;
mod tool;
mod validate;

#[cfg(feature = "runtime")]
mod audit;
#[cfg(feature = "runtime")]
mod idempotency;
#[cfg(feature = "runtime")]
mod runtime;
#[cfg(feature = "runtime")]
mod store;

#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "mcp")]
pub mod mcp;

pub use erp_tools_macros::{ToolArgs, erp_tool, tool_args, tool_output};
pub use registry::export::{
    ANTHROPIC_MAX_UNION_PARAMETERS, anthropic_tools, anthropic_tools_for, check_export, mcp_tools,
    mcp_tools_for, openai_tools, openai_tools_for,
};
pub use registry::report::{Answer, SurfaceReport, ToolReport};
pub use registry::{
    MAX_TOOLS_PER_MODULE, Namespace, RegisteredTool, RegistryError, ToolRegistry,
    ToolRegistryBuilder, WARN_TOOLS_LOADED,
};
pub use schema::{
    MAX_DEPTH, MAX_ENUM_VALUES, Property, Schema, SchemaKind, StrictViolation, StringFormat,
    Target, check_strict,
};
pub use tool::args::{NoArgs, ToolArgs};
pub use tool::context::{Principal, PrincipalBuilder, ToolContext};
pub use tool::error::{ToolError, ToolErrorKind};
pub use tool::handles::{Backend, DocumentRef, DraftTx, Provenance, ReadDb};
pub use tool::output::ModelText;
pub use tool::{ErpTool, Limit, Tier, ToolDef};
pub use validate::{ArgumentErrors, ArgumentProblem, canonical_hash, canonical_json};

#[cfg(feature = "runtime")]
pub use audit::{AuditEntry, AuditId, AuditRecord, Outcome};
#[cfg(feature = "runtime")]
pub use runtime::{CallError, CallOutcome, ToolCall, ToolRuntime};
/// The `sqlx` this crate is built with: handlers reach the database through it
/// (`sqlx::query(..).fetch_one(tx.conn())`), without a dependency of their own.
#[cfg(feature = "runtime")]
pub use sqlx;
#[cfg(feature = "runtime")]
pub use store::{Database, DatabaseOptions, StoreError};

/// Everything a module declaring and registering tools needs:
/// `use erp_tools_core::prelude::*;`.
pub mod prelude {
    pub use crate::{
        DocumentRef, DraftTx, ErpTool, ModelText, NoArgs, ReadDb, RegistryError, Target, ToolArgs,
        ToolContext, ToolError, ToolRegistry, erp_tool, tool_args, tool_output, tools,
    };
    pub use chrono::NaiveDate;
    pub use rust_decimal::Decimal;
    pub use schemars::{self, JsonSchema};
    pub use serde::{self, Deserialize, Serialize};
    #[cfg(feature = "runtime")]
    pub use sqlx;
}

/// Paths used by generated code. Not public API: its name carries this crate's version,
/// so a macro crate of another version fails to compile against it instead of
/// misbehaving.
#[doc(hidden)]
pub mod __private_0_1_0 {
    pub use crate::schema::output_schema_for;
    pub use crate::text::undecodable_arguments;
    pub use crate::tool::args::DraftCheck;
    pub use crate::tool::handler::{Handler, HandlerFuture, HandlerOutput};
    pub use crate::tool::output::{Rendered, TextOf, Unrendered};
    pub use crate::tool::{ErpTool, ToolDef, ToolDefParts};
    pub use crate::{
        DraftTx, Limit, NoArgs, Property, ReadDb, Schema, SchemaKind, StringFormat, Tier, ToolArgs,
        ToolContext, ToolError,
    };
    pub use ::core;
    pub use ::futures;
    pub use ::schemars;
    pub use ::serde;
    pub use ::serde_json;
    pub use ::std;
}

#[cfg(test)]
mod private_module_tests {
    /// The hidden module's name must follow the crate version (the macro crate computes
    /// the same name from its own version).
    #[test]
    fn private_module_is_named_after_the_version() {
        let expected = format!(
            "__private_{}",
            env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_")
        );
        assert_eq!(expected, "__private_0_1_0", "rename the module in lib.rs");
    }
}
