use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct OrderLine {
    product_id: i64,
    product_qty: Decimal,
    discount: Decimal,
    tax_ids: Vec<i64>,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    partner_id: i64,
    client_ref: String,
    order_line: Vec<OrderLine>,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
