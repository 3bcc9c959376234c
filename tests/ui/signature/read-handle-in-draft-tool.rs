use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct ReorderArgs {
    item_code: String,
    client_ref: String,
}

/// Create a draft reorder request for an item.
#[erp_tool(module = "inventory", tier = "draft", scopes = ["inventory:draft"])]
async fn create_reorder(_ctx: &ToolContext, _db: &ReadDb, args: ReorderArgs) -> Result<String, ToolError> {
    Ok(args.item_code + &args.client_ref)
}

fn main() {}
