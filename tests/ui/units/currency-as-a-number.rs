use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    price_currency: u32,
}

fn main() {}
