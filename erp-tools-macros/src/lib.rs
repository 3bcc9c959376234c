//! Procedural macros for erp-tools. Use them through `erp_tools_core`.
use proc_macro::TokenStream;

/// Declares a tool.
#[proc_macro_attribute]
pub fn erp_tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Derives `ToolArgs`.
#[proc_macro_derive(ToolArgs, attributes(serde, tool))]
pub fn derive_tool_args(_item: TokenStream) -> TokenStream {
    TokenStream::new()
}
