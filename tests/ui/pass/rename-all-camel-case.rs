//! `rename_all` decides the wire names the schema shows.
#![deny(warnings)]

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
pub struct MoveArgs {
    pub item_code: String,
    pub from_warehouse: String,
    #[serde(rename = "qty")]
    pub quantity: Decimal,
    #[serde(skip)]
    pub internal_note: String,
}

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
pub enum Priority {
    RightNow,
    Later,
    #[serde(rename = "whenever")]
    Whenever,
}

fn main() {
    let schema = <MoveArgs as erp_tools_core::ToolArgs>::tool_schema();
    let names: Vec<&str> = schema
        .properties()
        .iter()
        .map(|p| p.name.as_ref())
        .collect();
    assert_eq!(names, ["itemCode", "fromWarehouse", "qty"]);
    let e = <Priority as erp_tools_core::ToolArgs>::tool_schema();
    assert_eq!(
        e.kind,
        erp_tools_core::schema::SchemaKind::Enum(vec![
            "RIGHT-NOW".into(),
            "LATER".into(),
            "whenever".into()
        ])
    );
}
