use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: Option<String>,
}

fn main() {}
