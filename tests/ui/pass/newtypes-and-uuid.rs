//! Newtypes (`struct VendorCode(String)`, `#[serde(transparent)]` structs) are read,
//! rendered and checked as their inner type, under the name of the field that holds
//! them; `uuid::Uuid` (feature `uuid`) is a string of format `uuid`.
#![deny(warnings)]

use erp_tools_core::prelude::*;

/// A vendor's code, e.g. V-00001.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct VendorCode(pub String);

#[derive(Debug, Deserialize, ToolArgs)]
#[serde(transparent)]
pub struct Quantity {
    pub value: Decimal,
}

#[derive(Debug, Deserialize, ToolArgs)]
pub enum Uom {
    Pcs,
    Box,
}

// A unit of measure as a newtype over the unit enum: still an enum of allowed values.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct OrderUom(pub Uom);

#[derive(Debug, Deserialize, ToolArgs)]
pub struct Line {
    pub item_code: String,
    pub qty: Quantity,
    pub uom: OrderUom,
}

#[derive(Debug, Deserialize, ToolArgs)]
pub struct WithNewtypes {
    pub vendor_code: VendorCode,
    pub request_id: uuid::Uuid,
    pub client_ref: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Deserialize, ToolArgs)]
pub struct Plain {
    /// A vendor's code, e.g. V-00001.
    pub vendor_code: String,
    pub request_id: uuid::Uuid,
    pub client_ref: String,
    pub lines: Vec<PlainLine>,
}

#[derive(Debug, Deserialize, ToolArgs)]
pub struct PlainLine {
    pub item_code: String,
    pub qty: Decimal,
    pub uom: Uom,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: WithNewtypes,
) -> Result<String, ToolError> {
    Ok(args.vendor_code.0)
}

/// Create a draft purchase order.
#[erp_tool(module = "plain", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft_plain(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: Plain,
) -> Result<String, ToolError> {
    Ok(args.vendor_code)
}

fn main() {
    let registry = ToolRegistry::builder()
        .module("purchasing", "Purchase orders. Cannot approve.")
        .tool::<create_po_draft>()
        .module("plain", "Purchase orders. Cannot approve.")
        .tool::<create_po_draft_plain>()
        .build()
        .expect("registers");
    let with = registry.get("purchasing_create_po_draft").expect("tool");
    let plain = registry.get("plain_create_po_draft_plain").expect("tool");
    for target in Target::ALL {
        // The same strict schema for every target, whether the fields are newtypes or not.
        assert_eq!(
            with.input_schema(target),
            plain.input_schema(target),
            "{target:?}"
        );
        assert!(erp_tools_core::schema::check_strict(with.input_schema(target), target).is_empty());
    }
    let text = with.input_schema(Target::OpenAi).to_string();
    assert!(text.contains(r#""format":"uuid""#), "{text}");

    // Newtypes read their inner value; the uuid is validated before the handler runs.
    let args = serde_json::json!({
        "vendor_code": "V-00001",
        "request_id": "123e4567-e89b-12d3-a456-426614174000",
        "client_ref": "r-1",
        "lines": [{"item_code": "BRG-0230", "qty": "5", "uom": "Box"}]
    });
    let checked = with.validate(&args).expect("valid arguments");
    let read: WithNewtypes = serde_json::from_value(checked).expect("serde reads the newtypes");
    assert_eq!(read.vendor_code.0, "V-00001");
    assert_eq!(read.lines[0].qty.value, Decimal::from(5));
    let mut bad = args.clone();
    bad["request_id"] = "not-a-uuid".into();
    let errors = with
        .validate(&bad)
        .expect_err("a malformed uuid is refused");
    assert!(format!("{errors:?}").contains("UUID"), "{errors:?}");
}
