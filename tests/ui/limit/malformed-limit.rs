use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Line {
    qty: Decimal,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    client_ref: String,
    lines: Vec<Line>,
}

/// Create a draft purchase order.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft"],
    limit = "lines[].qty < 1000",
    limit = "sum of lines <= lots"
)]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<usize, ToolError> {
    Ok(args.lines.len())
}

fn main() {}
