use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct ListArgs {
    /// Only vendors whose name contains this text. Null for all.
    name_contains: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct VendorRow {
    code: String,
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = 50)]
async fn list_vendors(_ctx: &ToolContext, _args: ListArgs) -> Result<Vec<VendorRow>, ToolError> {
    Ok(Vec::new())
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = "50")]
async fn list_more_vendors(_ctx: &ToolContext, _args: ListArgs, page: PageRequest) -> Result<Page<VendorRow>, ToolError> {
    Ok(page.page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

fn main() {}
