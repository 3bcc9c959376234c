//! Code generation for `#[derive(ToolArgs)]` (`args.rs`) and `#[erp_tool]` (`tool.rs`).
//!
//! Generated code names the runtime only through its hidden, version-named module
//! (`::erp_tools_core::__private_0_1_0::..`, so a runtime of another version fails to
//! compile against it), prefixes its own items `__erp_tool_` and hides them from docs, so it
//! compiles next to any user code (see the hygiene test).

mod args;
mod derives;
mod tool;

pub use args::derive;
pub use derives::{tool_args, tool_output};
pub use tool::tool;

#[cfg(test)]
mod tests {
    /// Generated paths name `__private_0_1_0`: the module must follow the crate version
    /// (erp-tools-core checks the same on its side).
    #[test]
    fn private_module_follows_the_version() {
        let expected = format!(
            "__private_{}",
            env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_")
        );
        assert_eq!(expected, "__private_0_1_0", "rename the paths in expand/");
    }
}
