use erp_tools_core::prelude::*;

/// Look up the stock of an item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn get_stock<'a, T: Default>(_ctx: &'a ToolContext, _db: &ReadDb) -> Result<u32, ToolError> {
    let _ = T::default();
    Ok(0)
}

fn main() {}
