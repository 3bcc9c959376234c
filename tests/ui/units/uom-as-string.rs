use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoLine {
    item_code: String,
    qty: Decimal,
    uom: String,
}

fn main() {}
