//! Every shape the distributor example's purchasing module needs.
#![deny(warnings)]

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
pub struct SearchVendorsArgs {
    /// Part of the vendor's name or code
    pub query: Option<String>,
    /// Only vendors supplying this item
    pub item_code: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Vendor {
    pub code: String,
    pub name: String,
}

/// Search the vendors of the caller's branch.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn search_vendors(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: SearchVendorsArgs,
) -> Result<Vec<Vendor>, ToolError> {
    let _ = (args.query, args.item_code);
    Ok(Vec::new())
}

#[derive(Deserialize, ToolArgs)]
pub struct GetPoArgs {
    /// Purchase order number, e.g. PO-2026-0042
    pub number: String,
}

#[derive(Serialize, JsonSchema)]
pub struct PoView {
    pub number: String,
    pub total: Decimal,
}

/// Get one purchase order by its number.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn get_po(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: GetPoArgs,
) -> Result<PoView, ToolError> {
    Err(ToolError::not_found("Purchase order", &args.number))
}

#[derive(Deserialize, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
pub enum Uom {
    PCS,
    BOX,
    KG,
    LTR,
}

#[derive(Deserialize, ToolArgs)]
pub struct PoLine {
    pub item_code: String,
    pub qty: Decimal,
    pub uom: Uom,
}

#[derive(Deserialize, ToolArgs)]
pub struct PoDraftArgs {
    pub vendor_code: String,
    pub needed_by: NaiveDate,
    pub client_ref: String,
    pub note: Option<String>,
    pub lines: Vec<PoLine>,
}

/// Create a DRAFT purchase order for the caller's branch.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: PoDraftArgs,
) -> Result<PoView, ToolError> {
    tx.record_document(DocumentRef {
        doc_type: "purchase_order".into(),
        id: 1.into(),
        number: "PO-1".into(),
    });
    let _ = (
        ctx.branch_id(),
        args.vendor_code,
        args.needed_by,
        args.client_ref,
        args.note,
    );
    let total = args.lines.iter().map(|l| l.qty).sum();
    let _ = args
        .lines
        .iter()
        .filter(|l| !l.item_code.is_empty() && !matches!(l.uom, Uom::BOX))
        .count();
    Ok(PoView {
        number: "PO-1".into(),
        total,
    })
}

#[derive(Serialize, JsonSchema)]
pub struct Reorder {
    pub item_codes: Vec<String>,
}

/// List the items below their reorder point.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
pub async fn items_to_reorder(_ctx: &ToolContext, _db: &ReadDb) -> Result<Reorder, ToolError> {
    Ok(Reorder {
        item_codes: Vec::new(),
    })
}

fn main() {
    let registry = erp_tools_core::ToolRegistry::builder()
        .module(
            "purchasing",
            "Vendors and purchase orders. Cannot approve or post.",
        )
        .module("inventory", "Stock. Cannot move stock.")
        .tool::<search_vendors>()
        .tool::<get_po>()
        .tool::<create_po_draft>()
        .tool::<items_to_reorder>()
        .build();
    assert!(registry.is_ok());
}
