use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoLineArgs {
    item_code: String,
    branch_id: i64,
    user_id: String,
    uom: String,
}

fn main() {}
