//! Valid arguments for every tool of the fixture, as a model would send them.

use serde_json::{Value, json};

use super::seed::{ITEM, ITEM_BY_WEIGHT, VENDOR};
use super::tools;

/// A purchase order draft for [`VENDOR`]: 24 BOX of [`ITEM`] and 10.50 KG of
/// [`ITEM_BY_WEIGHT`] (34.5 in total), with a note.
pub fn po_draft(client_ref: &str) -> Value {
    json!({
        "vendor_code": VENDOR,
        "needed_by": "2026-12-01",
        "client_ref": client_ref,
        "note": "restock before the holidays",
        "lines": [
            {"item_code": ITEM, "qty": "24", "uom": "BOX"},
            {"item_code": ITEM_BY_WEIGHT, "qty": "10.50", "uom": "KG"}
        ]
    })
}

/// A purchase order draft for `vendor`: `qty` BOX of [`ITEM`], without a note.
pub fn order(vendor: &str, qty: &str, client_ref: &str) -> Value {
    json!({ "vendor_code": vendor, "needed_by": "2026-12-01", "client_ref": client_ref,
            "lines": [{ "item_code": ITEM, "qty": qty, "uom": "BOX" }] })
}

/// A payment request of `amount` to `vendor`, without a note.
pub fn payment_request(vendor: &str, amount: &str, client_ref: &str) -> Value {
    json!({ "vendor_code": vendor, "amount": amount, "client_ref": client_ref, "note": null })
}

/// Valid arguments for `tool` (drafts use `client_ref`). `purchasing_get_po` asks for
/// PO-2026-0001, the first draft created on a database.
pub fn valid_arguments(tool: &str, client_ref: &str) -> Value {
    match tool {
        tools::SEARCH_VENDORS => json!({"query": "sinar"}),
        tools::GET_VENDOR_SUMMARY => json!({"vendor_code": VENDOR}),
        tools::GET_PO => json!({"number": "PO-2026-0001"}),
        tools::CREATE_PO_DRAFT => po_draft(client_ref),
        tools::GET_STOCK => json!({"item_code": ITEM}),
        tools::CREATE_PAYMENT_REQUEST_DRAFT => payment_request(VENDOR, "1000", client_ref),
        other => panic!("{other} is not a tool of the fixture"),
    }
}
