use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    item_code: String,
}

/// Look up the stock of an item.
#[erp_tool(
    module = "inventory",
    tier = "read",
    scopes = ["inventory:read"],
    example = r#"{item_code: "BRG-0042"}"#
)]
async fn get_stock(_ctx: &ToolContext, args: StockArgs) -> Result<String, ToolError> {
    Ok(args.item_code)
}

fn main() {}
