use erp_tools_core::prelude::*;

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn get_stock(_ctx: &ToolContext, _tx: &mut DraftTx) -> Result<u32, ToolError> {
    Ok(0)
}

fn main() {}
