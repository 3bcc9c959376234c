use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct LookupArgs {
    #[erp(min = 1)]
    vendor_code: String,
}

fn main() {}
