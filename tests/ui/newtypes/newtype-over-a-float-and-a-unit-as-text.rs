use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Weight(f64);

#[derive(Deserialize, ToolArgs)]
struct UomCode(String);

#[derive(Deserialize, ToolArgs)]
struct LineArgs {
    item_code: String,
    weight: Weight,
    uom: UomCode,
}

/// Look up a line.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn get_line(_ctx: &ToolContext, args: LineArgs) -> Result<String, ToolError> {
    Ok(args.item_code)
}

fn main() {}
