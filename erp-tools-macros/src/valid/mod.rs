//! The safety rules. Every rule reports through [`Errors`](crate::errors::Errors), spanned
//! on the offending key, field or type, so one pass reports every mistake in a declaration.
//!
//! `args.rs` holds the rules `#[derive(ToolArgs)]` enforces on each argument type (wire
//! names, free-form types, units, `client_ref`, shapes); `tool.rs` the rules of
//! `#[erp_tool]` (keys, tier, scopes, names, doc comment); `signature.rs` the rules of the
//! handler's signature; `page.rs` those of a page tool; `task.rs` those of a task tool.

mod args;
mod bounds;
mod kinds;
mod page;
mod serde;
mod signature;
mod task;
mod tier;
mod tool;
mod types;

pub(crate) use args::{ArgsPlan, CLIENT_REF, check_args};
pub(crate) use task::TaskKind;
pub(crate) use tier::Tier;
pub(crate) use tool::{ToolPlan, check_tool};
pub(crate) use types::type_string;
