//! [`Notification`]: what an approver is told, as the JSON body a webhook receives.
//!
//! It names the action (tool, why it needs approval, for whom, until when) and links to
//! the console's approvals page; it carries no argument values (the reviewer reads them
//! in the console, signed in).

use serde::{Deserialize, Serialize};

/// Event of a notification: an approval waits for a decision.
pub const APPROVAL_WAITING: &str = "approval.waiting";
/// Event of a notification: an approval expired without a decision.
pub const APPROVAL_EXPIRED: &str = "approval.expired";

/// A notification as delivered: the webhook's JSON body.
///
/// ```json
/// {"id":"approval-7-waiting","event":"approval.waiting","created_at":"2026-...Z",
///  "approval":{"id":7,"run_id":"run-...","tool":"finance_create_payment_request_draft",
///   "reason":"amount above 50000 needs a person's approval","requested_for":"u-manager",
///   "branch_code":"SBY-01","expires_at":"2026-...Z"},
///  "url":"https://erp.example/review/approvals#approval-7",
///  "text":"Approval 7 waits: finance_create_payment_request_draft for u-manager (SBY-01): ..."}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    /// The delivery id: the same for every attempt and every resend of one
    /// notification; a receiver deduplicates on it.
    pub id: String,
    /// [`APPROVAL_WAITING`] or [`APPROVAL_EXPIRED`].
    pub event: String,
    /// When the notification was recorded.
    pub created_at: String,
    /// The approval it is about.
    pub approval: ApprovalNotice,
    /// The console's approvals page, when the outbox knows the console's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// One line for a person (a chat relay can post it as is).
    pub text: String,
}

/// The approval a [`Notification`] is about: what a reviewer sees first in the console,
/// without the arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalNotice {
    /// The approval's id.
    pub id: i64,
    /// The run that proposed the action.
    pub run_id: String,
    /// The tool.
    pub tool: String,
    /// Why the policy asks for approval.
    pub reason: String,
    /// The person the run acts for (who may not approve it).
    pub requested_for: String,
    /// Their branch's business code.
    pub branch_code: String,
    /// Until when it can be decided.
    pub expires_at: String,
}

impl Notification {
    /// The notification of `event` about `approval`, linking to `console` (the review
    /// console's base URL, e.g. `https://erp.example/review`) if known.
    pub(crate) fn about(
        event: &str,
        approval: ApprovalNotice,
        console: Option<&str>,
        created_at: String,
    ) -> Self {
        let url = console.map(|c| {
            format!(
                "{}/approvals#approval-{}",
                c.trim_end_matches('/'),
                approval.id
            )
        });
        let what = format!(
            "{} for {} ({})",
            approval.tool, approval.requested_for, approval.branch_code
        );
        let mut text = if event == APPROVAL_EXPIRED {
            format!(
                "Approval {} expired undecided: {what}; the run has to propose it again",
                approval.id
            )
        } else {
            format!(
                "Approval {} waits: {what}: {}; decide by {}",
                approval.id, approval.reason, approval.expires_at
            )
        };
        if let Some(url) = &url {
            text.push_str(&format!(" {url}"));
        }
        let kind = if event == APPROVAL_EXPIRED {
            "expired"
        } else {
            "waiting"
        };
        Notification {
            id: format!("approval-{}-{kind}", approval.id),
            event: event.to_string(),
            created_at,
            approval,
            url,
            text,
        }
    }
}
