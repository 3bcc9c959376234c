//! What both draft tools do with the row they inserted: give it its business number, run
//! the fault its vendor asks for (see [`super::faults`]), and record it with the
//! idempotency key.

use erp_tools_core::prelude::*;

use super::faults;

/// A kind of draft document of the fixture.
#[derive(Clone, Copy, Debug)]
pub(super) enum Draft {
    /// A row of `purchase_orders`, numbered `PO-2026-<id>`.
    PurchaseOrder,
    /// A row of `payment_requests`, numbered `PR-2026-<id>`.
    PaymentRequest,
}

impl Draft {
    fn doc_type(self) -> &'static str {
        match self {
            Draft::PurchaseOrder => "purchase_order",
            Draft::PaymentRequest => "payment_request",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Draft::PurchaseOrder => "PO",
            Draft::PaymentRequest => "PR",
        }
    }

    fn set_number_sql(self) -> &'static str {
        match self {
            Draft::PurchaseOrder => "UPDATE purchase_orders SET number = $1 WHERE id = $2",
            Draft::PaymentRequest => "UPDATE payment_requests SET number = $1 WHERE id = $2",
        }
    }
}

/// `(run, person)` a draft is made in and for, as its row records them.
pub(super) fn provenance(tx: &DraftTx) -> (String, String) {
    let p = tx.provenance();
    (
        p.drafted_by_agent_run.to_string(),
        p.drafted_on_behalf_of.to_string(),
    )
}

/// The number a draft row carries until [`complete`] gives it its own: unique per run and
/// `client_ref`, like the idempotency key.
pub(super) fn placeholder_number(tx: &DraftTx, client_ref: &str) -> String {
    format!("pending:{}:{client_ref}", tx.agent_run_id())
}

/// Numbers the `draft` row `id`, runs the fault `vendor_code` asks for, and records the
/// document. Returns the number.
pub(super) async fn complete(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    draft: Draft,
    id: i64,
    vendor_code: &str,
) -> Result<String, ToolError> {
    let number = format!("{}-2026-{id:04}", draft.prefix());
    sqlx::query(draft.set_number_sql())
        .bind(number.clone())
        .bind(id)
        .execute(tx.conn())
        .await?;
    faults::after_insert(ctx, vendor_code, &number).await?;
    tx.record_document(DocumentRef {
        doc_type: draft.doc_type().into(),
        id: id.into(),
        number: number.clone(),
    });
    Ok(number)
}
