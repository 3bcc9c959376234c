//! Human approvals, bound to one exact action.
//!
//! An [`Approval`] names the [signature](super::action_signature) of the action a person
//! approved, and the run it belongs to. Changing any argument changes the signature, so
//! the approval no longer applies and the policy asks again. An approval is an extra layer
//! *inside* the hard limits: it never lifts one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An action the policy wants a person to approve before it runs. Nothing has been
/// executed when a run stops with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingAction {
    /// The run that proposed the action.
    pub run_id: String,
    /// The id of the proposed call.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// The arguments, normalised (as they would be executed).
    pub arguments: Value,
    /// The action signature an approval must name.
    pub signature: String,
    /// Why the policy asks for approval, for the person reviewing it.
    pub reason: String,
    /// What the action would create (a draft tool's rolled-back run, or a remote draft's
    /// preview hook), computed before the run paused; an approval binds to it. `None`
    /// for a read tool, or when waiting for an answer rather than an approval.
    #[serde(default)]
    pub preview: Option<crate::runtime::Preview>,
}

impl PendingAction {
    /// An approval of exactly this action by `approved_by` (a person authenticated by the
    /// application showing the pending action).
    pub fn approve(&self, approved_by: impl Into<String>) -> Approval {
        let mut approval = Approval::new(self.run_id.clone(), self.signature.clone(), approved_by);
        approval.preview_digest = self.preview.as_ref().map(|p| p.digest.clone());
        approval
    }
}

/// A person's approval of one exact action in one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// The run the approval is for; approvals of other runs are ignored.
    pub run_id: String,
    /// The approved action's signature.
    pub signature: String,
    /// Who approved it (from the approving person's authenticated session).
    pub approved_by: String,
    /// When it was approved.
    pub approved_at: Option<DateTime<Utc>>,
    /// The approver's note.
    pub note: Option<String>,
    /// The digest of the preview the person saw ([`Preview::digest`]): the draft runs
    /// only if it creates that same document; otherwise nothing is created and the run
    /// pauses again with the new preview. `None` binds to the signature alone.
    ///
    /// [`Preview::digest`]: crate::Preview::digest
    #[serde(default)]
    pub preview_digest: Option<String>,
}

impl Approval {
    /// An approval of the action with `signature` in run `run_id`.
    pub fn new(
        run_id: impl Into<String>,
        signature: impl Into<String>,
        approved_by: impl Into<String>,
    ) -> Self {
        Approval {
            run_id: run_id.into(),
            signature: signature.into(),
            approved_by: approved_by.into(),
            approved_at: None,
            note: None,
            preview_digest: None,
        }
    }

    /// Records when the approval was given.
    pub fn at(mut self, time: DateTime<Utc>) -> Self {
        self.approved_at = Some(time);
        self
    }

    /// Adds the approver's note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// Binds the approval to the preview with `digest` (see the field `preview_digest`).
    pub fn bound_to(mut self, digest: impl Into<String>) -> Self {
        self.preview_digest = Some(digest.into());
        self
    }

    /// Whether this approval covers `signature` in run `run_id`.
    pub fn covers(&self, run_id: &str, signature: &str) -> bool {
        self.run_id == run_id && self.signature == signature
    }
}
