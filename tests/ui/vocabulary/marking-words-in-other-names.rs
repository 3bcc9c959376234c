use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Line {
    item_code: String,
    qty: Decimal,
    /// Percent off
    line_discount_pct: Option<Decimal>,
    vat_code: Option<String>,
    negotiated_rate: Option<Decimal>,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
    lines: Vec<Line>,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
