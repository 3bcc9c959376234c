use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
struct TransferArgs {
    item_code: String,
    target_branch_code: String,
}

fn main() {}
