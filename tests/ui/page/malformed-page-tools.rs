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

// ---- the page and its request: both, the request last, by value ----

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn page_without_request(_ctx: &ToolContext, _args: ListArgs) -> Result<Page<VendorRow>, ToolError> {
    Ok(PageRequest::first(10).page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn request_without_page(_ctx: &ToolContext, _args: ListArgs, _page: PageRequest) -> Result<Vec<VendorRow>, ToolError> {
    Ok(Vec::new())
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn request_not_last(_ctx: &ToolContext, page: &PageRequest, _args: ListArgs) -> Result<Page<VendorRow>, ToolError> {
    Ok(page.page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

// ---- the page size keys: on page tools only, whole numbers, within their bounds ----

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = 50)]
async fn page_size_on_a_plain_tool(_ctx: &ToolContext, _args: ListArgs) -> Result<Vec<VendorRow>, ToolError> {
    Ok(Vec::new())
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = "50")]
async fn page_size_as_text(_ctx: &ToolContext, _args: ListArgs, page: PageRequest) -> Result<Page<VendorRow>, ToolError> {
    Ok(page.page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = 300, max_page_size = 200)]
async fn page_size_over_max(_ctx: &ToolContext, _args: ListArgs, page: PageRequest) -> Result<Page<VendorRow>, ToolError> {
    Ok(page.page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], max_page_size = 5000)]
async fn max_page_size_over_a_thousand(_ctx: &ToolContext, _args: ListArgs, page: PageRequest) -> Result<Page<VendorRow>, ToolError> {
    Ok(page.page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

/// List vendors by code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], page_size = 0)]
async fn page_size_zero(_ctx: &ToolContext, _args: ListArgs, page: PageRequest) -> Result<Page<VendorRow>, ToolError> {
    Ok(page.page(Vec::new(), |v: &VendorRow| v.code.clone()))
}

fn main() {}
