use erp_tools_core::prelude::*;

/// List purchase orders by number.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn list_pos(_ctx: &ToolContext, page: PageRequest) -> Result<Page, ToolError> {
    let _ = page;
    Err(ToolError::rejected("no purchase orders"))
}

fn main() {}
