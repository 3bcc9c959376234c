use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    item_code: String,
}

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn get_stock(_ctx: &ToolContext, _db: &ReadDb, args: StockArgs, warehouse: String) -> Result<String, ToolError> {
    Ok(args.item_code + &warehouse)
}

fn main() {}
