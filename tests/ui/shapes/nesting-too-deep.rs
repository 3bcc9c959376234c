use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct L5 {
    code: String,
}
#[derive(Deserialize, ToolArgs)]
struct L4 {
    inner: Vec<L5>,
}
#[derive(Deserialize, ToolArgs)]
struct L3 {
    inner: L4,
}
#[derive(Deserialize, ToolArgs)]
struct L2 {
    inner: L3,
}
#[derive(Deserialize, ToolArgs)]
struct DeepArgs {
    inner: L2,
}

/// Look up something deeply nested.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
async fn deep(_ctx: &ToolContext, args: DeepArgs) -> Result<String, ToolError> {
    Ok(args.inner.inner.inner.inner.iter().map(|l| l.code.as_str()).collect())
}

fn main() {}
