use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PaymentArgs {
    invoice_number: String,
    amount: f64,
}

fn main() {}
