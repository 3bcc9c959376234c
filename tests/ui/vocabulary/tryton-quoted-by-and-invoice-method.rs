use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum InvoiceMethod {
    Manual,
    Order,
    Shipment,
}

#[derive(Deserialize, ToolArgs)]
struct PurchaseArgs {
    party: i64,
    client_ref: String,
    quoted_by: Option<i64>,
    invoice_method: InvoiceMethod,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PurchaseArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
