//! The final outcome a call's audit row is finished with.

use super::answer::Finished;
use crate::store::Final;

/// The final outcome of a call's audit row.
pub(super) fn final_row(finished: &Finished) -> Final {
    Final::new(
        finished.outcome.outcome,
        finished.audit_message.clone(),
        finished.outcome.document.clone(),
    )
    .with_result_tokens(finished.result_tokens)
}
