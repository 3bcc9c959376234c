use erp_tools_core::prelude::*;

/// An amount of money.
#[derive(Deserialize, ToolArgs)]
struct Money(Decimal);

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
    unit_price: Money,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
