//! `purchasing`: vendors and purchase orders of the caller's branch. Creates DRAFT purchase
//! orders only.

use erp_tools_core::prelude::*;

use super::branch::in_branch;
use super::calls::count_handler_call;
use super::documents::{self, Draft};
use super::faults;

/// The module's description, as the registry shows it.
pub const DESCRIPTION: &str = "Vendors and purchase orders of your branch. Creates DRAFT \
     purchase orders only: cannot approve, send, post or cancel orders, and cannot change \
     prices.";

/// Arguments of `purchasing_search_vendors`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct SearchVendorsArgs {
    /// Part of the vendor's name or code, e.g. "sinar"; null lists every vendor
    pub query: Option<String>,
}

/// Vendors found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VendorList {
    /// Matching vendors of the caller's branch, by code.
    pub vendors: Vec<VendorRow>,
}

/// One vendor.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VendorRow {
    /// Vendor code, e.g. V-00001.
    pub code: String,
    /// Vendor name.
    pub name: String,
}

/// Search the vendors of the caller's branch by name or code.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], title = "Search vendors")]
pub async fn search_vendors(
    ctx: &ToolContext,
    db: &ReadDb,
    args: SearchVendorsArgs,
) -> Result<VendorList, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let pattern = format!(
        "%{}%",
        args.query
            .unwrap_or_default()
            .to_lowercase()
            .replace(['%', '_'], "")
    );
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT code, name FROM vendors WHERE branch_id = $1 \
         AND (LOWER(name) LIKE $2 OR LOWER(code) LIKE $2) ORDER BY code",
    )
    .bind(ctx.branch_id())
    .bind(pattern)
    .fetch_all(db.pool())
    .await?;
    Ok(VendorList {
        vendors: rows
            .into_iter()
            .map(|(code, name)| VendorRow { code, name })
            .collect(),
    })
}

/// Arguments of `purchasing_get_vendor_summary`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct VendorArgs {
    /// Vendor code, e.g. V-00001
    pub vendor_code: String,
}

/// A vendor and the note kept on it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VendorSummary {
    /// Vendor code.
    pub code: String,
    /// Vendor name.
    pub name: String,
    /// Free-text note kept on the vendor (typed by people, including the vendor).
    pub note: String,
}

/// Show a vendor of the caller's branch: name and the note kept on it.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn get_vendor_summary(
    ctx: &ToolContext,
    db: &ReadDb,
    args: VendorArgs,
) -> Result<VendorSummary, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let sql = "SELECT code, name, note FROM vendors WHERE code = $1 AND branch_id = $2";
    let row: Option<(String, String, String)> =
        in_branch(ctx, db.pool(), sql, &args.vendor_code).await?;
    let Some((code, name, note)) = row else {
        return Err(ToolError::not_found("Vendor", &args.vendor_code));
    };
    Ok(VendorSummary { code, name, note })
}

/// Arguments of `purchasing_get_po`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct GetPoArgs {
    /// Purchase order number, e.g. PO-2026-0001
    pub number: String,
}

/// One purchase order.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PoView {
    /// Business number.
    pub number: String,
    /// Vendor code.
    pub vendor_code: String,
    /// Always `draft` for orders created by tools.
    pub status: String,
    /// Sum of the line quantities.
    pub total_qty: String,
    /// The agent run that drafted it.
    pub drafted_by_agent_run: String,
    /// The person on whose behalf it was drafted.
    pub drafted_on_behalf_of: String,
}

/// Show one purchase order of the caller's branch by its number.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], title = "Get purchase order")]
pub async fn get_po(ctx: &ToolContext, db: &ReadDb, args: GetPoArgs) -> Result<PoView, ToolError> {
    count_handler_call(ctx.agent_run_id());
    if args.number == faults::PO_WRITES_THROUGH_READ_HANDLE {
        faults::write_through(db).await?;
    }
    let sql = "SELECT number, vendor_code, status, total_qty, drafted_by_agent_run, \
               drafted_on_behalf_of FROM purchase_orders WHERE number = $1 AND branch_id = $2";
    let row: Option<(String, String, String, String, String, String)> =
        in_branch(ctx, db.pool(), sql, &args.number).await?;
    let Some((number, vendor_code, status, total_qty, run, user)) = row else {
        return Err(ToolError::not_found("Purchase order", &args.number));
    };
    Ok(PoView {
        number,
        vendor_code,
        status,
        total_qty,
        drafted_by_agent_run: run,
        drafted_on_behalf_of: user,
    })
}

/// A unit of measure.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
pub enum Uom {
    /// Pieces
    PCS,
    /// Boxes
    BOX,
    /// Kilograms
    KG,
}

/// One order line.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct PoLine {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
    /// Quantity in the given unit, e.g. "24"
    pub qty: Decimal,
    /// Unit of measure
    pub uom: Uom,
}

/// Arguments of `purchasing_create_po_draft`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct PoDraftArgs {
    /// Vendor code from purchasing_search_vendors, e.g. V-00001
    pub vendor_code: String,
    /// Date the goods are needed by
    pub needed_by: NaiveDate,
    /// Your own id for this order within the run. Reuse it when retrying.
    pub client_ref: String,
    /// Why this order is needed. Shown to the reviewer.
    pub note: Option<String>,
    /// 1 = urgent
    pub priority: Option<u8>,
    /// The order lines
    pub lines: Vec<PoLine>,
}

/// The draft created.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PoDraft {
    /// Business number of the draft, e.g. PO-2026-0001.
    pub number: String,
    /// Always `draft`: a person reviews and submits it in the ERP.
    pub status: String,
    /// Sum of the line quantities.
    pub total_qty: Decimal,
    /// Number of lines.
    pub line_count: u32,
}

/// Create a DRAFT purchase order for the caller's branch. A person reviews and submits it
/// in the ERP.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft"],
    title = "Create purchase order draft",
    limit = "lines[].qty <= 10000"
)]
pub async fn create_po_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: PoDraftArgs,
) -> Result<PoDraft, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let sql = "SELECT name FROM vendors WHERE code = $1 AND branch_id = $2";
    let vendor: Option<(String,)> = in_branch(ctx, tx.conn(), sql, &args.vendor_code).await?;
    if vendor.is_none() {
        return Err(ToolError::not_found("Vendor", &args.vendor_code)
            .next_step("Call purchasing_search_vendors and use a code from the results.")
            .not_done("No draft was created."));
    }
    if args.lines.is_empty() {
        return Err(
            ToolError::invalid_arguments("A purchase order needs at least one line.")
                .not_done("No draft was created."),
        );
    }
    let total: Decimal = args.lines.iter().map(|l| l.qty).sum();
    let (run, user) = documents::provenance(tx);
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO purchase_orders (number, branch_id, vendor_code, needed_by, note, status, \
         total_qty, drafted_by_agent_run, drafted_on_behalf_of) \
         VALUES ($1, $2, $3, $4, $5, 'draft', $6, $7, $8) RETURNING id",
    )
    .bind(documents::placeholder_number(tx, &args.client_ref))
    .bind(ctx.branch_id())
    .bind(args.vendor_code.clone())
    .bind(args.needed_by.to_string())
    .bind(args.note.clone())
    .bind(total.normalize().to_string())
    .bind(run)
    .bind(user)
    .fetch_one(tx.conn())
    .await?;
    for line in &args.lines {
        sqlx::query("INSERT INTO po_lines (po_id, item_code, qty, uom) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(line.item_code.clone())
            .bind(line.qty.normalize().to_string())
            .bind(format!("{:?}", line.uom))
            .execute(tx.conn())
            .await?;
    }
    let number = documents::complete(ctx, tx, Draft::PurchaseOrder, id, &args.vendor_code).await?;
    Ok(PoDraft {
        number,
        status: "draft".into(),
        total_qty: total.normalize(),
        line_count: u32::try_from(args.lines.len()).unwrap_or(u32::MAX),
    })
}
