//! The key reader every attribute grammar shares: `key` or `key = value` entries, string
//! literals, and where a path starts.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Token};

/// One `key` or `key = value` entry of an attribute.
pub(super) struct Entry {
    pub(super) key: Ident,
    pub(super) value: Option<Expr>,
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Entry { key, value })
    }
}

pub(super) fn lit_str(value: &Expr) -> Option<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => None,
    }
}

pub(super) trait SpanOf {
    fn span_of(&self) -> Span;
}

impl SpanOf for syn::Path {
    fn span_of(&self) -> Span {
        self.segments
            .first()
            .map(|s| s.ident.span())
            .unwrap_or_else(Span::call_site)
    }
}
