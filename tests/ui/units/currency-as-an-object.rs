use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
pub struct Money {
    pub code: String,
}

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    currency_info: Money,
}

fn main() {}
