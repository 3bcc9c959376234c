use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "PascalCase")]
struct DocumentLine {
    item_code: String,
    quantity: Decimal,
    unit_price: Decimal,
    discount_percent: Decimal,
    vat_group: String,
}

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "PascalCase")]
struct PurchaseOrderArgs {
    card_code: String,
    #[serde(rename = "client_ref")]
    client_ref: String,
    document_lines: Vec<DocumentLine>,
}

/// Create a draft purchase order in SAP Business One.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PurchaseOrderArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
