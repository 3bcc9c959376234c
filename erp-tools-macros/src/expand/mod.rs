//! Code generation for `#[derive(ToolArgs)]` (`args.rs`) and `#[erp_tool]` (`tool.rs`).
//!
//! Generated code names the runtime only by absolute paths (`::erp_tools_core::..`,
//! `::core::..`, `::std::..`), prefixes its own items `__erp_tool_` and hides them from docs,
//! so it compiles next to any user code (see the hygiene test).

mod args;
mod tool;

pub use args::derive;
pub use tool::tool;

/// Number of `DraftCheck` slots (`erp_tools_core::args::DRAFT_CHECK_SLOTS`).
const DRAFT_SLOTS: usize = 8;
