//! The sentences of [`ToolError`](crate::ToolError)'s own constructors and of what a
//! failed call did not do. Plain text only: this file imports nothing, so the error type
//! can use it without importing the rest of `text/` (which builds `ToolError`s).

/// What a failed draft call did not do.
pub(crate) const NO_DRAFT_CREATED: &str = "No draft was created.";
/// What a failed read call did not do.
pub(crate) const NOTHING_CHANGED: &str = "Nothing was changed.";
/// The audit message of a read whose caller went away before it ended (never shown to a
/// model: nobody was answered).
#[cfg(feature = "runtime")]
pub(crate) const READ_DROPPED: &str =
    "The call was dropped before the read ended (the client went away); nothing was answered.";

/// `what` numbered `number` is not visible to the caller (the same text whether it does
/// not exist or belongs to another branch).
pub(crate) fn not_found(what: &str, number: &str) -> String {
    format!("{what} {number} was not found in your branch.")
}

/// What to do after a not-found error. It names no other tool: the server may have none
/// that searches.
pub(crate) const NOT_FOUND_NEXT_STEP: &str =
    "Check the number, or ask the user for it; do not guess another number.";

/// An internal failure, as the model is told it (the detail stays in the log and audit).
pub(crate) const INTERNAL_ERROR: &str =
    "The server could not complete this call because of an internal error.";

/// What to do after an internal failure.
pub(crate) const INTERNAL_NEXT_STEP: &str =
    "Try the same call again later; if it keeps failing, tell the user.";

/// What a model is told to do with a question a tool asks (see
/// [`ToolError::needs_input`](crate::ToolError::needs_input)).
pub(crate) const NEEDS_INPUT_NEXT_STEP: &str = "A person must decide this: ask the user the \
     question with the allowed answers, do not choose for them.";

/// A document a handler attached that cannot be sent (malformed, or too large).
pub(crate) fn attachment_refused(why: &str) -> String {
    format!("The document could not be attached: {why}.")
}

/// What to do after an attachment was refused.
pub(crate) const ATTACHMENT_NEXT_STEP: &str =
    "Ask for a smaller document (fewer warehouses, a shorter period).";
