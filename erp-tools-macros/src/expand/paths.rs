//! The paths generated code writes to the runtime.

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The hidden module every generated path starts with: `::erp_tools_core::__private_0_1_0`,
/// or `<path>::__private_0_1_0` under a `crate = "<path>"` override.
pub(super) fn private(krate: Option<&syn::Path>) -> TokenStream {
    match krate {
        Some(path) => quote!(#path::__private_0_1_0),
        None => quote!(::erp_tools_core::__private_0_1_0),
    }
}

/// The same path with every token at `span`, for a path written inside
/// `quote_spanned!`: the compiler words some errors by where the path was written.
pub(super) fn respan(path: &TokenStream, span: Span) -> TokenStream {
    path.clone()
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}
