//! `#[tool_args]` and `#[tool_output]`: the derives a tool type needs, with serde and
//! schemars reached through erp-tools-core, so a crate that depends only on
//! erp-tools-core can declare tools.

use proc_macro2::{Span, TokenStream};
use quote::quote;

const PRIVATE: &str = "::erp_tools_core::__private_0_1_0";

/// `#[tool_args]`: `#[derive(Deserialize, ToolArgs)]` with serde from erp-tools-core.
pub fn tool_args(attr: TokenStream, item: TokenStream) -> TokenStream {
    with_derives(
        "tool_args",
        attr,
        item,
        quote! {
            #[derive(::erp_tools_core::__private_0_1_0::serde::Deserialize, ::erp_tools_core::ToolArgs)]
        },
    )
}

/// `#[tool_output]`: `#[derive(Serialize, JsonSchema)]` with serde and schemars from
/// erp-tools-core.
pub fn tool_output(attr: TokenStream, item: TokenStream) -> TokenStream {
    let schemars = format!("{PRIVATE}::schemars");
    with_derives(
        "tool_output",
        attr,
        item,
        quote! {
            #[derive(
                ::erp_tools_core::__private_0_1_0::serde::Serialize,
                ::erp_tools_core::__private_0_1_0::schemars::JsonSchema
            )]
            #[schemars(crate = #schemars)]
        },
    )
}

fn with_derives(
    name: &str,
    attr: TokenStream,
    item: TokenStream,
    derives: TokenStream,
) -> TokenStream {
    let serde = format!("{PRIVATE}::serde");
    let error = (!attr.is_empty()).then(|| {
        syn::Error::new(
            attr.clone()
                .into_iter()
                .next()
                .map(|t| t.span())
                .unwrap_or_else(Span::call_site),
            format!("`#[{name}]` takes no arguments; put serde attributes on the item itself"),
        )
        .to_compile_error()
    });
    quote! {
        #error
        #derives
        #[serde(crate = #serde)]
        #item
    }
}
