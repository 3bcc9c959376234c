use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Scope {
    Open,
    Closed,
}

/// List purchase orders.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn list_pos(_ctx: &ToolContext, _db: &ReadDb, args: Scope) -> Result<u32, ToolError> {
    Ok(matches!(args, Scope::Open) as u32)
}

fn main() {}
