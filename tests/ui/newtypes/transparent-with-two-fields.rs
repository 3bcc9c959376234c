use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(transparent)]
struct VendorCode {
    code: String,
    checked: bool,
}

fn main() {}
