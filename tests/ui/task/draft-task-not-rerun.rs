use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct ReorderArgs {
    /// Warehouse code, e.g. SBY-WH1
    warehouse: String,
    /// Your own id for this draft; reuse it when retrying
    client_ref: String,
}

#[derive(Serialize, JsonSchema)]
struct Reorder {
    number: String,
}

/// Draft the purchase orders that bring a warehouse back to its reorder points.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft"],
    task = "required",
    rerun = false
)]
async fn draft_reorders(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: ReorderArgs,
) -> Result<Reorder, ToolError> {
    Ok(Reorder { number: args.client_ref })
}

fn main() {}
