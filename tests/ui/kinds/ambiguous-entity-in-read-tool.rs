use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Args {
    entity: Option<String>,
}

/// List purchase orders. Read only.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn tool_under_test(_ctx: &ToolContext, _db: &ReadDb, args: Args) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

fn main() {}
