use erp_tools_core::prelude::*;

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scope = ["inventory:read"])]
async fn get_stock(_ctx: &ToolContext, _db: &ReadDb) -> Result<u32, ToolError> {
    Ok(0)
}

fn main() {}
