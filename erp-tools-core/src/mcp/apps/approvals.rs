//! [`Approvals`]: the approval queue the approval card decides in, and what runs after an
//! approval.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::agent::{ApprovalQueue, StoredApproval};

pub(super) type Hook = Arc<
    dyn Fn(StoredApproval) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>>
        + Send
        + Sync,
>;

/// The approval queue the card decides in, and what runs after an approval.
#[derive(Clone)]
pub(crate) struct Approvals {
    pub(super) queue: ApprovalQueue,
    pub(super) on_approved: Option<Hook>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("on_approved", &self.on_approved.is_some())
            .finish_non_exhaustive()
    }
}
