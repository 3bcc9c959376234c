//! The parts of `#[serde(..)]` that decide a field's wire name and wire shape.

use erp_tools_internals::names::RenameRule;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Attribute, Expr, LitStr, Token};

use super::entry::{SpanOf, lit_str};

/// One `key`, `key = "..."` or `key(a = "..", ..)` inside `#[serde(..)]`.
pub(crate) struct SerdeItem {
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
    pub(crate) fn is_flag(&self) -> bool {
        !self.nested && !self.assigned
    }
}

/// Reads every `#[serde(..)]` item. Malformed serde attributes are left for serde's own
/// derive to report, so they are skipped here without an error.
pub(super) fn serde_items(attrs: &[Attribute]) -> Vec<SerdeItem> {
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

/// The serde attributes of a struct or enum that matter for wire names.
#[derive(Default)]
pub(crate) struct SerdeContainer {
    /// `rename_all = ".."` (or its `deserialize` half).
    pub rename_all: Option<RenameRule>,
    /// `transparent` (not supported on argument types).
    pub transparent: Option<Span>,
    /// Every item, as written, for the wire-shape rules in `valid/serde.rs`.
    pub items: Vec<SerdeItem>,
}

impl SerdeContainer {
    /// Reads the container attributes.
    pub(crate) fn from_attrs(attrs: &[Attribute]) -> Self {
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
pub(crate) struct SerdeField {
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
    pub(crate) fn from_attrs(attrs: &[Attribute]) -> Self {
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
