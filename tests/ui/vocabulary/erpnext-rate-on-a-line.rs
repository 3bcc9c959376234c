use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoItem {
    item_code: String,
    qty: Decimal,
    /// Unit price
    rate: Decimal,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    supplier: String,
    client_ref: String,
    items: Vec<PoItem>,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
