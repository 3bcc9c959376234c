//! Attribute grammars, one a file: the `#[erp_tool(..)]` key list (`tool.rs`), the parts
//! of `#[serde(..)]` that decide a field's wire name (`serde.rs`), and the `#[erp(..)]`
//! field bounds (`bounds.rs`), and the `crate = ".."` override all of them share
//! (`krate.rs`).
//!
//! These files only read syntax. They report malformed attributes (unknown or repeated
//! keys, a value of the wrong kind) and leave what the values mean to `valid/`.

mod bounds;
mod entry;
mod krate;
mod serde;
mod tool;

use syn::Attribute;

use entry::lit_str;

pub(crate) use bounds::{FieldBounds, field_bounds};
pub(crate) use krate::{container_crate, crate_path, derive_attr_crate};
pub(crate) use serde::{SerdeContainer, SerdeField, SerdeItem};
pub(crate) use tool::{ToolAttr, parse_tool_attr};

/// The doc comment on an item, one entry per `///` line.
pub(crate) fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
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
