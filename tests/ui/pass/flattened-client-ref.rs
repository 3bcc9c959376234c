//! A draft tool's `client_ref` may come from a flattened struct shared by several tools.
#![deny(warnings)]

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
pub struct WriteRef {
    /// Your own id for this write within the run. Reuse it when retrying.
    pub client_ref: String,
}

#[derive(Deserialize, ToolArgs)]
pub struct TransferDraftArgs {
    pub item_code: String,
    pub qty: Decimal,
    #[serde(flatten)]
    pub write: WriteRef,
}

/// Create a draft stock transfer to another warehouse of the caller's branch.
#[erp_tool(module = "inventory", tier = "draft", scopes = ["inventory:draft"])]
pub async fn create_transfer_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: TransferDraftArgs,
) -> Result<String, ToolError> {
    Ok(format!(
        "{} {} {}",
        args.item_code, args.qty, args.write.client_ref
    ))
}

fn main() {
    let schema = <create_transfer_draft as erp_tools_core::ErpTool>::definition().input_schema();
    let names: Vec<&str> = schema
        .properties()
        .iter()
        .map(|p| p.name.as_ref())
        .collect();
    assert_eq!(names, ["item_code", "qty", "client_ref"]);
}
