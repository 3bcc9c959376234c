//! The argument types of the distributor example's tools, declared as the example declares
//! them (names, types, bounds, doc comments), so the fuzz targets validate against the
//! same strict schemas without building the example's handlers and database. The
//! `validate_args` target checks on its first input that their MCP rendering equals
//! `example_schemas.json`, which the workspace test `bounds_example` checks against the
//! example itself: a drift fails one side or the other.

#![allow(dead_code)]

use erp_tools_core::prelude::*;
use erp_tools_core::Target;
use erp_tools_core::schema::Schema;
use serde_json::{Map, Value};

include!("example_args.rs");

/// A tool's name, schema, and a check that a normalised value deserialises into the tool's
/// argument type.
pub type Tool = (&'static str, Schema, fn(Value) -> Result<(), String>);

/// Every tool of the example.
pub fn tools() -> Vec<Tool> {
    fn de<T: for<'de> Deserialize<'de>>(v: Value) -> Result<(), String> {
        serde_json::from_value::<T>(v)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    vec![
        (
            "purchasing_search_vendors",
            paged(SearchVendorsArgs::tool_schema()),
            de::<SearchVendorsArgs>,
        ),
        (
            "purchasing_get_vendor_summary",
            VendorCodeArgs::tool_schema(),
            de::<VendorCodeArgs>,
        ),
        (
            "purchasing_search_pos",
            paged(SearchPosArgs::tool_schema()),
            de::<SearchPosArgs>,
        ),
        (
            "purchasing_get_po",
            GetPoArgs::tool_schema(),
            de::<GetPoArgs>,
        ),
        (
            "purchasing_print_po",
            GetPoArgs::tool_schema(),
            de::<GetPoArgs>,
        ),
        (
            "purchasing_create_po_draft",
            PoDraftArgs::tool_schema(),
            de::<PoDraftArgs>,
        ),
        (
            "purchasing_get_item_summary",
            ItemSummaryArgs::tool_schema(),
            de::<ItemSummaryArgs>,
        ),
        (
            "inventory_get_stock",
            GetStockArgs::tool_schema(),
            de::<GetStockArgs>,
        ),
    ]
}

/// A page tool's schema: its arguments, then the `cursor` and `page_size` the framework
/// adds (the example's page tools keep the default bounds).
fn paged(mut schema: Schema) -> Schema {
    if let erp_tools_core::schema::SchemaKind::Object(props) = &mut schema.kind {
        props.extend(erp_tools_core::page::PageSpec::DEFAULT.properties());
    }
    schema
}

/// The tools' MCP input schemas by name, for the comparison with the example.
pub fn rendered() -> Value {
    let mut out = Map::new();
    for (name, schema, _) in tools() {
        out.insert(name.to_string(), schema.render(Target::Mcp));
    }
    Value::Object(out)
}

/// `v` with the keys of every object in reverse order (the same value to JSON).
pub fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}
