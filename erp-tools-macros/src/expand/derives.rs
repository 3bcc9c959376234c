//! `#[tool_args]` and `#[tool_output]`: the derives a tool type needs, with serde and
//! schemars reached through erp-tools-core, so a crate that depends only on
//! erp-tools-core can declare tools. Both take `crate = ".."` when erp-tools-core is
//! reached under another path; `#[tool_args]` passes it on as `#[erp(crate = "..")]`.

use proc_macro2::TokenStream;
use quote::quote;

use super::paths::private;
use crate::attr::{crate_path, derive_attr_crate};
use crate::errors::Errors;

/// `#[tool_args]`: `#[derive(Deserialize, ToolArgs)]` with serde from erp-tools-core.
pub(crate) fn tool_args(attr: TokenStream, item: TokenStream) -> TokenStream {
    with_derives("tool_args", attr, item, |private, krate| {
        let erp = krate.map(|k| quote!(#[erp(crate = #k)]));
        quote! {
            #[derive(#private::serde::Deserialize, #private::ToolArgs)]
            #erp
        }
    })
}

/// `#[tool_output]`: `#[derive(Serialize, JsonSchema)]` with serde and schemars from
/// erp-tools-core.
pub(crate) fn tool_output(attr: TokenStream, item: TokenStream) -> TokenStream {
    with_derives("tool_output", attr, item, |private, _| {
        let schemars = format!("{}::schemars", path_text(private));
        quote! {
            #[derive(#private::serde::Serialize, #private::schemars::JsonSchema)]
            #[schemars(crate = #schemars)]
        }
    })
}

fn with_derives(
    name: &str,
    attr: TokenStream,
    item: TokenStream,
    derives: impl FnOnce(&TokenStream, Option<&syn::LitStr>) -> TokenStream,
) -> TokenStream {
    let mut errors = Errors::default();
    let krate = derive_attr_crate(name, attr, &mut errors);
    let path = krate
        .as_ref()
        .and_then(|k| crate_path(k, &mut Errors::default()));
    let private = private(path.as_ref());
    let serde = format!("{}::serde", path_text(&private));
    let derives = derives(&private, krate.as_ref());
    let error = errors.to_compile_errors();
    quote! {
        #error
        #derives
        #[serde(crate = #serde)]
        #item
    }
}

/// A path as the text serde's and schemars' `crate = ".."` take.
fn path_text(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}
