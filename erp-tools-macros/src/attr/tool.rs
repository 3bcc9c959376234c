//! The `#[erp_tool(..)]` key list.

use erp_tools_internals::names::closest;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprArray, ExprLit, Lit, LitBool, LitInt, LitStr, Token};

use super::entry::{Entry, lit_str};
use super::krate::CRATE_EXAMPLE;
use super::krate::crate_path;
use crate::errors::Errors;

/// Every key `#[erp_tool]` accepts besides `crate = ".."` (the rarely needed path to
/// erp-tools-core, left out of the "valid keys" lists).
pub(super) const TOOL_KEYS: &[&str] = &[
    "module",
    "tier",
    "scopes",
    "title",
    "name",
    "example",
    "destructive",
    "limit",
    "page_size",
    "max_page_size",
    "task",
    "rerun",
];

/// The keys of one `#[erp_tool(..)]`, as written.
#[derive(Default)]
pub(crate) struct ToolAttr {
    /// `module = ".."`.
    pub module: Option<LitStr>,
    /// `tier = ".."`.
    pub tier: Option<LitStr>,
    /// `scopes = [..]`.
    pub scopes: Option<ScopeList>,
    /// `title = ".."`.
    pub title: Option<LitStr>,
    /// `name = ".."`.
    pub name: Option<LitStr>,
    /// `example = r#"{..}"#`.
    pub example: Option<LitStr>,
    /// `destructive = true|false`.
    pub destructive: Option<LitBool>,
    /// Every `limit = ".."`, in order.
    pub limits: Vec<LitStr>,
    /// `page_size = N`.
    pub page_size: Option<LitInt>,
    /// `max_page_size = N`.
    pub max_page_size: Option<LitInt>,
    /// `task = "optional" | "required"`.
    pub task: Option<LitStr>,
    /// `rerun = true|false`.
    pub rerun: Option<LitBool>,
    /// `crate = ".."`: the path to erp-tools-core, when not `::erp_tools_core`.
    pub krate: Option<syn::Path>,
    /// Whether the key list could not be read at all (then missing keys are not reported).
    pub unreadable: bool,
    /// Keys that were written, including misspelled ones (by the key they were taken
    /// for) and ones with a malformed value, so none of them is also reported missing.
    pub mentioned: Vec<&'static str>,
}

/// `scopes = [..]` with the list's own tokens kept for spans.
pub(crate) struct ScopeList {
    /// The whole `[..]`.
    pub tokens: TokenStream,
    /// The scope strings.
    pub items: Vec<LitStr>,
}

/// Reads `#[erp_tool(..)]`'s tokens.
pub(crate) fn parse_tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let entries = match Punctuated::<Entry, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(syn::Error::new(
                e.span(),
                format!(
                    "{e}; write the keys as `key = value` separated by commas, e.g. \
                     #[erp_tool(module = \"purchasing\", tier = \"read\", scopes = [\"purchasing:read\"])]"
                ),
            ));
            attr.unreadable = true;
            return attr;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for Entry { key, value } in entries {
        let name = key.unraw().to_string();
        if name == "crate" {
            match value.as_ref().and_then(lit_str) {
                Some(_) if attr.krate.is_some() || seen.contains(&name) => {
                    errors.spanned(&key, "duplicate key `crate`; give each key once")
                }
                Some(s) => attr.krate = crate_path(&s, errors),
                None => errors.spanned(
                    &key,
                    format!("`crate` takes a string: write {CRATE_EXAMPLE}"),
                ),
            }
            seen.push(name);
            continue;
        }
        let Some(known) = TOOL_KEYS.iter().copied().find(|k| *k == name) else {
            errors.spanned(&key, unknown_key_message(&name));
            attr.mentioned.extend(suggestion(&name));
            continue;
        };
        attr.mentioned.push(known);
        if name != "limit" && seen.contains(&name) {
            errors.spanned(&key, format!("duplicate key `{name}`; give each key once"));
            continue;
        }
        seen.push(name.clone());
        let Some(value) = value else {
            errors.spanned(
                &key,
                format!("`{name}` needs a value: write {}", example_of(&name)),
            );
            continue;
        };
        match name.as_str() {
            "scopes" => match &value {
                Expr::Array(ExprArray { elems, .. }) => {
                    let mut items = Vec::new();
                    for elem in elems {
                        match lit_str(elem) {
                            Some(s) => items.push(s),
                            None => errors.spanned(
                                elem,
                                format!("each scope is a string: write {}", example_of("scopes")),
                            ),
                        }
                    }
                    attr.scopes = Some(ScopeList {
                        tokens: value.to_token_stream(),
                        items,
                    });
                }
                other => errors.spanned(
                    other,
                    format!(
                        "`scopes` takes a list of strings: write {}",
                        example_of("scopes")
                    ),
                ),
            },
            "destructive" | "rerun" => match &value {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) if name == "rerun" => attr.rerun = Some(b.clone()),
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) => attr.destructive = Some(b.clone()),
                other => errors.spanned(
                    other,
                    format!(
                        "`{name}` takes `true` or `false`: write {}",
                        example_of(&name)
                    ),
                ),
            },
            "page_size" | "max_page_size" => match &value {
                Expr::Lit(ExprLit {
                    lit: Lit::Int(n), ..
                }) if name == "page_size" => attr.page_size = Some(n.clone()),
                Expr::Lit(ExprLit {
                    lit: Lit::Int(n), ..
                }) => attr.max_page_size = Some(n.clone()),
                other => errors.spanned(
                    other,
                    format!("`{name}` takes a whole number: write {}", example_of(&name)),
                ),
            },
            _ => match lit_str(&value) {
                Some(s) => match name.as_str() {
                    "module" => attr.module = Some(s),
                    "tier" => attr.tier = Some(s),
                    "title" => attr.title = Some(s),
                    "name" => attr.name = Some(s),
                    "example" => attr.example = Some(s),
                    "task" => attr.task = Some(s),
                    _ => attr.limits.push(s),
                },
                None => errors.spanned(
                    &value,
                    format!("`{name}` takes a string: write {}", example_of(&name)),
                ),
            },
        }
    }
    attr
}

fn example_of(key: &str) -> &'static str {
    match key {
        "module" => "`module = \"purchasing\"`",
        "tier" => "`tier = \"read\"` or `tier = \"draft\"`",
        "scopes" => "`scopes = [\"purchasing:read\"]`",
        "title" => "`title = \"Create purchase order draft\"`",
        "name" => "`name = \"purchasing_create_po_draft\"`",
        "example" => "`example = r#\"{\"vendor_code\": \"V-00231\"}\"#`",
        "destructive" => "`destructive = true`",
        "page_size" => "`page_size = 50`",
        "max_page_size" => "`max_page_size = 200`",
        "task" => "`task = \"optional\"` or `task = \"required\"`",
        "rerun" => "`rerun = false`",
        _ => "`limit = \"lines[].qty <= 1000\"`",
    }
}

/// The key a misspelled one was probably meant to be.
fn suggestion(key: &str) -> Option<&'static str> {
    match key {
        "description" | "desc" | "doc" | "docs" | "about" => None,
        "namespace" | "ns" | "group" => Some("module"),
        _ => closest(key, TOOL_KEYS),
    }
}

fn unknown_key_message(key: &str) -> String {
    let valid = TOOL_KEYS.join(", ");
    match key {
        "description" | "desc" | "doc" | "docs" | "about" => format!(
            "`{key}` is not a key of #[erp_tool]; the description is the fn's doc comment, \
             write `/// <what the tool does>` above the fn"
        ),
        "namespace" | "ns" | "group" => {
            format!(
                "unknown key `{key}` in #[erp_tool]; the namespace is the module: write `module = \"purchasing\"`"
            )
        }
        _ => match closest(key, TOOL_KEYS) {
            Some(best) => format!(
                "unknown key `{key}` in #[erp_tool]; did you mean `{best}`? valid keys: {valid}"
            ),
            None => format!("unknown key `{key}` in #[erp_tool]; valid keys: {valid}"),
        },
    }
}
