//! The safe twin of every unsafe shape under `ui/vocabulary/`, `ui/verbs/` and
//! `ui/opt_in/`: the same tools with the fields an ERP lets a draft fill (references by
//! code, quantities, requested dates, notes), status and identity filters in read tools,
//! enums without post-tier values, a write scope, and opt-ins that name the refusing
//! category with a reason. All of them compile and pass the surface report.
#![deny(warnings)]

use erp_tools_core::prelude::*;
use erp_tools_core::report::SurfaceReport;

/// ERPNext: Purchase Order and Purchase Order Item, the fields a draft may fill.
#[derive(Deserialize, ToolArgs)]
pub struct PoItem {
    pub item_code: String,
    pub qty: Decimal,
    pub schedule_date: Option<NaiveDate>,
    pub description: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
pub struct ErpnextPoArgs {
    pub supplier: String,
    pub schedule_date: NaiveDate,
    pub client_ref: String,
    pub items: Vec<PoItem>,
}

/// Create a draft purchase order in ERPNext.
#[erp_tool(module = "erpnext", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: ErpnextPoArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// A read tool may filter on a status: `docstatus`, `status` and `workflow_state`.
#[derive(Deserialize, ToolArgs)]
pub struct ErpnextListArgs {
    pub supplier: Option<String>,
    pub docstatus: Option<i32>,
    pub status: Option<String>,
    pub workflow_state: Option<String>,
    pub grand_total: Option<Decimal>,
}

/// List purchase orders of the caller's branch in ERPNext.
#[erp_tool(module = "erpnext", tier = "read", scopes = ["purchasing:read"])]
pub async fn list_orders(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: ErpnextListArgs,
) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

/// Odoo: purchase.order and purchase.order.line.
#[derive(Deserialize, ToolArgs)]
pub struct OrderLine {
    pub product_id: i64,
    pub product_qty: Decimal,
    pub date_planned: Option<NaiveDate>,
    pub name: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
pub struct OdooPoArgs {
    pub partner_id: i64,
    pub partner_ref: Option<String>,
    pub client_ref: String,
    pub date_planned: NaiveDate,
    pub order_line: Vec<OrderLine>,
}

/// Create a draft purchase order in Odoo.
#[erp_tool(module = "odoo", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft_odoo(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: OdooPoArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// Tryton: purchase.purchase.
#[derive(Deserialize, ToolArgs)]
pub struct PurchaseArgs {
    pub party: i64,
    pub client_ref: String,
    pub description: Option<String>,
    pub purchase_date: Option<NaiveDate>,
}

/// Create a draft purchase in Tryton.
#[erp_tool(module = "tryton", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_purchase_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: PurchaseArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// SAP Business One: PurchaseOrders and DocumentLines, PascalCase on the wire.
#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "PascalCase")]
pub struct DocumentLine {
    pub item_code: String,
    pub quantity: Decimal,
    pub warehouse_code: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "PascalCase")]
pub struct SapPoArgs {
    pub card_code: String,
    #[serde(rename = "client_ref")]
    pub client_ref: String,
    pub comments: Option<String>,
    pub document_lines: Vec<DocumentLine>,
}

/// Create a draft purchase order in SAP Business One.
#[erp_tool(module = "sap", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft_sap(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: SapPoArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// Business Central: purchaseOrders and purchaseOrderLines, camelCase on the wire.
#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
pub struct PurchaseOrderLine {
    pub line_object_number: String,
    pub quantity: Decimal,
    pub description: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
pub struct BcPoArgs {
    pub vendor_number: String,
    #[serde(rename = "client_ref")]
    pub client_ref: String,
    pub requested_receipt_date: Option<NaiveDate>,
    pub purchase_order_lines: Vec<PurchaseOrderLine>,
}

/// Create a draft purchase order in Business Central.
#[erp_tool(module = "bc", tier = "draft", scopes = ["purchasing:draft", "purchasing:read"])]
pub async fn create_po_draft_bc(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: BcPoArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// An enum without post-tier values, and a requested discount a person approves.
#[derive(Deserialize, ToolArgs)]
pub enum Priority {
    Normal,
    Urgent,
}

#[derive(Deserialize, ToolArgs)]
pub struct QuoteLine {
    pub item_code: String,
    pub qty: Decimal,
    #[erp(
        allow = "discount",
        reason = "the discount the customer asked for; the sales manager approves it"
    )]
    pub requested_discount_percentage: Option<Decimal>,
}

#[derive(Deserialize, ToolArgs)]
pub struct QuoteArgs {
    pub customer_code: String,
    pub client_ref: String,
    pub priority: Priority,
    pub lines: Vec<QuoteLine>,
}

/// Create a draft sales quote.
#[erp_tool(module = "sales", tier = "draft", scopes = ["sales:draft"])]
pub async fn create_quote_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: QuoteArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

fn main() {
    let registry = ToolRegistry::builder()
        .module("erpnext", "ERPNext purchase orders. Cannot submit.")
        .tool::<create_po_draft>()
        .tool::<list_orders>()
        .module("odoo", "Odoo purchase orders. Cannot confirm.")
        .tool::<create_po_draft_odoo>()
        .module("tryton", "Tryton purchases. Cannot quote or confirm.")
        .tool::<create_purchase_draft>()
        .module("sap", "SAP Business One purchase orders. Cannot approve.")
        .tool::<create_po_draft_sap>()
        .module("bc", "Business Central purchase orders. Cannot release.")
        .tool::<create_po_draft_bc>()
        .module("sales", "Sales quotes. Cannot send.")
        .tool::<create_quote_draft>()
        .build()
        .expect("the twins register");
    let report = SurfaceReport::new(&registry);
    assert!(report.all_pass(), "{}", report.to_table());
    let quote = report
        .tools
        .iter()
        .find(|t| t.name == "sales_create_quote_draft")
        .expect("quote tool");
    assert_eq!(quote.opt_ins.len(), 1);
    assert_eq!(quote.opt_ins[0].0, "lines[].requested_discount_percentage");
    assert_eq!(quote.opt_ins[0].1.category, "discount");
    assert!(
        report
            .to_table()
            .contains("`lines[].requested_discount_percentage` allowed as discount")
    );
    // The opt-in is for reviewers: no rendering the model reads carries it.
    for target in Target::ALL {
        let schema = registry
            .get("sales_create_quote_draft")
            .expect("quote")
            .input_schema(target);
        let text = schema.to_string();
        assert!(
            !text.contains("sales manager approves"),
            "{target:?}: {text}"
        );
        assert!(text.contains("requested_discount_percentage"), "{target:?}");
    }
}
