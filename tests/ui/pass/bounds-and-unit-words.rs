//! Declared bounds, shown in the description and enforced by validation; unit words
//! qualifying a number.
#![deny(warnings)]

use erp_tools_core::__private_0_1_0::serde_json::json;
use erp_tools_core::prelude::*;

#[derive(Debug, Deserialize, ToolArgs)]
pub enum Uom {
    PCS,
    BOX,
}

#[derive(Debug, Deserialize, ToolArgs)]
pub struct Line {
    /// Item code.
    #[erp(len = 3..=20, pattern = "[A-Z]{2,3}-[0-9]+")]
    pub item_code: String,
    #[erp(positive, max = 1000)]
    pub qty: Decimal,
    pub uom: Uom,
    #[erp(min = 1)]
    pub uom_factor: Option<u32>,
    pub units_per_box: u16,
}

#[derive(Debug, Deserialize, ToolArgs)]
pub struct PoArgs {
    #[erp(len = 1..=50)]
    pub lines: Vec<Line>,
    #[erp(min = -5, max = 5.5)]
    pub adjustments: Vec<Decimal>,
    pub order_uoms: Option<Vec<Uom>>,
}

fn main() {
    let schema = <PoArgs as ToolArgs>::tool_schema();
    let line = json!({"item_code": "AB-1", "qty": 5, "uom": "PCS", "uom_factor": null, "units_per_box": 12});
    let ok = json!({"lines": [line], "adjustments": ["-5", 5.5], "order_uoms": null});
    let normalised = erp_tools_core::validate::validate(&schema, &ok).expect("valid");
    let args: PoArgs = erp_tools_core::__private_0_1_0::serde_json::from_value(normalised).unwrap();
    assert_eq!(args.lines[0].qty, Decimal::from(5));
    let bad = json!({"lines": [{"item_code": "ab-1", "qty": 0, "uom": "PCS", "uom_factor": 0,
        "units_per_box": 1}], "adjustments": ["6"], "order_uoms": null});
    let e = erp_tools_core::validate::validate(&schema, &bad)
        .unwrap_err()
        .to_string();
    for says in [
        "lines[0].item_code",
        "lines[0].qty",
        "lines[0].uom_factor",
        "adjustments[0]",
    ] {
        assert!(e.contains(says), "{e}");
    }
    let rendered = schema.render(Target::OpenAi).to_string();
    assert!(
        rendered.contains("more than 0 and at most 1000"),
        "{rendered}"
    );
    assert!(rendered.contains("1 to 50 items"), "{rendered}");
    assert!(rendered.contains("Each item from -5 to 5.5"), "{rendered}");
    let first = &args.lines[0];
    let _ = (
        Uom::BOX,
        &first.item_code,
        &first.uom,
        first.uom_factor,
        first.units_per_box,
    );
    let _ = (&args.adjustments, &args.order_uoms);
}
