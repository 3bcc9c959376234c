use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    currency_code: String,
    baseUomName: Option<String>,
    ISOCurrencyCode: Vec<String>,
    unitofmeasure: Box<str>,
}

fn main() {}
