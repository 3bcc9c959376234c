use erp_tools_core::prelude::*;

type Code = String;

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    order_uom: Code,
}

fn main() {}
