//! An accumulator for compile errors, so every mistake in one declaration is reported in
//! one pass (the approach of serde_derive's `Ctxt`).

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Collects errors; combine them into one `syn::Error` at the end.
#[derive(Default)]
pub(crate) struct Errors {
    first: Option<syn::Error>,
}

impl Errors {
    /// Records an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.first {
            Some(first) => first.combine(error),
            None => self.first = Some(error),
        }
    }

    /// Records an error spanning `tokens` (the whole key, field or type).
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Every recorded error as `compile_error!` invocations (empty when there are none).
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.first
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}
