//! `inventory`: stock on hand in the caller's branch. Read only.

use erp_tools_core::prelude::*;

use super::branch::in_branch;
use super::calls::count_handler_call;

/// The module's description, as the registry shows it.
pub const DESCRIPTION: &str =
    "Stock on hand in your branch's warehouses. Read only: cannot adjust or move stock.";

/// Arguments of `inventory_get_stock`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct StockArgs {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
}

/// Stock of one item in the caller's branch.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StockView {
    /// Item code.
    pub item_code: String,
    /// Quantity on hand.
    pub on_hand: Decimal,
    /// Unit of the quantity.
    pub uom: String,
    /// Branch the stock is in.
    pub branch_code: String,
}

/// Look up the stock on hand of one item in the caller's branch.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], title = "Get stock")]
pub async fn get_stock(
    ctx: &ToolContext,
    db: &ReadDb,
    args: StockArgs,
) -> Result<StockView, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let sql = "SELECT on_hand, uom FROM stock WHERE item_code = $1 AND branch_id = $2";
    let row: Option<(String, String)> = in_branch(ctx, db.pool(), sql, &args.item_code).await?;
    let Some((on_hand, uom)) = row else {
        return Err(ToolError::not_found("Item", &args.item_code));
    };
    let on_hand = on_hand.parse::<Decimal>().map_err(ToolError::internal)?;
    Ok(StockView {
        item_code: args.item_code,
        on_hand,
        uom,
        branch_code: ctx.branch_code().to_string(),
    })
}
