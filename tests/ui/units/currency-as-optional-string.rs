use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    vendor_code: String,
    price_currency: Option<String>,
    order_unit: String,
}

fn main() {}
