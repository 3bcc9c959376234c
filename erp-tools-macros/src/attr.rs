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
    /// `key = ...` was used, whatever the value's kind.
    pub assigned: bool,
}

impl SerdeItem {
    /// Whether the key was written alone, as a flag (`default`, `flatten`).
    pub fn is_flag(&self) -> bool {
        !self.nested && !self.assigned
    }
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
                assigned: false,
            };
            if meta.input.peek(Token![=]) {
                item.assigned = true;
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
    /// Every item, as written, for the wire-shape rules in `valid/serde.rs`.
    pub items: Vec<SerdeItem>,
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
                        .clone()
                        .or(item.deserialize.clone())
                        .and_then(|s| RenameRule::parse(&s.value()))
                    {
                        out.rename_all = Some(rule);
                    }
                }
                "transparent" => out.transparent = Some(item.span),
                _ => {}
            }
            out.items.push(item);
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
    /// Every item, as written, for the wire-shape rules in `valid/serde.rs`.
    pub items: Vec<SerdeItem>,
}

impl SerdeField {
    /// Reads a field's (or a variant's) attributes.
    pub fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut out = SerdeField::default();
        for item in serde_items(attrs) {
            match item.key.as_str() {
                "rename" => {
                    if let Some(s) = item.value.clone().or(item.deserialize.clone()) {
                        out.rename = Some(s);
                    }
                }
                "alias" => out.aliases.extend(item.value.clone()),
                "flatten" => out.flatten = Some(item.span),
                "skip" | "skip_deserializing" | "other" => out.skip = true,
                _ => {}
            }
            out.items.push(item);
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

/// Every key `#[erp(..)]` accepts on an argument field.
pub const BOUND_KEYS: &[&str] = &["min", "max", "positive", "len", "pattern"];

/// A number written in a bound, as its decimal text (`-5`, `0.01`, `1000`).
pub struct BoundNumber {
    /// The decimal text, without underscores.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// The declared bounds of one field: `#[erp(min = 1, max = 1000)]`,
/// `#[erp(positive)]`, `#[erp(len = 1..=40, pattern = "^[A-Z]+$")]`.
#[derive(Default)]
pub struct FieldBounds {
    /// `min = <number>`: the smallest value allowed.
    pub min: Option<BoundNumber>,
    /// `max = <number>`: the largest value allowed.
    pub max: Option<BoundNumber>,
    /// `positive`: more than zero.
    pub positive: Option<Span>,
    /// `len = a..=b`, `a..`, `..=b` or `n`: characters of a text, items of a list.
    pub len: Option<(usize, Option<usize>, Span)>,
    /// `pattern = ".."`: a regular expression the whole text must match.
    pub pattern: Option<LitStr>,
    /// Where the first `#[erp]` was written.
    pub span: Option<Span>,
}

impl FieldBounds {
    /// Whether any bound was declared.
    pub fn is_empty(&self) -> bool {
        self.min.is_none()
            && self.max.is_none()
            && self.positive.is_none()
            && self.len.is_none()
            && self.pattern.is_none()
    }
}

const BOUND_EXAMPLE: &str = "`#[erp(min = 1, max = 1000)]`, `#[erp(positive)]` or \
     `#[erp(len = 1..=40, pattern = \"^[A-Z0-9-]+$\")]`";

/// Reads every `#[erp(..)]` on a field, reporting malformed ones.
pub fn field_bounds(attrs: &[Attribute], errors: &mut Errors) -> FieldBounds {
    let mut out = FieldBounds::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("erp")) {
        out.span.get_or_insert(attr.path().span_of());
        let syn::Meta::List(list) = &attr.meta else {
            errors.spanned(
                attr,
                format!("`#[erp]` needs its bounds in parentheses: write {BOUND_EXAMPLE}"),
            );
            continue;
        };
        let entries = match Punctuated::<Entry, Token![,]>::parse_terminated
            .parse2(list.tokens.clone())
        {
            Ok(entries) => entries,
            Err(e) => {
                errors.push(syn::Error::new(
                    e.span(),
                    format!("{e}; write the bounds as `key = value` separated by commas, e.g. {BOUND_EXAMPLE}"),
                ));
                continue;
            }
        };
        if entries.is_empty() {
            errors.spanned(
                attr,
                format!("`#[erp()]` declares no bound: write {BOUND_EXAMPLE}"),
            );
        }
        for Entry { key, value } in entries {
            let name = key.unraw().to_string();
            let Some(known) = BOUND_KEYS.iter().copied().find(|k| *k == name) else {
                let hint = match closest(&name, BOUND_KEYS) {
                    Some(best) => format!("did you mean `{best}`? "),
                    None => String::new(),
                };
                errors.spanned(
                    &key,
                    format!(
                        "unknown bound `{name}` in #[erp]; {hint}valid bounds: {} (e.g. {BOUND_EXAMPLE})",
                        BOUND_KEYS.join(", ")
                    ),
                );
                continue;
            };
            let taken = match known {
                "min" => out.min.is_some(),
                "max" => out.max.is_some(),
                "positive" => out.positive.is_some(),
                "len" => out.len.is_some(),
                _ => out.pattern.is_some(),
            };
            if taken {
                errors.spanned(
                    &key,
                    format!("duplicate bound `{name}`; give each bound once"),
                );
                continue;
            }
            match (known, value) {
                ("positive", None) => out.positive = Some(key.span()),
                ("positive", Some(v)) => errors.spanned(
                    v,
                    "`positive` is a flag and takes no value: write `#[erp(positive)]` (more than 0), or \
                     `min = 0` to allow zero",
                ),
                (_, None) => errors.spanned(
                    &key,
                    format!("`{name}` needs a value: write {}", bound_example(known)),
                ),
                ("min" | "max", Some(v)) => match bound_number(&v) {
                    Ok(n) => {
                        if known == "min" {
                            out.min = Some(n);
                        } else {
                            out.max = Some(n);
                        }
                    }
                    Err(why) => errors.spanned(
                        &v,
                        format!("`{name}` takes a number {why}: write {}", bound_example(known)),
                    ),
                },
                ("len", Some(v)) => match bound_len(&v) {
                    Ok((lo, hi)) => out.len = Some((lo, hi, v_span(&v))),
                    Err(why) => errors.spanned(&v, format!("{why}: write {}", bound_example("len"))),
                },
                (_, Some(v)) => match lit_str(&v) {
                    Some(s) => out.pattern = Some(s),
                    None => errors.spanned(
                        &v,
                        format!("`pattern` takes a string: write {}", bound_example("pattern")),
                    ),
                },
            }
        }
    }
    out
}

fn v_span(v: &Expr) -> Span {
    v.to_token_stream()
        .into_iter()
        .next()
        .map(|t| t.span())
        .unwrap_or_else(Span::call_site)
}

fn bound_example(key: &str) -> &'static str {
    match key {
        "min" => "`min = 1` or `min = 0.01`",
        "max" => "`max = 1000` or `max = 99.5`",
        "len" => "`len = 1..=40`, `len = 3`, `len = ..=40` or `len = 1..`",
        _ => "`pattern = \"^[A-Z]{2}-[0-9]+$\"`",
    }
}

/// A plain decimal literal, possibly negative: `5`, `-5`, `0.25`, `1_000`.
fn bound_number(v: &Expr) -> Result<BoundNumber, &'static str> {
    let (neg, lit) = match v {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    };
    let Expr::Lit(ExprLit { lit, .. }) = lit else {
        return Err("written as a literal (no constant, expression or string)");
    };
    let (digits, suffix) = match lit {
        Lit::Int(i) => (i.base10_digits().to_string(), i.suffix().to_string()),
        Lit::Float(f) => (f.base10_digits().to_string(), f.suffix().to_string()),
        Lit::Str(_) => return Err("without quotes"),
        _ => return Err("written as a decimal literal"),
    };
    if !suffix.is_empty() {
        return Err("without a type suffix");
    }
    let ok = {
        let mut parts = digits.splitn(2, '.');
        let int = parts.next().unwrap_or("");
        let frac = parts.next();
        !int.is_empty()
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
    };
    if !ok || digits.len() > 28 {
        return Err("in plain decimal notation (no exponent, at most 28 digits)");
    }
    Ok(BoundNumber {
        text: if neg { format!("-{digits}") } else { digits },
        span: v_span(v),
    })
}

fn len_value(e: &Expr) -> Result<usize, String> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) if i.suffix().is_empty() => i
            .base10_parse::<usize>()
            .map_err(|_| "`len` is too large".to_string()),
        _ => Err("`len` takes whole numbers".into()),
    }
}

fn bound_len(v: &Expr) -> Result<(usize, Option<usize>), String> {
    match v {
        Expr::Range(r) => {
            let lo = match &r.start {
                Some(s) => len_value(s)?,
                None => 0,
            };
            let hi = match (&r.end, &r.limits) {
                (None, _) => None,
                (Some(e), syn::RangeLimits::Closed(_)) => Some(len_value(e)?),
                (Some(e), syn::RangeLimits::HalfOpen(_)) => {
                    let end = len_value(e)?;
                    return Err(format!(
                        "`len` takes an inclusive range, so the largest length is visible: `..{end}` means at most \
                         {}; write `..=`",
                        end.saturating_sub(1)
                    ));
                }
            };
            if r.start.is_none() && hi.is_none() {
                return Err(
                    "`len = ..` allows every length; give a smallest or largest length".into(),
                );
            }
            if let Some(hi) = hi {
                if hi < lo {
                    return Err(format!(
                        "`len` runs from {lo} down to {hi}; write the smaller length first"
                    ));
                }
                if hi == 0 {
                    return Err(
                        "`len` allows only empty values; the largest length must be 1 or more"
                            .into(),
                    );
                }
            }
            Ok((lo, hi))
        }
        other => {
            let n = len_value(other)?;
            if n == 0 {
                return Err("`len = 0` allows only empty values".into());
            }
            Ok((n, Some(n)))
        }
    }
}
