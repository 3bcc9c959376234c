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
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn list_vendors(_ctx: &ToolContext, _args: ListArgs) -> Result<Page<VendorRow>, ToolError> {
    Ok(PageRequest::first(10).page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

fn main() {}
