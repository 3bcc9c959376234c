//! `crate = "..."`: the path to erp-tools-core when it is reached under another name (a
//! re-export), as serde's `#[serde(crate = "...")]`. Read by `#[erp_tool(..)]`, by
//! `#[erp(..)]` on an argument type, and by `#[tool_args(..)]` and `#[tool_output(..)]`.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, LitStr, Token};

use super::entry::{Entry, lit_str};
use crate::errors::Errors;

/// How the key is written.
pub(super) const CRATE_EXAMPLE: &str = "`crate = \"my_reexport::erp_tools_core\"`";

/// The path a `crate = ".."` value names, or the error for one that is not a path.
pub(crate) fn crate_path(value: &LitStr, errors: &mut Errors) -> Option<syn::Path> {
    match value.parse::<syn::Path>() {
        Ok(path) => Some(path),
        Err(_) => {
            errors.spanned(
                value,
                format!(
                    "`crate` takes the path erp_tools_core is reached by: write {CRATE_EXAMPLE}"
                ),
            );
            None
        }
    }
}

/// Reads `#[erp(crate = "..")]` on an argument type; any other key there is reported
/// (bounds go on fields).
pub(crate) fn container_crate(attrs: &[Attribute], errors: &mut Errors) -> Option<syn::Path> {
    let mut out = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("erp")) {
        let entries = match &attr.meta {
            syn::Meta::List(list) => {
                Punctuated::<Entry, Token![,]>::parse_terminated.parse2(list.tokens.clone())
            }
            _ => Ok(Punctuated::new()),
        };
        let entries = match entries {
            Ok(entries) if !entries.is_empty() => entries,
            _ => {
                errors.spanned(attr, misplaced());
                continue;
            }
        };
        for Entry { key, value } in entries {
            if key.unraw() != "crate" {
                errors.spanned(attr, misplaced());
                break;
            }
            match value.as_ref().and_then(lit_str) {
                Some(s) if out.is_none() => out = crate_path(&s, errors),
                Some(_) => errors.spanned(&key, "duplicate key `crate`; give it once"),
                None => errors.spanned(
                    &key,
                    format!("`crate` takes a string: write {CRATE_EXAMPLE}"),
                ),
            }
        }
    }
    out
}

fn misplaced() -> String {
    "`#[erp(..)]` on the type bounds nothing; bounds go on a field of an argument struct, e.g. \
     `#[erp(min = 1, max = 1000)] qty: Decimal`"
        .to_string()
}

/// Reads the arguments of `#[tool_args(..)]` or `#[tool_output(..)]`: nothing, or
/// `crate = ".."`.
pub(crate) fn derive_attr_crate(
    name: &str,
    tokens: TokenStream,
    errors: &mut Errors,
) -> Option<LitStr> {
    if tokens.is_empty() {
        return None;
    }
    let wrong =
        format!("`#[{name}]` takes only {CRATE_EXAMPLE}; put serde attributes on the item itself");
    let entries = match Punctuated::<Entry, Token![,]>::parse_terminated.parse2(tokens.clone()) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(syn::Error::new(e.span(), wrong));
            return None;
        }
    };
    let mut out = None;
    for Entry { key, value } in entries {
        match (key.unraw() == "crate", value.as_ref().and_then(lit_str)) {
            (true, Some(s)) if out.is_none() => {
                if crate_path(&s, errors).is_some() {
                    out = Some(s);
                }
            }
            (true, Some(_)) => errors.spanned(&key, "duplicate key `crate`; give it once"),
            _ => errors.spanned(&key, &wrong),
        }
    }
    out
}
