//! The tool surface as a reviewed artifact: a lock file and its fingerprint.
//!
//! What a model may do is the surface a registry compiles: every module's description and
//! every tool's name, module, tier, scopes, description (an instruction to the model),
//! argument schema per target, output schema, annotations, card and the opt-ins a team
//! declared. A one-line change to a doc comment changes it. [`SurfaceLock`] writes it in
//! a stable, line-oriented text a reviewer reads and `git diff` shows line by line;
//! [`assert_matches_lock`] (for a team's own test suite) fails when the compiled surface
//! differs from the committed lock, printing what changed tool by tool; the
//! [`Fingerprint`] (a SHA-256 of the lock) names the surface where a client, an audit row
//! or a dashboard can see it.
//!
//! ```
//! # use erp_tools_core::prelude::*;
//! # #[tool_args]
//! # struct StockArgs { /// Item code, e.g. BRG-0042
//! #   item_code: String }
//! # #[tool_output]
//! # struct Stock { /// On hand
//! #   on_hand: Decimal }
//! # /// Get stock on hand of one item in the caller's branch.
//! # #[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
//! # async fn get_stock(ctx: &ToolContext, args: StockArgs) -> Result<Stock, ToolError> {
//! #     Ok(Stock { on_hand: Decimal::ZERO })
//! # }
//! use erp_tools_core::ToolRegistry;
//! use erp_tools_core::lock::SurfaceLock;
//!
//! let registry = ToolRegistry::builder()
//!     .module("inventory", "Stock per warehouse. Read only.")
//!     .tool::<get_stock>()
//!     .build()?;
//! let lock = SurfaceLock::new(&registry);
//! let text = lock.to_text();
//! assert!(text.contains("\ntool inventory_get_stock\n"));
//! // The text reads back as the same surface, with the same fingerprint.
//! let read = SurfaceLock::parse(&text).expect("a lock");
//! assert!(read.diff(&lock).is_empty());
//! assert_eq!(read.fingerprint(), *registry.fingerprint());
//! # Ok::<(), erp_tools_core::RegistryError>(())
//! ```
//!
//! The guide's chapter: *The tool surface lock* (`guide/src/surface-lock.md` in the repository).

mod check;
mod diff;
pub(crate) mod entry;
pub(crate) mod fingerprint;
mod surface;
pub(crate) mod text;

pub use check::{LOCK_UPDATE_VAR, LockMismatch, assert_matches_lock, check_lock};
pub use diff::Change;
pub use fingerprint::{FINGERPRINT_META_KEY, Fingerprint};
pub use surface::SurfaceLock;
pub use text::LockParseError;
