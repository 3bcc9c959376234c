use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Filter {
    All,
    ByVendor(String),
    ByItem { item_code: String },
}

fn main() {}
