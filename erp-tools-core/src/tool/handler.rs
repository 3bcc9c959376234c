//! The type-erased entry points `#[erp_tool]` generates for each handler.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::context::ToolContext;
use super::error::ToolError;
use super::handles::{DraftTx, ReadDb};
use crate::remote::RemoteDraft;

/// What a handler produced: its output as JSON (the structured result) and, when the
/// output type implements [`ModelText`](crate::ModelText), the text the model reads.
#[derive(Clone, Debug, PartialEq)]
pub struct HandlerOutput {
    /// The output, serialised.
    pub value: Value,
    /// The output's own rendering for the model, if it has one.
    pub text: Option<String>,
    /// A page tool's page, which the runtime fits to the result budget and answers with
    /// a sealed cursor (`value` is then unused).
    pub page: Option<PageParts>,
}

impl From<Value> for HandlerOutput {
    fn from(value: Value) -> Self {
        HandlerOutput {
            value,
            text: None,
            page: None,
        }
    }
}

/// A page as a page tool's handler returned it ([`Page`](crate::page::Page)): its items
/// as JSON, each with its key, and whether more items follow.
#[derive(Clone, Debug, PartialEq)]
pub struct PageParts {
    /// The items, in order.
    pub items: Vec<Value>,
    /// The key of each item.
    pub keys: Vec<Value>,
    /// Each item's own line of text for the model, if its type has one.
    pub lines: Vec<Option<String>>,
    /// Whether more items follow the last one.
    pub has_more: bool,
}

/// The future a type-erased handler returns.
pub type HandlerFuture<'a> =
    Pin<Box<dyn Future<Output = Result<HandlerOutput, ToolError>> + Send + 'a>>;

/// A read handler with its arguments still as JSON (already validated against the schema).
pub(crate) type ReadHandlerFn = for<'a> fn(&'a ToolContext, &'a ReadDb, Value) -> HandlerFuture<'a>;

/// A draft handler with its arguments still as JSON (already validated against the schema).
pub(crate) type DraftHandlerFn =
    for<'a> fn(&'a ToolContext, &'a mut DraftTx, Value) -> HandlerFuture<'a>;

/// A remote draft handler (its document lives in another system) with its arguments still
/// as JSON (already validated against the schema).
pub(crate) type RemoteHandlerFn =
    for<'a> fn(&'a ToolContext, &'a mut RemoteDraft, Value) -> HandlerFuture<'a>;

/// The entry point the runtime calls. The tier decides which database handle the handler
/// gets, so a read tool is never given a write handle.
#[derive(Clone, Copy)]
pub enum Handler {
    /// A read tool's entry point.
    Read(ReadHandlerFn),
    /// A draft tool's entry point.
    Draft(DraftHandlerFn),
    /// A draft tool's entry point whose document is written in another system
    /// ([`RemoteDraft`]).
    Remote(RemoteHandlerFn),
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Handler::Read(_) => "Handler::Read",
            Handler::Draft(_) => "Handler::Draft",
            Handler::Remote(_) => "Handler::Remote",
        })
    }
}
