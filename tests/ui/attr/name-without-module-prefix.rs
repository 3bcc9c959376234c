use erp_tools_core::prelude::*;

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], name = "get_stock")]
async fn get_stock(_ctx: &ToolContext, _db: &ReadDb) -> Result<u32, ToolError> {
    Ok(0)
}

/// Look up the stock of an item in every warehouse.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], name = "inventory.stock all")]
async fn get_all_stock(_ctx: &ToolContext, _db: &ReadDb) -> Result<u32, ToolError> {
    Ok(0)
}

fn main() {}
