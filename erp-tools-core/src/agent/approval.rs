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
}

impl PendingAction {
    /// An approval of exactly this action by `approved_by` (a person authenticated by the
    /// application showing the pending action).
    pub fn approve(&self, approved_by: impl Into<String>) -> Approval {
        Approval::new(self.run_id.clone(), self.signature.clone(), approved_by)
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

    /// Whether this approval covers `signature` in run `run_id`.
    pub fn covers(&self, run_id: &str, signature: &str) -> bool {
        self.run_id == run_id && self.signature == signature
    }
}
