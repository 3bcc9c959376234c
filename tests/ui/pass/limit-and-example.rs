//! `limit`, `example`, `title`, `name` and `destructive` on a draft tool.
#![deny(warnings)]

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
pub struct Line {
    pub item_code: String,
    pub qty: Decimal,
}

#[derive(Deserialize, ToolArgs)]
pub struct ReplaceLinesArgs {
    pub number: String,
    pub client_ref: String,
    pub lines: Vec<Line>,
    #[erp(
        allow = "amount",
        reason = "the amount the buyer asks to pay; a person approves it"
    )]
    pub amount: Decimal,
}

/// Replace every line of a draft purchase order.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft", "purchasing:read"],
    title = "Replace draft lines",
    name = "purchasing_replace_draft_lines",
    destructive = true,
    limit = "lines[].qty <= 1000",
    limit = "amount <= 5000000.00",
    example = r#"{"number": "PO-2026-0042", "client_ref": "r-7", "amount": "10",
                  "lines": [{"item_code": "BRG-0042", "qty": "24"}]}"#
)]
pub async fn replace_lines(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: ReplaceLinesArgs,
) -> Result<usize, ToolError> {
    let _ = (args.number, args.client_ref, args.amount);
    Ok(args
        .lines
        .iter()
        .filter(|l| !l.item_code.is_empty() && l.qty > Decimal::ZERO)
        .count())
}

fn main() {
    let def = <replace_lines as erp_tools_core::ErpTool>::definition();
    assert_eq!(def.name(), "purchasing_replace_draft_lines");
    assert!(def.destructive());
    assert_eq!(def.limits().len(), 2);
    assert_eq!(def.limits()[1].max, "5000000.00");
}
