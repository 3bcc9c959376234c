use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoLine {
    item_code: String,
    qty: Decimal,
    unit_price: Decimal,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
    lines: Vec<PoLine>,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.vendor_code)
}

fn main() {}
