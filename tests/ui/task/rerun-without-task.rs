use erp_tools_core::prelude::*;

#[derive(Serialize, JsonSchema)]
struct Valuation {
    total: Decimal,
}

/// Value the stock of every warehouse of the caller's branch.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], rerun = false)]
async fn value_stock(_ctx: &ToolContext) -> Result<Valuation, ToolError> {
    Ok(Valuation { total: Decimal::ZERO })
}

/// Value the stock of one warehouse of the caller's branch.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], task = "optional", rerun = "no")]
async fn value_warehouse(_ctx: &ToolContext) -> Result<Valuation, ToolError> {
    Ok(Valuation { total: Decimal::ZERO })
}

fn main() {}
