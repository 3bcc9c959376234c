use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Dates {
    needed_by: NaiveDate,
    #[serde(rename = "postingDate")]
    post: NaiveDate,
}

#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    vendor_code: String,
    client_ref: String,
    #[serde(flatten)]
    dates: Dates,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.vendor_code)
}

fn main() {}
