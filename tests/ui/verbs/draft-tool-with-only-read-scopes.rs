use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:read", "purchasing:view"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
