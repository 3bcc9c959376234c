use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "snake_case")]
enum Follow {
    Nothing,
    #[serde(rename = "email_and_send")]
    Email,
    MarkApproved,
}

#[derive(Deserialize, ToolArgs)]
struct Line {
    item_code: String,
    then: Option<Follow>,
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
