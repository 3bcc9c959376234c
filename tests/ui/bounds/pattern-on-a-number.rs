use erp_tools_core::prelude::*;

type Qty = Decimal;

#[derive(Deserialize, ToolArgs)]
struct PoLine {
    #[erp(pattern = "^[0-9]+$")]
    qty: Option<Qty>,
}

fn main() {}
