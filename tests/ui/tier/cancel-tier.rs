use erp_tools_core::prelude::*;

/// Cancel every open purchase order.
#[erp_tool(module = "purchasing", tier = "cancel", scopes = ["purchasing:cancel"])]
async fn cancel_all(_ctx: &ToolContext, _db: &ReadDb) -> Result<u32, ToolError> {
    Ok(0)
}

fn main() {}
