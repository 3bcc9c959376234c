//! The safe twins of `ui/kinds/`: draft arguments of every kind, recognised by name and
//! type in English, Indonesian and other ERPs' spellings, or declared with
//! `#[erp(kind = "..")]`; an ambiguous party declared a vendor. All compile, and the
//! surface report and the lock file list the declarations.
#![deny(warnings)]

use erp_tools_core::prelude::*;
use erp_tools_core::report::SurfaceReport;

#[derive(Deserialize, ToolArgs)]
pub enum Uom {
    Pcs,
    Box,
}

#[derive(Deserialize, ToolArgs)]
pub enum Priority {
    Normal,
    Urgent,
}

/// A newtype named for what it is: a reference by its own name.
#[derive(Deserialize, ToolArgs)]
pub struct VendorCode(pub String);

/// iDempiere's C_OrderLine, the fields a person may describe.
#[derive(Deserialize, ToolArgs)]
#[allow(non_snake_case)]
pub struct OrderLine {
    pub M_Product_ID: i64,
    pub QtyEntered: Decimal,
    pub C_UOM_ID: i64,
    pub DatePromised: Option<NaiveDate>,
    pub Description: Option<String>,
    pub Line: Option<i32>,
}

/// iDempiere's C_Order; NetSuite's `entity` is the vendor, declared so.
#[derive(Deserialize, ToolArgs)]
#[allow(non_snake_case)]
pub struct IdempiereArgs {
    pub C_BPartner_ID: i64,
    pub M_Warehouse_ID: i64,
    pub POReference: Option<String>,
    pub client_ref: String,
    #[erp(kind = "reference", of = "vendor")]
    pub entity: Option<String>,
    pub lines: Vec<OrderLine>,
}

/// Create a draft purchase order in iDempiere.
#[erp_tool(module = "idempiere", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: IdempiereArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// Indonesian names: item code, quantity, unit, note, dates asked for.
#[derive(Deserialize, ToolArgs)]
pub struct Baris {
    pub kode_barang: String,
    pub jumlah: Decimal,
    pub satuan: Uom,
    pub keterangan: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
pub struct DrafPesananArgs {
    pub kode_pemasok: VendorCode,
    pub gudang: String,
    pub tanggal_dibutuhkan: NaiveDate,
    pub catatan: Option<String>,
    pub prioritas: Priority,
    /// A flag a person may set, declared a choice.
    #[erp(kind = "choice")]
    pub kirim_sebagian: bool,
    /// A count no name says, declared a quantity.
    #[erp(kind = "quantity")]
    pub koli: Option<u32>,
    pub client_ref: String,
    pub baris: Vec<Baris>,
}

/// Buat draf pesanan pembelian untuk cabang pemanggil.
#[erp_tool(module = "pembelian", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn buat_draf_pesanan(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: DrafPesananArgs,
) -> Result<String, ToolError> {
    let _ = (
        args.kode_pemasok.0,
        args.gudang,
        args.kirim_sebagian,
        args.koli,
    );
    Ok(args.client_ref)
}

/// Odoo's purchase.requisition: its own `line_ids` are the lines asked for (account.move's
/// journal items of the same name are judged by their own fields).
#[derive(Deserialize, ToolArgs)]
pub struct RequisitionLine {
    pub product_id: i64,
    pub product_qty: Decimal,
    pub product_description_variants: Option<String>,
}

#[derive(Deserialize, ToolArgs)]
pub struct RequisitionArgs {
    pub vendor_id: i64,
    pub date_end: Option<NaiveDate>,
    pub description: Option<String>,
    pub client_ref: String,
    pub line_ids: Vec<RequisitionLine>,
}

/// Create a draft purchase agreement in Odoo.
#[erp_tool(module = "idempiere", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_requisition_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: RequisitionArgs,
) -> Result<String, ToolError> {
    Ok(args.client_ref)
}

/// A read tool filters by what it likes: status, a price range, the vendor.
#[derive(Deserialize, ToolArgs)]
pub struct ListArgs {
    pub status: Option<String>,
    pub min_unit_price: Option<Decimal>,
    #[erp(kind = "reference", of = "customer")]
    pub client: Option<String>,
}

/// List purchase orders of the caller's branch. Read only.
#[erp_tool(module = "idempiere", tier = "read", scopes = ["purchasing:read"])]
pub async fn list_orders(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: ListArgs,
) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

fn main() {
    let registry = ToolRegistry::builder()
        .module(
            "idempiere",
            "Purchase orders in iDempiere. Cannot approve, post or send them.",
        )
        .module(
            "pembelian",
            "Draf pesanan pembelian. Cannot approve, post or send them.",
        )
        .tool::<create_po_draft>()
        .tool::<buat_draf_pesanan>()
        .tool::<create_requisition_draft>()
        .tool::<list_orders>()
        .build()
        .expect("the registry builds");
    let report = SurfaceReport::new(&registry);
    assert!(report.all_pass(), "{}", report.to_table());
    let text = report.to_table();
    assert!(
        text.contains("`entity` declared reference of vendor"),
        "{text}"
    );
    assert!(text.contains("`kirim_sebagian` declared choice"), "{text}");
    assert!(
        text.contains("`client` declared reference of customer"),
        "{text}"
    );
    let lock = erp_tools_core::lock::SurfaceLock::new(&registry).to_text();
    assert!(
        lock.contains("kinds\n| entity reference of vendor"),
        "{lock}"
    );
    assert!(lock.contains("koli quantity"), "{lock}");
}
