use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
    #[erp(allow = "price", reason = "a reviewer approves it")]
    discount_percentage: Decimal,
    #[erp(allow = "tax")]
    tax_category: String,
    #[erp(allow = "amount", reason = "why not")]
    qty: Decimal,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
