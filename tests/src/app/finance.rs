//! `finance`: payment requests to the caller's branch's vendors. Creates DRAFT payment
//! requests only.

use erp_tools_core::prelude::*;

use super::branch::in_branch;
use super::calls::count_handler_call;
use super::documents::{self, Draft};

/// The module's description, as the registry shows it.
pub const DESCRIPTION: &str = "Payment request drafts. Cannot pay, approve or post.";

/// Arguments of `finance_create_payment_request_draft`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct PaymentArgs {
    /// Vendor code, e.g. V-00001
    pub vendor_code: String,
    /// Amount to pay, as a decimal string, e.g. "85000"
    #[erp(
        allow = "amount",
        reason = "the amount a person asks to pay a vendor; finance approves it against the vendor's invoice"
    )]
    pub amount: Decimal,
    /// Your own id for this request within the run. Reuse it when retrying.
    pub client_ref: String,
    /// Why the payment is needed. Shown to the reviewer.
    pub note: Option<String>,
}

/// The draft created.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaymentRequestDraft {
    /// Business number of the draft, e.g. PR-2026-0001.
    pub number: String,
    /// Always `draft`: a person in finance approves and pays it.
    pub status: String,
}

/// Create a DRAFT payment request to a vendor; a person in finance approves and pays it.
#[erp_tool(
    module = "finance",
    tier = "draft",
    scopes = ["finance:draft"],
    limit = "amount <= 10000000"
)]
pub async fn create_payment_request_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: PaymentArgs,
) -> Result<PaymentRequestDraft, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let sql = "SELECT blocked_for_payments FROM vendors WHERE code = $1 AND branch_id = $2";
    let blocked: Option<(i64,)> = in_branch(ctx, tx.conn(), sql, &args.vendor_code).await?;
    match blocked {
        None => return Err(ToolError::not_found("Vendor", &args.vendor_code)),
        Some((1,)) => {
            return Err(ToolError::rejected(format!(
                "Vendor {} is blocked for payments by finance.",
                args.vendor_code
            ))
            .next_step("Tell the user to contact finance; do not retry."));
        }
        Some(_) => {}
    }
    let (run, user) = documents::provenance(tx);
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO payment_requests (number, branch_id, vendor_code, amount, note, status, \
         drafted_by_agent_run, drafted_on_behalf_of) \
         VALUES ($1, $2, $3, $4, $5, 'draft', $6, $7) RETURNING id",
    )
    .bind(documents::placeholder_number(tx, &args.client_ref))
    .bind(ctx.branch_id())
    .bind(args.vendor_code.clone())
    .bind(args.amount.normalize().to_string())
    .bind(args.note.clone())
    .bind(run)
    .bind(user)
    .fetch_one(tx.conn())
    .await?;
    let number = documents::complete(ctx, tx, Draft::PaymentRequest, id, &args.vendor_code).await?;
    Ok(PaymentRequestDraft {
        number,
        status: "draft".into(),
    })
}
