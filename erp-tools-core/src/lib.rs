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
//! use erp_tools_core::{Target, ToolRegistry};
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

#![warn(missing_docs)]

extern crate self as erp_tools_core;

pub mod agent;
pub mod args;
pub mod audit;
pub mod auth;
pub mod context;
pub mod db;
pub mod error;
pub mod export;
pub mod idempotency;
pub mod mcp;
pub mod registry;
pub mod report;
pub mod rules;
pub mod runtime;
pub mod schema;
pub mod store;
pub mod tool;
pub mod validate;

pub use agent::{
    Agent, Approval, Model, ModelAction, PausedRun, Policy, RunOutcome, RunStatus, ScriptedModel,
    action_signature,
};
pub use args::{NoArgs, ToolArgs};
pub use audit::{AuditEntry, AuditRecord};
pub use auth::{TokenConfig, mint, verify};
pub use context::{Principal, PrincipalBuilder, ToolContext};
pub use db::{Backend, DocumentRef, DraftTx, Provenance, ReadDb};
pub use erp_tools_macros::{ToolArgs, erp_tool};
pub use error::{ToolError, ToolErrorKind};
pub use export::{anthropic_tools, check_export, openai_tools};
pub use mcp::ErpMcpServer;
pub use registry::{Namespace, RegisteredTool, RegistryError, ToolRegistry, ToolRegistryBuilder};
pub use runtime::{CallError, CallOutcome, Outcome, ToolCall, ToolRuntime};
pub use schema::{Schema, SchemaKind, Target};
pub use store::{Database, DatabaseOptions, StoreError};
pub use tool::{ErpTool, Handler, Limit, Tier, ToolDef};

/// Everything a module declaring tools needs: `use erp_tools_core::prelude::*;`.
pub mod prelude {
    pub use crate::{
        DocumentRef, DraftTx, NoArgs, ReadDb, ToolArgs, ToolContext, ToolError, erp_tool,
    };
    pub use chrono::NaiveDate;
    pub use rust_decimal::Decimal;
    pub use schemars::{self, JsonSchema};
    pub use serde::{Deserialize, Serialize};
}

/// Paths used by generated code. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::args::DraftCheck;
    pub use ::core;
    pub use ::futures;
    pub use ::schemars;
    pub use ::serde;
    pub use ::serde_json;
    pub use ::std;
}
