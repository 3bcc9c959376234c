use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PostArgs {
    /// Purchase order number
    number: String,
    client_ref: String,
}

/// Post a purchase order to the ledger.
#[erp_tool(module = "purchasing", tier = "post", scopes = ["purchasing:post"])]
async fn post_po(ctx: &ToolContext, tx: &mut DraftTx, args: PostArgs) -> Result<String, ToolError> {
    let _ = (ctx, tx);
    Ok(args.number)
}

fn main() {}
