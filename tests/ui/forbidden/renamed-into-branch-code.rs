use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    item_code: String,
    #[serde(rename = "branch_code")]
    location: String,
}

fn main() {}
