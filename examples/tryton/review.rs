//! The review console at `/review`: the drafts agents made in Tryton, each with Tryton's
//! number, the supplier, the priced lines and the total, and the story of why it exists
//! (the calls of its run), exactly as for a document in erp-tools' own database.

use erp_tools_core::Database;
use erp_tools_core::agent::ApprovalQueue;
use erp_tools_core::auth::Authenticator;
use erp_tools_core::review::{self, DocumentView, ReviewConfig};

/// The console's scopes, for the `token` command.
pub const REVIEW_SCOPES: [&str; 2] = [review::REVIEW_READ, review::REVIEW_APPROVE];

/// How the console shows a Tryton purchase: the draft tool's output (`DraftPurchase`).
fn purchase_view() -> DocumentView {
    let view = DocumentView::new("purchase.purchase", "Draft purchase in Tryton")
        .field("Supplier", "/supplier")
        .field("Supplier id", "/supplier_id")
        .field("Branch (Tryton company)", "/branch")
        .field("Tryton purchase id", "/purchase_id")
        .lines("/lines")
        .column("Product id", "/product_id")
        .quantity("Qty", "/quantity")
        .money("Unit price", "/unit_price")
        .money("Amount", "/amount")
        .total("/untaxed_total")
        .status("/state");
    // Tryton's own page of a purchase, e.g. `http://127.0.0.1:8000/#erp/model/purchase.purchase/{id}`
    // for its web client: shown only when one is named.
    match std::env::var("ERP_TOOLS_TRYTON_WEB_URL") {
        Ok(template) if !template.trim().is_empty() => view.erp_url(template),
        _ => view,
    }
}

/// The console over erp-tools' own store `db`, signing reviewers in with `authenticator`.
pub fn console(authenticator: Authenticator, db: Database) -> axum::Router {
    let config = ReviewConfig::new(authenticator, ApprovalQueue::new(db))
        .mount_path("/review")
        .document_view(purchase_view())
        .insecure_http(); // the example serves plain http on the loopback address
    review::router(config)
}
