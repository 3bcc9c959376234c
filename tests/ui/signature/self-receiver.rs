use erp_tools_core::prelude::*;

struct Stock;

impl Stock {
    /// Look up the stock of an item.
    #[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
    async fn get_stock(&self, _ctx: &ToolContext) -> Result<u32, ToolError> {
        Ok(0)
    }
}

fn main() {}
