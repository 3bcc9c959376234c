use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct CopyArgs {
    /// Your own id for this write, reused on retry.
    client_ref: String,
}

#[derive(Serialize, JsonSchema)]
struct PoRow {
    number: String,
}

/// Create DRAFT copies of purchase orders.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn copy_pos(_ctx: &ToolContext, _tx: &mut DraftTx, _args: CopyArgs, page: PageRequest) -> Result<Page<PoRow>, ToolError> {
    Ok(page.page(Vec::new(), |p: &PoRow| p.number.clone()))
}

fn main() {}
