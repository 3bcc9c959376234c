//! A read tool may filter on `status` and show prices: only draft tools may not take them.
#![deny(warnings)]

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "snake_case")]
pub enum PoStatus {
    Draft,
    Submitted,
    Approved,
}

#[derive(Deserialize, ToolArgs)]
pub struct ListPosArgs {
    /// Only orders in this status
    pub status: Option<PoStatus>,
    /// Only orders whose total is at least this
    pub min_total: Option<Decimal>,
    pub posted_at: Option<NaiveDate>,
}

#[derive(Serialize, JsonSchema)]
pub struct PoList {
    pub numbers: Vec<String>,
}

/// List the purchase orders of the caller's branch.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn list_pos(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: ListPosArgs,
) -> Result<PoList, ToolError> {
    let _ = (args.status, args.min_total, args.posted_at);
    Ok(PoList {
        numbers: Vec::new(),
    })
}

fn main() {
    let def = <list_pos as erp_tools_core::ErpTool>::definition();
    assert_eq!(def.name(), "purchasing_list_pos");
}
