use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct VendorAndQty(String, Decimal);

fn main() {}
