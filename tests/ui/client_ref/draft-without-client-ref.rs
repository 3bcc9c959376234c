use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    note: Option<String>,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.vendor_code)
}

fn main() {}
