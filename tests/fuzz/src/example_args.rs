// The argument types of examples/distributor, as declared there (kept equal by the
// `bounds_example` test and the check in the `validate_args` target).

/// Status of a purchase order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, ToolArgs)]
#[serde(rename_all = "lowercase")]
pub enum PoStatus {
    /// Created, not yet submitted by a person.
    Draft,
    /// Submitted for approval.
    Submitted,
    /// Approved, not yet posted.
    Approved,
    /// Posted: sent to the vendor and booked.
    Posted,
    /// Cancelled.
    Cancelled,
}

/// Unit of measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
pub enum Uom {
    /// Pieces.
    PCS,
    /// Boxes (the factor to pieces depends on the item).
    BOX,
    /// Kilograms.
    KG,
    /// Litres.
    LTR,
}

/// Arguments of `purchasing_search_vendors`.
#[derive(Deserialize, ToolArgs)]
pub struct SearchVendorsArgs {
    /// Part of the vendor's name or code, e.g. "plastik" or "V-002". Null for all vendors.
    query: Option<String>,
    /// Only vendors with a price for this item, e.g. BRG-0042. Null for any item.
    item_code: Option<String>,
}

/// Arguments of `purchasing_get_vendor_summary`.
#[derive(Deserialize, ToolArgs)]
pub struct VendorCodeArgs {
    /// Vendor code from purchasing_search_vendors, e.g. V-00231
    vendor_code: String,
}

/// Arguments of `purchasing_search_pos`.
#[derive(Deserialize, ToolArgs)]
pub struct SearchPosArgs {
    /// Only orders in this status. Null for any status.
    status: Option<PoStatus>,
    /// Only orders with this vendor, e.g. V-00231. Null for any vendor.
    vendor_code: Option<String>,
    /// Only orders needed on or before this date. Null for any date.
    needed_before: Option<NaiveDate>,
}

/// Arguments of `purchasing_get_item_summary`.
#[derive(Deserialize, ToolArgs)]
pub struct ItemSummaryArgs {
    /// Item code, e.g. BRG-0042
    item_code: String,
}

/// Arguments of `purchasing_get_po` and `purchasing_print_po`.
#[derive(Deserialize, ToolArgs)]
pub struct GetPoArgs {
    /// Purchase order number, e.g. PO-2026-0042
    number: String,
}

/// Arguments of `purchasing_create_po_draft`.
#[derive(Deserialize, ToolArgs)]
pub struct PoDraftArgs {
    /// Vendor code from purchasing_search_vendors, e.g. V-00231
    vendor_code: String,
    /// Date needed, YYYY-MM-DD
    needed_by: NaiveDate,
    /// Your own id for this order within the run. Reuse it when retrying.
    client_ref: String,
    /// Why this order is needed. Shown to the reviewer.
    note: Option<String>,
    /// What to order, at least one line.
    #[erp(len = 1..=50)]
    lines: Vec<PoLineArgs>,
}

/// One line of a draft order.
#[derive(Deserialize, ToolArgs)]
pub struct PoLineArgs {
    /// Item code, e.g. BRG-0042
    item_code: String,
    /// Quantity in the given unit, more than 0.
    #[erp(positive, max = 10000)]
    qty: Decimal,
    /// Unit of measure; must be one the item is stocked in.
    uom: Uom,
}

/// Arguments of `inventory_get_stock`.
#[derive(Deserialize, ToolArgs)]
pub struct GetStockArgs {
    /// Item code, e.g. BRG-0042
    item_code: String,
    /// Only this warehouse of the caller's branch, e.g. SBY-WH1. Null for all of them.
    warehouse_code: Option<String>,
}
