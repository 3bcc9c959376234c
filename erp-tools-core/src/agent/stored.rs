//! An approval as stored (`erp_approvals`): where it stands and what it approves.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::approval::Approval;

/// Where a stored approval stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a person's decision.
    Pending,
    /// A person approved it; the run can be resumed.
    Approved,
    /// A person rejected it; the action will not run.
    Rejected,
    /// Nobody decided in time; it can no longer be decided.
    Expired,
}

impl ApprovalStatus {
    /// `pending`, `approved`, `rejected` or `expired`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Rejected => "rejected",
            ApprovalStatus::Expired => "expired",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => ApprovalStatus::Pending,
            "approved" => ApprovalStatus::Approved,
            "rejected" => ApprovalStatus::Rejected,
            "expired" => ApprovalStatus::Expired,
            _ => return None,
        })
    }
}

/// An action waiting for (or given) a person's decision, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredApproval {
    /// The approval's id (what a reviewer approves, what a resume names).
    pub id: i64,
    /// The run that proposed the action.
    pub run_id: String,
    /// The proposed call's id.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// The arguments, normalised (as they will be executed).
    pub arguments: Value,
    /// The action signature the approval binds to.
    pub signature: String,
    /// Why the policy asks for approval.
    pub reason: String,
    /// The hard limits that apply to the tool (approval never lifts them), e.g.
    /// `amount ≤ 10000000 (tool)`.
    pub limits: Option<String>,
    /// The person the run acts for (who may not approve it).
    pub user_id: String,
    /// Their branch.
    pub branch_id: i64,
    /// Their branch's business code.
    pub branch_code: String,
    /// Where it stands (`Expired` when a pending one is past `expires_at`).
    pub status: ApprovalStatus,
    /// When the run paused.
    pub created_at: String,
    /// When a pending approval can no longer be decided.
    pub expires_at: String,
    /// Who approved or rejected it.
    pub decided_by: Option<String>,
    /// When.
    pub decided_at: Option<String>,
    /// The reviewer's note (why, for a rejection).
    pub note: Option<String>,
    /// When a run first resumed from it.
    pub resumed_at: Option<String>,
    /// How many times a run resumed from it (more than once only when resumes ran at
    /// once: a later resume is refused).
    pub resume_count: i64,
    /// How the last resumed run ended (`done`, `awaiting_approval`, ...).
    pub resume_status: Option<String>,
    /// What the action would create, computed before the run paused (see
    /// [`PendingAction::preview`](super::PendingAction::preview)); the approval binds to
    /// it.
    pub preview: Option<crate::runtime::Preview>,
}

impl StoredApproval {
    /// The [`Approval`] this decision grants: exactly this signature in this run.
    /// `None` unless it was approved.
    pub fn approval(&self) -> Option<Approval> {
        if self.status != ApprovalStatus::Approved {
            return None;
        }
        let mut approval = Approval::new(
            self.run_id.clone(),
            self.signature.clone(),
            self.decided_by.clone().unwrap_or_default(),
        );
        approval.approved_at = self
            .decided_at
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&chrono::Utc));
        approval.note = self.note.clone();
        approval.preview_digest = self.preview.as_ref().map(|p| p.digest.clone());
        Some(approval)
    }

    pub(super) fn seen_at(mut self, now: &str) -> Self {
        if self.status == ApprovalStatus::Pending && self.expires_at.as_str() <= now {
            self.status = ApprovalStatus::Expired;
        }
        self
    }
}
