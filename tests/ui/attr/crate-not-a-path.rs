use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[erp(crate = "my reexport")]
struct StockArgs {
    item_code: String,
}

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], crate = erp_tools_core)]
async fn get_stock(_ctx: &ToolContext, _db: &ReadDb, args: StockArgs) -> Result<String, ToolError> {
    Ok(args.item_code)
}

fn main() {}
