use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
struct PurchaseOrderLine {
    line_object_number: String,
    quantity: Decimal,
    direct_unit_cost: Decimal,
    discount_amount: Decimal,
    tax_code: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
struct PurchaseOrderArgs {
    vendor_number: String,
    #[serde(rename = "client_ref")]
    client_ref: String,
    purchase_order_lines: Vec<PurchaseOrderLine>,
}

/// Create a draft purchase order in Business Central.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PurchaseOrderArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
