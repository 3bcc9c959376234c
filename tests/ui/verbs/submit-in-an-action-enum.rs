use erp_tools_core::prelude::*;

/// What to do with the order once drafted.
#[derive(Deserialize, ToolArgs)]
enum PoAction {
    SaveDraft,
    Submit,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
    action: PoAction,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
