use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
struct TransferLine {
    item_code: String,
    qty: Decimal,
    branch_code: String,
}

#[derive(Deserialize, ToolArgs)]
struct TransferDraftArgs {
    client_ref: String,
    lines: Vec<TransferLine>,
}

fn main() {}
