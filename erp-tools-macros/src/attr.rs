//! Attribute grammars: the `#[erp_tool(..)]` key list, and the parts of `#[serde(..)]`
//! that decide a field's wire name.
//!
//! This file only reads syntax. It reports malformed attributes (unknown or repeated keys,
//! a value of the wrong kind) and leaves what the values mean to `valid/`.

use erp_tools_internals::names::{RenameRule, closest};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprArray, ExprLit, Ident, Lit, LitBool, LitStr, Token};

use crate::errors::Errors;

/// Every key `#[erp_tool]` accepts.
pub const TOOL_KEYS: &[&str] = &[
    "module",
    "tier",
    "scopes",
    "title",
    "name",
    "example",
    "destructive",
    "limit",
];

/// The keys of one `#[erp_tool(..)]`, as written.
#[derive(Default)]
pub struct ToolAttr {
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
    /// Whether the key list could not be read at all (then missing keys are not reported).
    pub unreadable: bool,
    /// Keys that were written, including misspelled ones (by the key they were taken
    /// for) and ones with a malformed value, so none of them is also reported missing.
    pub mentioned: Vec<&'static str>,
}

/// `scopes = [..]` with the list's own tokens kept for spans.
pub struct ScopeList {
    /// The whole `[..]`.
    pub tokens: TokenStream,
    /// The scope strings.
    pub items: Vec<LitStr>,
}

struct Entry {
    key: Ident,
    value: Option<Expr>,
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

fn lit_str(value: &Expr) -> Option<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => None,
    }
}

/// Reads `#[erp_tool(..)]`'s tokens.
pub fn parse_tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
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
            "destructive" => match &value {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) => attr.destructive = Some(b.clone()),
                other => errors.spanned(
                    other,
                    "`destructive` takes `true` or `false`: write `destructive = true`",
                ),
            },
            _ => match lit_str(&value) {
                Some(s) => match name.as_str() {
                    "module" => attr.module = Some(s),
                    "tier" => attr.tier = Some(s),
                    "title" => attr.title = Some(s),
                    "name" => attr.name = Some(s),
                    "example" => attr.example = Some(s),
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

/// One `key`, `key = "..."` or `key(a = "..", ..)` inside `#[serde(..)]`.
pub struct SerdeItem {
    /// The key, e.g. `rename`.
    pub key: String,
    /// Where the key was written.
    pub span: Span,
    /// `key = "..."`.
    pub value: Option<LitStr>,
    /// `key(deserialize = "...")`: the `deserialize` value.
    pub deserialize: Option<LitStr>,
    /// `key(..)` was used (so `value` being `None` does not mean a bare flag).
    pub nested: bool,
}

/// Reads every `#[serde(..)]` item. Malformed serde attributes are left for serde's own
/// derive to report, so they are skipped here without an error.
pub fn serde_items(attrs: &[Attribute]) -> Vec<SerdeItem> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.unraw().to_string())
                .unwrap_or_default();
            let mut item = SerdeItem {
                key,
                span: meta.path.span_of(),
                value: None,
                deserialize: None,
                nested: false,
            };
            if meta.input.peek(Token![=]) {
                let expr: Expr = meta.value()?.parse()?;
                item.value = lit_str(&expr);
            } else if meta.input.peek(syn::token::Paren) {
                item.nested = true;
                meta.parse_nested_meta(|inner| {
                    if inner.input.peek(Token![=]) {
                        let expr: Expr = inner.value()?.parse()?;
                        if inner.path.is_ident("deserialize") {
                            item.deserialize = lit_str(&expr);
                        }
                    }
                    Ok(())
                })?;
            }
            out.push(item);
            Ok(())
        });
    }
    out
}

trait SpanOf {
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

/// The serde attributes of a struct or enum that matter for wire names.
#[derive(Default)]
pub struct SerdeContainer {
    /// `rename_all = ".."` (or its `deserialize` half).
    pub rename_all: Option<RenameRule>,
    /// `transparent` (not supported on argument types).
    pub transparent: Option<Span>,
}

impl SerdeContainer {
    /// Reads the container attributes.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut out = SerdeContainer::default();
        for item in serde_items(attrs) {
            match item.key.as_str() {
                "rename_all" => {
                    if let Some(rule) = item
                        .value
                        .or(item.deserialize)
                        .and_then(|s| RenameRule::parse(&s.value()))
                    {
                        out.rename_all = Some(rule);
                    }
                }
                "transparent" => out.transparent = Some(item.span),
                _ => {}
            }
        }
        out
    }
}

/// The serde attributes of a field that matter for the schema and the checks.
#[derive(Default)]
pub struct SerdeField {
    /// `rename = ".."` (or its `deserialize` half).
    pub rename: Option<LitStr>,
    /// Every `alias = ".."`.
    pub aliases: Vec<LitStr>,
    /// `flatten`.
    pub flatten: Option<Span>,
    /// `skip` or `skip_deserializing`: not read from the wire.
    pub skip: bool,
}

impl SerdeField {
    /// Reads a field's (or a variant's) attributes.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut out = SerdeField::default();
        for item in serde_items(attrs) {
            match item.key.as_str() {
                "rename" => {
                    if let Some(s) = item.value.or(item.deserialize) {
                        out.rename = Some(s);
                    }
                }
                "alias" => out.aliases.extend(item.value),
                "flatten" => out.flatten = Some(item.span),
                "skip" | "skip_deserializing" | "other" => out.skip = true,
                _ => {}
            }
        }
        out
    }
}

/// The doc comment on an item, one entry per `///` line.
pub fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Some(s) = lit_str(&nv.value)
        {
            out.push(s.value());
        }
    }
    out
}
