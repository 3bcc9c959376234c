use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct VendorCode(String);

fn main() {}
