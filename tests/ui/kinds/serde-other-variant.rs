use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Priority {
    Low,
    High,
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize, ToolArgs)]
struct Args {
    priority: Option<Priority>,
}

/// List purchase orders. Read only.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn tool_under_test(_ctx: &ToolContext, _db: &ReadDb, args: Args) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

fn main() {}
