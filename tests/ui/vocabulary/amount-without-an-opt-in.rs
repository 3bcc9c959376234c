use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PaymentArgs {
    vendor_code: String,
    client_ref: String,
    amount: Decimal,
}

/// Create a draft purchase order.
#[erp_tool(module = "finance", tier = "draft", scopes = ["finance:draft"])]
async fn create_payment_request_draft(_ctx: &ToolContext, _tx: &mut DraftTx, args: PaymentArgs) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {}
