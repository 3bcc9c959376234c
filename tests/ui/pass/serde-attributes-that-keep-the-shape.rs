//! serde attributes that are modelled exactly or do not change what is read.
#![deny(warnings)]

use erp_tools_core::prelude::*;

// Named by `skip_serializing_if` (serialisation only, so it does not change what is read);
// `main` calls it too, as nothing here derives `Serialize`.
fn shown(v: &str) -> bool {
    v.is_empty()
}

#[derive(Debug, Deserialize, ToolArgs)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Priority {
    LowPriority,
    #[serde(rename = "URGENT")]
    High,
    #[serde(skip)]
    Internal,
}

#[derive(Debug, Deserialize, ToolArgs)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "lookup arguments"
)]
pub struct LookupArgs {
    #[serde(rename(deserialize = "vendor", serialize = "vendor_code"))]
    pub vendor_code: String,
    #[serde(skip_serializing_if = "shown")]
    pub item_code: String,
    #[serde(default)]
    pub page: Option<u32>,
    #[serde(skip, default)]
    pub cache_hits: u32,
    pub priority: Priority,
}

fn main() {
    assert!(shown("") && !shown("I-1"));
    let args: LookupArgs = erp_tools_core::__private_0_1_0::serde_json::from_value(
        erp_tools_core::__private_0_1_0::serde_json::json!({
            "vendor": "V-1", "itemCode": "I-1", "page": null, "priority": "URGENT"
        }),
    )
    .unwrap();
    let schema = <LookupArgs as ToolArgs>::tool_schema();
    let names: Vec<&str> = schema
        .properties()
        .iter()
        .map(|p| p.name.as_ref())
        .collect();
    assert_eq!(names, ["vendor", "itemCode", "page", "priority"]);
    assert_eq!(args.cache_hits, 0);
    let _ = (
        args.vendor_code,
        args.item_code,
        args.page,
        args.priority,
        Priority::LowPriority,
        Priority::Internal,
    );
}
