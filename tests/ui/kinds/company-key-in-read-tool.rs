use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Args {
    ad_org_id: Option<i64>,
    data_area_id: Option<String>,
    cabang_id: Option<i64>,
}

/// List purchase orders. Read only.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn tool_under_test(_ctx: &ToolContext, _db: &ReadDb, args: Args) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

fn main() {}
