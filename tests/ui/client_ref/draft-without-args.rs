use erp_tools_core::prelude::*;

/// Create an empty draft purchase order.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn create_empty_po(_ctx: &ToolContext, _tx: &mut DraftTx) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
