use std::sync::Arc;

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    item_code: Box<str>,
    branch_code: Arc<str>,
}

fn main() {}
