use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Scope {
    #[serde(rename = "branch_id")]
    site: i64,
}

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    item_code: String,
    #[serde(flatten)]
    scope: Scope,
}

/// Get stock of one item.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn get_stock(_ctx: &ToolContext, args: StockArgs) -> Result<String, ToolError> {
    Ok(args.item_code)
}

fn main() {}
