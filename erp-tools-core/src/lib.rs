// The README is the front page: every Rust block in it is a doctest of this crate.
#![doc = include_str!("../README.md")]
#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate self as erp_tools_core;

pub mod export;
pub mod lock;
pub mod page;
pub mod registry;
pub mod remote;
pub mod report;
pub mod schema;
mod text;
mod tool;
pub mod validate;

#[cfg(feature = "runtime")]
mod audit;
#[cfg(feature = "runtime")]
mod idempotency;
#[cfg(feature = "runtime")]
mod runtime;
#[cfg(feature = "runtime")]
mod store;
#[cfg(feature = "runtime")]
pub mod telemetry;

#[cfg(feature = "stderr-log")]
mod logging;

/// The guide's chapters (`guide/src/`, an mdBook): every Rust block in them is a doctest of
/// this crate, as the README's are, so the guide cannot drift from the API.
#[cfg(doctest)]
mod guide {
    macro_rules! chapters {
        ($($name:ident = $file:literal),* $(,)?) => {
            $(#[doc = include_str!(concat!("../../guide/src/", $file))] struct $name;)*
        };
    }
    chapters! {
        Introduction = "introduction.md",
        RunningTheExample = "running-the-example.md",
        FirstServer = "first-server.md",
        Declaring = "declaring.md",
        Identity = "identity.md",
        Drafts = "drafts.md",
        Pages = "pages.md",
        Tasks = "tasks.md",
        Agent = "agent.md",
        Review = "review.md",
        Operations = "operations.md",
        Replicas = "replicas.md",
        Telemetry = "telemetry.md",
        Audit = "audit.md",
        SurfaceLock = "surface-lock.md",
        Reference = "reference.md",
    }
}

#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "review")]
pub mod review;

pub use erp_tools_macros::{ToolArgs, erp_tool, tool_args, tool_output};
pub use registry::{RegistryError, TaskSupport, ToolRegistry, ToolRegistryBuilder};
pub use schema::Target;
pub use tool::args::{NoArgs, ToolArgs};
pub use tool::attachment::{Attachment, MAX_ATTACHMENT_BYTES};
pub use tool::context::{Principal, PrincipalBuilder, ToolContext};
pub use tool::error::{ToolError, ToolErrorKind};
pub use tool::handles::{Backend, DocumentId, DocumentRef, DraftTx, Provenance, ReadDb};
pub use tool::input::{InputAnswers, InputRequest};
pub use tool::output::ModelText;
pub use tool::{ErpTool, Limit, Tier, ToolDef};

#[cfg(feature = "runtime")]
pub use audit::{AuditEntry, AuditId, AuditRecord, Outcome};
#[cfg(feature = "stderr-log")]
pub use logging::log_to_stderr;
#[cfg(feature = "runtime")]
pub use runtime::run_id::principal_run_id;
#[cfg(feature = "runtime")]
pub use runtime::{
    CallError, CallKey, CallOutcome, DEFAULT_CURSOR_TTL, DEFAULT_READ_ATTEMPT_AFTER, Preview,
    PreviewHook, PreviewKind, ResultBudget, ToolCall, ToolRuntime,
};
/// The `serde_json` this crate is built with (`serde_json::json!` for arguments in tests
/// and scripted models), without a dependency of your own.
pub use serde_json;
/// The `sqlx` this crate is built with: handlers reach the database through it
/// (`sqlx::query(..).fetch_one(tx.conn())`), without a dependency of their own.
#[cfg(feature = "runtime")]
pub use sqlx;
#[cfg(feature = "runtime")]
pub use store::{
    AuditArchive, AuditDigest, AuditReader, ChainHead, ChainProblem, ChainReport, DIGEST_FORMAT,
    Database, DatabaseOptions, DigestFinding, DigestKey, DigestOptions, DigestPublicKey,
    DigestReport, DigestSink, DirectorySink, OpenCall, Recovered, RunOwner, SignedDigest,
    StoreError, UnlinkedRow,
};

/// Everything a module declaring and registering tools needs:
/// `use erp_tools_core::prelude::*;`.
pub mod prelude {
    pub use crate::page::{Keyset, Page, PageRequest};
    pub use crate::{
        Attachment, DocumentRef, DraftTx, ErpTool, ModelText, NoArgs, ReadDb, RegistryError,
        Target, ToolArgs, ToolContext, ToolError, ToolRegistry, erp_tool, tool_args, tool_output,
        tools,
    };
    pub use chrono::NaiveDate;
    pub use rust_decimal::Decimal;
    pub use schemars::{self, JsonSchema};
    pub use serde::{self, Deserialize, Serialize};
    #[cfg(feature = "runtime")]
    pub use sqlx;
}

/// The compile-time rules of `#[derive(ToolArgs)]` and `#[erp_tool]` that are checked as
/// trait bounds, so a compile error can name them:
/// [`DerivedToolArgs`](rules::DerivedToolArgs) (the type derives `ToolArgs`),
/// [`DraftGuard`](rules::DraftGuard) (no
/// field a draft tool may not take, at any depth, and every field of a kind a draft may
/// hold) and [`ClientRefIn`](rules::ClientRefIn)
/// (a draft tool's arguments carry `client_ref`). The derive and the attribute implement
/// and require them; application code never names them.
pub mod rules {
    pub use crate::tool::args::{
        CheckTier, ClientRefIn, DerivedToolArgs, DraftGuard, DraftTier, HasClientRef,
    };
}

/// Paths used by generated code. Not public API: its name carries this crate's version,
/// so a macro crate of another version fails to compile against it instead of
/// misbehaving (the macro crate's tests check that the name follows the version).
#[doc(hidden)]
pub mod __private_0_1_0 {
    pub use crate::page::{Page, PageRequest, PageSpec};
    pub use crate::remote::RemoteDraft;
    pub use crate::schema::output::output_schema_for;
    pub use crate::schema::{Bounds, Property, Schema, SchemaKind, StringFormat};
    pub use crate::text::undecodable_arguments;
    pub use crate::tool::args::{
        CheckTier, ClientRefIn, DerivedToolArgs, DraftGuard, DraftTier, HasClientRef, shape,
    };
    pub use crate::tool::handler::{Handler, HandlerFuture, HandlerOutput};
    pub use crate::tool::output::{Rendered, TextOf, Unrendered};
    pub use crate::tool::{ErpTool, TaskSupport, ToolDef, ToolDefParts};
    pub use crate::{DraftTx, Limit, NoArgs, ReadDb, Tier, ToolArgs, ToolContext, ToolError};
    pub use ::core;
    pub use ::futures;
    pub use ::schemars;
    pub use ::serde;
    pub use ::serde_json;
    pub use ::std;

    /// Builds a tool's definition from the parts `#[erp_tool]` writes; the tier follows
    /// from the handler's kind.
    pub const fn tool_def(parts: ToolDefParts) -> ToolDef {
        ToolDef::from_parts(parts)
    }

    /// The page a page tool's call asked for (the runtime sets it on the context; a
    /// first page of the declared default size otherwise).
    pub fn page_request(ctx: &ToolContext, spec: PageSpec) -> PageRequest {
        ctx.page()
            .cloned()
            .unwrap_or_else(|| PageRequest::first(spec.default_size))
    }

    /// A page tool's output, for the runtime to fit and seal.
    pub fn page_output<T: serde::Serialize>(
        page: Page<T>,
        text: impl Fn(&T) -> Option<String>,
    ) -> ::core::result::Result<HandlerOutput, ToolError> {
        let (items, keys, has_more) = page.into_parts();
        let lines = items.iter().map(text).collect();
        let items = items
            .iter()
            .map(serde_json::to_value)
            .collect::<::core::result::Result<Vec<_>, _>>()
            .map_err(ToolError::internal)?;
        Ok(HandlerOutput {
            value: serde_json::Value::Null,
            text: None,
            page: Some(crate::tool::handler::PageParts {
                items,
                keys,
                lines,
                has_more,
            }),
        })
    }
}
