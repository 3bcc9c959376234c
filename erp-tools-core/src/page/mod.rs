//! Results that fit a model's context: pages with sealed cursors.
//!
//! A read tool that returns [`Page<T>`] and takes `page: PageRequest` last is a page
//! tool. Its schema gains, for every target, a nullable `cursor` and a nullable
//! `page_size` bounded by the tool's declaration (`#[erp_tool(page_size = 50,
//! max_page_size = 200)]`, those values by default); its output is `{items,
//! next_cursor, has_more}`; its description ends with how to ask for the next page.
//!
//! [`Keyset`] writes the SQL of keyset pagination for the two backends;
//! [`RemoteKeyset`] does the same over another system's search API (the last key in the
//! cursor, the system's own filter built by a closure).
//!
//! A cursor is opaque to the model: the key of the last item sent, sealed with the
//! runtime's key ([`ToolRuntime::with_cursor_key`](crate::ToolRuntime::with_cursor_key))
//! and bound to the caller (user and branch), the tool and the other arguments, and
//! expiring. A forged, altered, expired or another person's cursor, or one sent with
//! changed filters or to another tool, is refused with a text that says to start again
//! with `cursor` null.
//!
//! ```
//! use erp_tools_core::prelude::*;
//!
//! #[derive(Deserialize, ToolArgs)]
//! struct ListVendorsArgs {
//!     /// Only vendors whose name contains this text. Null for all.
//!     name_contains: Option<String>,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct VendorRow {
//!     /// Vendor code.
//!     code: String,
//! }
//!
//! /// List the vendors of the caller's branch, by code.
//! #[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = 50)]
//! async fn list_vendors(
//!     ctx: &ToolContext,
//!     db: &ReadDb,
//!     args: ListVendorsArgs,
//!     page: PageRequest,
//! ) -> Result<Page<VendorRow>, ToolError> {
//!     let keyset = Keyset::ascending(&["code"]);
//!     let sql = format!(
//!         "SELECT code FROM vendors WHERE branch_id = $1 {} ORDER BY {} LIMIT {}",
//!         keyset.and_after(&page, 2),
//!         keyset.order_by(),
//!         page.fetch_limit()
//!     );
//!     let mut query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql)).bind(ctx.branch_id());
//!     if let Some(code) = page.after::<String>()? {
//!         query = query.bind(code);
//!     }
//!     let codes = query.fetch_all(db.pool()).await.map_err(ToolError::internal)?;
//!     let _ = args.name_contains;
//!     Ok(page.page(codes, |code| code.clone()).map(|code| VendorRow { code }))
//! }
//! ```
//!
//! The guide's chapter: *Pages and result budgets* (`guide/src/pages.md` in the repository).

mod items;
mod keyset;
mod remote;
pub(crate) mod request;
#[cfg(feature = "runtime")]
pub(crate) mod seal;
mod spec;

pub use items::Page;
pub use keyset::Keyset;
pub use remote::{Comparison, Condition, RemoteKeyset};
pub use request::PageRequest;
#[cfg(feature = "runtime")]
pub use seal::{KeyTooShort, MIN_KEY_LEN, SealError, Sealer};
pub use spec::{CURSOR_ARG, PAGE_SIZE_ARG, PageSpec};
