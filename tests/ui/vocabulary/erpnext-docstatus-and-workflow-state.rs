use erp_tools_core::prelude::*;

/// ERPNext's Purchase Order header fields, copied as a team would.
#[derive(Deserialize, ToolArgs)]
struct PoDraftArgs {
    supplier: String,
    schedule_date: NaiveDate,
    client_ref: String,
    /// 0 draft, 1 submitted
    docstatus: i32,
    workflow_state: String,
}

/// Create a draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_po_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PoDraftArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
