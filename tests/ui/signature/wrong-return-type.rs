use erp_tools_core::prelude::*;

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn get_stock(_ctx: &ToolContext, _db: &ReadDb) -> Result<u32, String> {
    Ok(0)
}

/// Count the warehouses of the branch.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn count_warehouses(_ctx: &ToolContext) {}

fn main() {}
