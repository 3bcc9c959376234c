//! Every sentence the agent side says to a model or writes into its audit trail: the
//! policy's rules as prompt instructions, and the details of the loop's new stops. (The
//! call pipeline's sentences are in the crate's `text/`.)

use super::budget::BudgetScope;
use crate::tool::input::InputRequest;

/// The first line of the policy's part of the system prompt.
pub(crate) const POLICY_HEADER: &str = "Rules the server enforces for this user. A call that \
     breaks one is refused before it runs, so do not propose it; tell the user instead.";

/// A tool the caller may not use, with the scopes it lacks.
pub(crate) fn prompt_unavailable(tool: &str, missing: &[&str]) -> String {
    format!(
        "- Not available to this user: {tool} (needs the permission {}). If the user asks \
         for it, say that they lack this permission.",
        missing.join(", ")
    )
}

/// A hard limit on a tool's argument (a sum when `path` goes through a list).
pub(crate) fn prompt_limit(tool: &str, path: &str, max: &str) -> String {
    if path.contains("[]") {
        format!(
            "- Limit: {tool}: the sum of {path} over all items is at most {max}. No approval \
             lifts it; split the work or ask the user."
        )
    } else {
        format!(
            "- Limit: {tool}: {path} is at most {max}. No approval lifts it; ask the user \
             what to do instead."
        )
    }
}

/// An approval rule: what needs a person's approval before it runs.
pub(crate) fn prompt_approval(tool: &str, reason: &str) -> String {
    format!(
        "- Needs a person's approval first: {tool}, when {reason}. Propose it as usual: the \
         run pauses until a person approves that exact call."
    )
}

/// The audit detail of a run stopped by the spend cap.
pub(crate) fn budget_exhausted(scope: &BudgetScope, used: u64, next: u64, limit: u64) -> String {
    format!(
        "budget_exhausted: the {scope} has used {used} of {limit} tokens; the next turn \
         (estimated at {next} tokens) would pass the limit"
    )
}

/// The audit detail of a run stopped for a person's answer.
pub(crate) fn awaiting_input(request: &InputRequest) -> String {
    format!(
        "awaiting_input: {} (choices: {})",
        request.question,
        request.choices.join(", ")
    )
}

/// The audit detail of a run resumed with an answer.
pub(crate) fn input_given(key: &str, answer: &str, by: &str) -> String {
    format!("answer to {key}: {answer} (given by {by})")
}

/// Why a run pauses again after its approval: the draft would create another document.
pub(crate) fn preview_changed() -> String {
    "The document this action would create differs from the preview that was approved (a \
     price or another value changed since); nothing was created. A person must approve \
     the new preview."
        .to_string()
}
