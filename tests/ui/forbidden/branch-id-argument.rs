use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    item_code: String,
    /// Branch to look in
    branch_id: i64,
}

fn main() {}
