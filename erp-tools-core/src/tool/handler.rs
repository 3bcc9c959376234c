//! The type-erased entry points `#[erp_tool]` generates for each handler.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::context::ToolContext;
use super::error::ToolError;
use super::handles::{DraftTx, ReadDb};

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
