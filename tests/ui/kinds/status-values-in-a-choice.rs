use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Choice {
    Open,
    Closed,
}

#[derive(Deserialize, ToolArgs)]
struct Args {
    client_ref: String,
    option: Choice,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn tool_under_test(_ctx: &ToolContext, _tx: &mut DraftTx, args: Args) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

fn main() {}
